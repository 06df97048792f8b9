package watch

import (
	"testing"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// LBFor resolves a rule's locality load balancing for a port and subset
// as istiod merges traffic policies: a port's portLevelSettings replace
// the rule's policy; a subset's fields override the rule's, all of them
// when the subset has settings for the port.
func TestDestinationRuleLBFor(t *testing.T) {
	dr := parseDestinationRule("c1", meshtest.IstioObject(t, `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: hw, namespace: sample}
spec:
  host: helloworld
  trafficPolicy:
    outlierDetection: {consecutive5xxErrors: 1}
    loadBalancer: {localityLbSetting: {failover: [{from: r1, to: r2}]}}
    portLevelSettings:
    - port: {number: 9000}
      loadBalancer: {simple: ROUND_ROBIN}
  subsets:
  - name: lb-only
    labels: {version: v1}
    trafficPolicy:
      loadBalancer: {localityLbSetting: {distribute: [{from: "r1/*", to: {"r1/*": 100}}]}}
  - name: port-level
    labels: {version: v2}
    trafficPolicy:
      portLevelSettings:
      - port: {number: 5000}
        tls: {mode: DISABLE}
  - name: zone-aware
    trafficPolicy:
      loadBalancer: {zoneAwareLbSetting: {}}
`))
	cases := []struct {
		port    uint32
		subset  string
		outlier bool
		what    string // "failover", "distribute", "none", "zone-aware"
	}{
		{5000, "", true, "failover"},
		{9000, "", false, "none"}, // the port's settings replace the whole policy
		{5000, "lb-only", true, "distribute"},
		{5000, "port-level", false, "none"}, // port-level subset settings override every field
		{5000, "missing", true, "failover"},
		{5000, "zone-aware", true, "zone-aware"},
	}
	for _, c := range cases {
		p := dr.LBFor(c.port, c.subset)
		what := "none"
		switch {
		case p.ZoneAware != nil:
			what = "zone-aware"
		case p.LocalityLb != nil && len(p.LocalityLb.Distribute) > 0:
			what = "distribute"
		case p.LocalityLb != nil && len(p.LocalityLb.Failover) > 0:
			what = "failover"
		}
		if p.OutlierDetection != c.outlier || what != c.what {
			t.Errorf("port %d subset %q: outlier %v %s, want %v %s", c.port, c.subset, p.OutlierDetection, what, c.outlier, c.what)
		}
	}
	var none *model.DestinationRule
	if p := none.LBFor(5000, ""); p.OutlierDetection || p.LocalityLb != nil {
		t.Fatal("no rule, no policy")
	}
}

// minHealthPercent travels with its outlierDetection: a subset's outlier
// detection replaces the rule's, minHealthPercent included.
func TestLBForMinHealthPercent(t *testing.T) {
	dr := parseDestinationRule("c1", meshtest.IstioObject(t, `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: hw, namespace: sample}
spec:
  host: helloworld
  trafficPolicy:
    outlierDetection: {consecutive5xxErrors: 1, minHealthPercent: 30}
  subsets:
  - name: strict
    trafficPolicy:
      outlierDetection: {consecutive5xxErrors: 1}
`))
	if p := dr.LBFor(5000, ""); !p.OutlierDetection || p.MinHealthPercent != 30 {
		t.Fatalf("rule: %+v", p)
	}
	if p := dr.LBFor(5000, "strict"); !p.OutlierDetection || p.MinHealthPercent != 0 {
		t.Fatalf("subset: %+v", p)
	}
}
