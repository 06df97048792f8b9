package istiod

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFetchView reads istiod's debug JSON (the shapes of /debug/clusterz
// and /debug/networkz) and turns anything else into an error naming the
// URL.
func TestFetchView(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/debug/clusterz":
			_, _ = w.Write([]byte(`[{"id":"cluster1","secretName":"","syncStatus":"synced"},{"id":"cluster2","secretName":"istio-system/istio-remote-secret-cluster2","syncStatus":"timeout"}]`))
		case "/debug/networkz":
			_, _ = w.Write([]byte(`[{"Network":"network2","Cluster":"cluster2","Addr":"192.168.60.9","Port":15443,"HBONEPort":0}]`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	v, err := FetchView(context.Background(), "cluster1", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	if v.ControlPlane != "cluster1" || len(v.Clusters) != 2 || v.Clusters[1].SyncStatus != "timeout" ||
		len(v.Gateways) != 1 || v.Gateways[0].Addr != "192.168.60.9" || v.Gateways[0].Port != 15443 {
		t.Fatalf("view %+v", v)
	}

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) }))
	defer bad.Close()
	if _, err := FetchView(context.Background(), "cluster1", bad.URL); err == nil || !strings.Contains(err.Error(), "/debug/clusterz") || !strings.Contains(err.Error(), "not the JSON") {
		t.Fatalf("not JSON: %v", err)
	}
}
