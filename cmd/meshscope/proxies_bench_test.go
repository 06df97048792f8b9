package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/session/istiod"
)

// synczServer is a loopback istiod debug endpoint whose /debug/syncz lists
// n proxies (every tenth with an unacknowledged EDS push).
func synczServer(tb testing.TB, cluster string, n int) *httptest.Server {
	at := time.Now().Add(-time.Minute)
	var st []istiod.SyncStatus
	for i := 0; i < n; i++ {
		res := map[string]istiod.ResourceStatus{}
		for _, t := range []string{istiod.TypeCDS, istiod.TypeLDS, istiod.TypeEDS, istiod.TypeRDS} {
			res[t] = istiod.ResourceStatus{Sent: "n1", Acked: "n1", SentTime: at}
		}
		if i%10 == 0 {
			res[istiod.TypeEDS] = istiod.ResourceStatus{Sent: "n2", Acked: "n1", SentTime: at}
		}
		st = append(st, istiod.SyncStatus{Proxy: fmt.Sprintf("app%04d-7c9d8b5f4-x2k4q.ns%02d", i, i%40), ProxyType: "sidecar",
			ClusterID: cluster, IstioVersion: "1.29.1", Resources: res})
	}
	body, err := json.Marshal(st)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/syncz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// BenchmarkProxiesCommand: `meshscope proxies --demo` end to end (the demo
// mesh started and settled, both syncz read over loopback HTTP, the fleet
// joined and printed) with 1,000 connected proxies from two istiods
// beside the demo's ~110 pods. Target: under 2 s.
func BenchmarkProxiesCommand(b *testing.B) {
	s1, s2 := synczServer(b, "cluster1", 500), synczServer(b, "cluster2", 500)
	addr := "cluster1=" + strings.TrimPrefix(s1.URL, "http://") + ",cluster2=" + strings.TrimPrefix(s2.URL, "http://")
	for b.Loop() {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&bytes.Buffer{})
		root.SetArgs([]string{"proxies", "--demo", "--istiod-debug-address", addr, "--log-file", "-"})
		if err := root.Execute(); err != nil {
			b.Fatal(err)
		}
		if rows := strings.Count(out.String(), "\n"); rows < 1100 {
			b.Fatalf("%d lines, want 1,000 connected proxies and the demo's", rows)
		}
	}
	if per := b.Elapsed() / time.Duration(b.N); per > 2*time.Second {
		b.Errorf("meshscope proxies takes %s, target < 2s", per)
	}
}
