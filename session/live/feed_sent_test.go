package live

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestFeedSent: what the feed's streams hold, as doctor compares it — the
// EDS of every cluster each stream's CDS names (a DestinationRule's subset
// clusters among them), from a control plane given by address only and so
// named after the first context cluster — matches the demo's prediction;
// the CDS cluster of an EDS name carries the load balancing.
func TestFeedSent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, _ := openDemo(t, ctx, Options{})
	s.controlPlanes = []Target{{Address: s.ControlPlanes()[0].Address}}
	f := s.Feed(ctx, xdsclient.ModeDelta)
	defer f.Close()
	const subset = "outbound|9080|v2|reviews.bookinfo.svc.cluster.local"
	var sent []explain.Sent
	waitFor(t, ctx, "both streams' EDS, subsets included", func() bool {
		sent = f.Sent()
		for _, x := range sent {
			if _, ok := x.EDS[subset]; !ok || len(x.EDS) < len(x.Clusters) {
				return false
			}
		}
		return len(sent) == 2
	})
	for _, x := range sent {
		if x.ControlPlane != "cluster1" || x.Error != "" || !slices.Contains(x.Clusters, helloEDS) {
			t.Errorf("%s: control plane %q, error %q, %d clusters", x.Viewpoint, x.ControlPlane, x.Error, len(x.Clusters))
		}
	}
	snap := s.Registry().Snapshot()
	for _, p := range explain.Diagnose(snap, explain.Inputs{Sent: sent}) {
		if p.Kind == "xds-differs" || p.Kind == "stale-endpoint" || p.Kind == "istiod-unreachable" {
			t.Errorf("the demo's control plane sends what is predicted: %s", p.Sentence)
		}
	}
	cl, ok := f.Cluster(sent[0].Viewpoint.String(), helloEDS)
	if !ok || cl.LBPolicy != "LEAST_REQUEST" || cl.PanicThreshold != 0 {
		t.Errorf("CDS cluster %s: %+v %v", helloEDS, cl, ok)
	}
	if _, ok := f.Cluster(sent[0].Viewpoint.String(), "outbound|1||nowhere"); ok {
		t.Error("a cluster istiod never sent")
	}
}

// TestFeedSentNoStream: a viewpoint whose stream cannot start is in Sent
// with why, and doctor says it cannot compare; one still connecting is left
// out.
func TestFeedSentNoStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, snap := openDemo(t, ctx, Options{})
	fake := &fakeForwards{addr: s.ControlPlanes()[0].Address}
	s.controlPlanes, s.retry = nil, time.Hour
	s.fwd = newForwarder(ctx, time.Hour, fake.start)
	f := newFeed(ctx, s, xdsclient.ModeDelta)
	defer f.Close()
	updates := make(chan *model.Snapshot, 1)
	updates <- snap
	f.start(updates, func() {})
	waitFor(t, ctx, "both viewpoints without a stream", func() bool { return len(f.Sent()) == 2 })
	for _, x := range f.Sent() {
		if !strings.HasPrefix(x.Error, "no stream: ") || x.ControlPlane != "cluster1" || len(x.EDS) != 0 {
			t.Errorf("%s: %+v", x.Viewpoint, x)
		}
	}
	found := false
	for _, p := range explain.Diagnose(snap, explain.Inputs{Sent: f.Sent()}) {
		found = found || (p.Kind == "istiod-unreachable" && strings.Contains(p.Sentence, "istiod not ready"))
	}
	if !found {
		t.Error("doctor should say it cannot compare what istiod sends")
	}
}
