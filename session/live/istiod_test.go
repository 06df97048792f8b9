package live

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeIstiodDebug serves /debug/clusterz and /debug/networkz; status is
// what it says of cluster2.
func fakeIstiodDebug(t *testing.T, status *atomic.Value) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/debug/clusterz":
			_, _ = w.Write([]byte(`[{"id":"cluster1","syncStatus":"synced"},{"id":"cluster2","secretName":"istio-system/istio-remote-secret-cluster2","syncStatus":"` + status.Load().(string) + `"}]`))
		case "/debug/networkz":
			_, _ = w.Write([]byte(`[]`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestFeedPollsIstiod: the feed reads istiod's debug view on its poll
// interval and follows its changes; an address given without a cluster is
// named after the first cluster; an unreachable one is left out.
func TestFeedPollsIstiod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var status atomic.Value
	status.Store("synced")
	addr := fakeIstiodDebug(t, &status)
	s, _ := openDemo(t, ctx, Options{IstiodPoll: 20 * time.Millisecond,
		IstiodDebug: []Target{{Address: addr}, {Cluster: "cluster2", Address: "127.0.0.1:1"}}})
	f := s.Feed(ctx, "delta")
	defer f.Close()
	cluster2 := func() string {
		vs := f.Istiod()
		if len(vs) != 1 || vs[0].ControlPlane != "cluster1" || len(vs[0].Clusters) != 2 {
			return ""
		}
		return vs[0].Clusters[1].SyncStatus
	}
	waitFor(t, ctx, "istiod's view", func() bool { return cluster2() == "synced" })
	status.Store("timeout")
	waitFor(t, ctx, "istiod's view to follow", func() bool { return cluster2() == "timeout" })

	reads := s.IstiodViews(ctx, s.Registry().Snapshot())
	if len(reads) != 2 || reads[0].Err != nil || reads[1].Err == nil || reads[1].ControlPlane != "cluster2" || reads[1].Address != "127.0.0.1:1" {
		t.Fatalf("reads %+v", reads)
	}
}
