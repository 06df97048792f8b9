package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestMultiPrimary: the second istiod (primary of cluster2, reading cluster1
// through a remote secret held in cluster2) sends the same proxy the same
// split-horizon EDS as the first, and meshscope's prediction matches both.
func TestMultiPrimary(t *testing.T) {
	if len(theLab.Istiods()) < 2 {
		t.Fatal("the e2e lab runs multi-primary: two istiods expected")
	}
	reg := startRegistry(t)
	want := map[string]string{
		"cluster1/network1": seedEDSNetwork1,
		"cluster2/network2": seedEDSNetwork2,
	}
	for i, is := range theLab.Istiods() {
		v, err := is.View(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		cz := v.Clusters
		if len(cz) != 2 || cz[0].ID != is.Cluster {
			t.Errorf("istiod %d clusterz %+v: want its own cluster first, then the other", i, cz)
		}
		for _, vp := range []xdsclient.Viewpoint{{Cluster: "cluster1", Network: "network1"}, {Cluster: "cluster2", Network: "network2"}} {
			vp.ControlPlane = is.Cluster
			p := runProbe(t, xdsclient.Options{Viewpoint: vp, ControlPlane: is.Cluster, EDSNames: []string{helloworldEDS},
				Transport: xdsclient.TransportConfig{Address: is.XDSAddress()}})
			c := p.c
			key := strings.TrimSuffix(vp.String(), "@"+is.Cluster)
			eventually(t, 20*time.Second, func() string {
				la, ok := c.LoadAssignment(helloworldEDS)
				if !ok {
					return vp.String() + ": no EDS yet"
				}
				if got := strings.Join(p.eds(helloworldEDS), ","); got != want[key] {
					return fmt.Sprintf("%s: %s, want %s", vp, got, want[key])
				}
				if v := explain.Explain(reg.Snapshot(), "helloworld.sample.svc.cluster.local", 5000, vp, is.Cluster, &la); v.Verdict != explain.Match {
					return fmt.Sprintf("%s: verdict %s %+v", vp, v.Verdict, v.Differences)
				}
				return ""
			})
		}
	}
}
