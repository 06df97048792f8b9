package demo

import (
	"testing"
	"time"

	"github.com/meshscope/meshscope/xdsclient"
)

// The demo's clusters read like istiod's in the proxy-config view: outbound
// clusters are EDS with auto mTLS ("auto"), and the default clusters the
// listeners point at are there.
func TestDemoClustersLikeIstiod(t *testing.T) {
	d, ctx := startSettled(t, false, 10*time.Second)
	pc := proxyConfig(t, ctx, d, xdsclient.ModeDelta, xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"})
	got := map[string]xdsclient.Cluster{}
	for _, c := range pc.Clusters {
		got[c.Name] = c
	}
	for name, want := range map[string]string{
		blackHoleCluster:          "STATIC none",
		passthroughCluster:        "ORIGINAL_DST none",
		inboundPassthroughCluster: "ORIGINAL_DST none",
		"outbound|5000||helloworld.sample.svc.cluster.local": "EDS auto",
	} {
		c, ok := got[name]
		if !ok || c.Type+" "+c.TLSMode != want {
			t.Errorf("%s: %+v, want %s", name, c, want)
		}
	}
}
