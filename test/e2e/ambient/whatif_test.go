package ambient

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/test/e2e/e2eutil"
)

// TestWhatIfGlobalLabelRemoved: the what-if of cluster2's helloworld losing
// its istio.io/global label, computed on the ambient lab as it is: its
// before is what each istiod sends its ztunnels now, and once the label is
// really removed, what they send is its after — from each ztunnel view.
func TestWhatIfGlobalLabelRemoved(t *testing.T) {
	m := startMesh(t)
	ctx := context.Background()
	const host = "helloworld.ambient.svc.cluster.local"
	for _, z := range m.ztunnels {
		eventually(t, 30*time.Second, func() string { why, _ := m.agree(z, helloKey); return why })
	}
	svc := e2eutil.WithoutLabel(e2eutil.LiveObject(t, theLab.Cluster("cluster2").RESTConfig(), e2eutil.Services, "Service", lab.AmbientNamespace, "helloworld"), lab.GlobalLabel)
	w, err := m.reg.WhatIf([]collector.Change{{Cluster: "cluster2", Object: svc, Origin: "svc.yaml:1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	views := map[string]bool{}
	for _, c := range whatif.Endpoints(w.Before, w.After) {
		if c.Service == host && c.Proxy == "ztunnel" {
			views[c.Viewpoint] = true
		}
	}
	if !views["ztunnel@cluster1"] || !views["ztunnel@cluster2"] {
		t.Fatalf("the what-if predicts no change of helloworld for both ztunnel views: %v", views)
	}
	matches := func(snapOf func() *collector.WhatIf, after bool) func() string {
		return func() string {
			var why []string
			for _, z := range m.ztunnels {
				s := snapOf().Before
				if after {
					s = snapOf().After
				}
				p := plane.NewSet(s, nil).Of(z.cp).Ambient().Predict(host)
				if c := ambient.Compare(p, z.c.ServiceView(helloKey)); c.Verdict != ambient.Match {
					why = append(why, fmt.Sprintf("ztunnel@%s: %s %+v", z.cp, c.Verdict, c.Differences))
				}
			}
			return strings.Join(why, "; ")
		}
	}
	of := func() *collector.WhatIf { return w }
	if why := matches(of, false)(); why != "" {
		t.Fatalf("what-if's before: %s", why)
	}
	global := "true"
	t.Cleanup(func() {
		_ = theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.AmbientNamespace, "helloworld", lab.GlobalLabel, &global)
	})
	if err := theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.AmbientNamespace, "helloworld", lab.GlobalLabel, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, matches(of, true))
}
