package live

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
)

// synczServer serves /debug/syncz listing one proxy.
func synczServer(t *testing.T, proxy string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/syncz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`[{"proxy":"` + proxy + `","proxy_type":"sidecar","cluster_id":"x","istio_version":"1.31.0"}]`))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestSynczFromEveryPrimary: with no address given, each primary's syncz
// is read through a port-forward to its own istiod, found in its own kube
// context (here named unlike its cluster ID), and labelled with the
// primary's cluster ID; a primary whose forward fails is a read with that
// error; one known only through a remote secret has no context to forward
// through and is not read (the fleet names it missing).
func TestSynczFromEveryPrimary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap := meshtest.LabMultiPrimary(time.Now())
	snap.Clusters[1].Source.Name = "arn:aws:eks:eu-west-1:1:cluster/two"
	snap.Clusters[1].Sources[0].Name = snap.Clusters[1].Source.Name
	addrs := map[string]string{"cluster1": synczServer(t, "a.sample"), snap.Clusters[1].Source.Name: synczServer(t, "b.sample")}
	var mu sync.Mutex
	var asked []string
	s := &Session{fwd: newForwarder(ctx, time.Hour, func(_ context.Context, kctx, _ string, port int) (*istiod.PortForward, string, error) {
		mu.Lock()
		asked = append(asked, kctx)
		mu.Unlock()
		if port != istiodDebugPort {
			t.Errorf("forward to port %d", port)
		}
		if addrs[kctx] == "" {
			return nil, "", errors.New("refused")
		}
		return &istiod.PortForward{Address: addrs[kctx]}, kctx, nil
	})}
	reads := s.IstiodSyncz(ctx, snap)
	if len(reads) != 2 || reads[0].ControlPlane != "cluster1" || reads[1].ControlPlane != "cluster2" ||
		reads[0].Err != nil || reads[1].Err != nil ||
		len(reads[0].Statuses) != 1 || reads[0].Statuses[0].Proxy != "a.sample" ||
		len(reads[1].Statuses) != 1 || reads[1].Statuses[0].Proxy != "b.sample" {
		t.Fatalf("reads %+v (asked %v)", reads, asked)
	}

	// cluster2's forward fails (a fresh forwarder: failures are kept).
	delete(addrs, snap.Clusters[1].Source.Name)
	s.fwd = newForwarder(ctx, time.Hour, s.fwd.start)
	reads = s.IstiodSyncz(ctx, snap)
	if len(reads) != 2 || reads[0].Err != nil || reads[1].ControlPlane != "cluster2" || reads[1].Address != "" ||
		reads[1].Err == nil || !strings.Contains(reads[1].Err.Error(), "refused") || !strings.Contains(reads[1].Err.Error(), "cluster/two") {
		t.Fatalf("a failed forward: %+v", reads)
	}

	// cluster2 read only through cluster1's remote secret: not forwarded to.
	snap.Clusters[1].Source = model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster2", In: "cluster1", Key: "cluster2"}
	snap.Clusters[1].Sources = snap.Clusters[1].Sources[1:]
	if ps := primaryContexts(snap); len(ps) != 1 || ps[0] != (primary{cp: "cluster1", kctx: "cluster1"}) {
		t.Fatalf("primaries %+v", ps)
	}
	// No snapshot yet: the first context, as for xDS.
	if ps := primaryContexts(nil); len(ps) != 1 || ps[0] != (primary{}) {
		t.Fatalf("no snapshot: %+v", ps)
	}
}
