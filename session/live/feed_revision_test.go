package live

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestFeedStreamsEveryRevision: with no address given, a primary running
// a canary beside its default istiod gets a stream per network viewpoint
// for each revision — the canary's named VIEWPOINT@cluster1@canary and
// reached through a port-forward to the canary's own pod.
func TestFeedStreamsEveryRevision(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, snap := openDemo(t, ctx, Options{})
	addr := s.ControlPlanes()[0].Address
	var mu sync.Mutex
	var revs []string
	s.controlPlanes = nil
	s.fwd = newForwarder(ctx, time.Hour, func(_ context.Context, _, rev string, port int) (*istiod.PortForward, string, error) {
		mu.Lock()
		defer mu.Unlock()
		if port == istiodXDSPort && !slices.Contains(revs, rev) {
			revs = append(revs, rev)
		}
		return &istiod.PortForward{Address: addr, Pod: "istio-system/istiod-" + rev}, "cluster1", nil
	})

	canary := *snap
	canary.Clusters = slices.Clone(snap.Clusters)
	c1 := &canary.Clusters[0]
	c1.Istiods = append(slices.Clone(c1.Istiods), model.IstiodPod{Name: "istiod-canary-1", ClusterID: c1.ID, Revision: "canary", Ready: true})
	c1.PredictedRevision = "default"
	canary.RevisionPlanes = []model.RevisionPlane{{Cluster: c1.ID, Revision: "canary", MeshConfig: model.DefaultMeshConfig()}}

	f := newFeed(ctx, s, xdsclient.ModeDelta)
	defer f.Close()
	updates := make(chan *model.Snapshot, 1)
	updates <- &canary
	f.start(updates, func() {})

	want := []string{"cluster1/network1", "cluster1/network1@cluster1@canary", "cluster2/network2", "cluster2/network2@cluster1@canary"}
	waitFor(t, ctx, "a stream per network and revision", func() bool { return withEDS(f) == len(want) })
	var got []string
	for _, vp := range f.Viewpoints() {
		got = append(got, vp.String())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("viewpoints %v, want %v", got, want)
	}
	for _, st := range f.Status() {
		if st.Viewpoint == "cluster1/network1@cluster1@canary" && st.ControlPlane != "cluster1@canary" {
			t.Errorf("the canary's stream is named for %q", st.ControlPlane)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.Sort(revs); !slices.Equal(revs, []string{"", "canary"}) {
		t.Errorf("port-forwards asked for revisions %q, want the predicted one and the canary", revs)
	}
}
