package explain

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

const hello = meshtest.Hello

// seed is the lab mesh (meshtest.Lab).
func seed() *model.Snapshot { return meshtest.Lab() }

// actualSeed is what the real istiod sends a network1 sidecar on the lab.
func actualSeed() xdsclient.LoadAssignment {
	return xdsclient.LoadAssignment{Cluster: "outbound|5000||" + hello, Endpoints: []xdsclient.Endpoint{
		{Address: "10.44.0.13", Port: 5000, Weight: 1, LocalityWeight: 2, Health: "HEALTHY", TLSMode: "istio",
			Workload: xdsclient.Workload{Name: "helloworld-v1", Namespace: "sample", Service: "helloworld", Revision: "v1", Cluster: "cluster1"}},
		{Address: "192.168.60.9", Port: 15443, Weight: 1, LocalityWeight: 2, Health: "UNKNOWN", TLSMode: "istio", Workload: xdsclient.Workload{Cluster: "cluster2"}},
	}}
}

func hasProblem(ps []model.Problem, kind, text string) bool {
	for _, p := range ps {
		if string(p.Kind) == kind && strings.Contains(p.Sentence, text) {
			return true
		}
	}
	return false
}

// twoZones: the cluster2 pods of helloworld sit in two zones.
func twoZones() *model.Snapshot {
	s := seed()
	sic := s.Services[0].Clusters["cluster2"]
	sic.Endpoints[0].Locality = "region2/zone-b/"
	e := sic.Endpoints[0]
	e.Address, e.Pod, e.Locality = "10.144.0.16", "helloworld-v2-c", "region2/zone-c/"
	sic.Endpoints = append(sic.Endpoints, e)
	s.Services[0].Clusters["cluster1"].Endpoints[0].Locality = "region1/zone-a/"
	return s
}

// What the real istiod sends a network1 sidecar for twoZones (seen in the
// lab): the gateway once per zone.
func actualTwoZones() xdsclient.LoadAssignment {
	loc := func(r, z string) xdsclient.Locality { return xdsclient.Locality{Region: r, Zone: z} }
	return xdsclient.LoadAssignment{Cluster: "outbound|5000||" + hello, Endpoints: []xdsclient.Endpoint{
		{Address: "10.44.0.13", Port: 5000, Weight: 1, LocalityWeight: 1, Locality: loc("region1", "zone-a"), Health: "HEALTHY", TLSMode: "istio",
			Workload: xdsclient.Workload{Name: "helloworld-v1", Cluster: "cluster1"}},
		{Address: "192.168.60.9", Port: 15443, Weight: 1, LocalityWeight: 1, Locality: loc("region2", "zone-b"), Health: "UNKNOWN", TLSMode: "istio", Workload: xdsclient.Workload{Cluster: "cluster2"}},
		{Address: "192.168.60.9", Port: 15443, Weight: 1, LocalityWeight: 1, Locality: loc("region2", "zone-c"), Health: "UNKNOWN", TLSMode: "istio", Workload: xdsclient.Workload{Cluster: "cluster2"}},
	}}
}

// TestExplainActual: what istiod sent a network1 sidecar, attributed and
// compared with the prediction.
func TestExplainActual(t *testing.T) {
	kindsOf := func(v View) map[DiffKind]int {
		kinds := map[DiffKind]int{}
		for _, d := range v.Differences {
			kinds[d.Kind]++
		}
		return kinds
	}
	for _, c := range []struct {
		name string
		snap func() *model.Snapshot
		// sent is what istiod sent; cluster its CDS cluster (nil: none).
		sent    func() xdsclient.LoadAssignment
		cluster *xdsclient.Cluster
		verdict Verdict
		// kinds are the differences by kind (every one, when verdict is a mismatch).
		kinds map[DiffKind]int
		check func(t *testing.T, v View)
	}{
		{name: "lab as sent", snap: seed, sent: actualSeed, verdict: Match,
			check: func(t *testing.T, v View) {
				if a := v.Actual[0]; a.Kind != horizon.Local || a.Network != "network1" || a.Pod != "helloworld-v1" {
					t.Errorf("pod endpoint attributed as %+v", a)
				}
				if a := v.Actual[1]; a.Kind != horizon.Gateway || a.Network != "network2" || len(a.StandsFor) != 1 || a.StandsFor[0].Pod != "helloworld-v2" {
					t.Errorf("gateway endpoint attributed as %+v", a)
				}
			}},
		{name: "missing, unexpected, weight", snap: seed, verdict: Mismatch,
			sent: func() xdsclient.LoadAssignment {
				la := actualSeed()
				la.Endpoints[1].Weight = 3 // istiod counts 3 pods behind the gateway
				la.Endpoints = append(la.Endpoints, xdsclient.Endpoint{Address: "10.99.0.1", Port: 5000, Weight: 1, Health: "HEALTHY",
					Workload: xdsclient.Workload{Name: "ghost", Cluster: "cluster9"}}) // unknown cluster
				la.Endpoints = la.Endpoints[1:] // local pod missing
				return la
			},
			kinds: map[DiffKind]int{DiffMissing: 1, DiffUnexpected: 1, DiffWeight: 1},
			check: func(t *testing.T, v View) {
				sentences := map[DiffKind]string{}
				for _, d := range v.Differences {
					sentences[d.Kind] = d.Sentence
				}
				if !strings.Contains(sentences[DiffWeight], "weight 3, predicted 1") {
					t.Errorf("weight sentence: %s", sentences[DiffWeight])
				}
				if !strings.Contains(sentences[DiffUnexpected], "cluster9") {
					t.Errorf("unexpected sentence should name the cluster: %s", sentences[DiffUnexpected])
				}
			}},
		{name: "two zones as sent", snap: twoZones, sent: actualTwoZones, verdict: Match,
			cluster: &xdsclient.Cluster{Name: "outbound|5000||" + hello, LBPolicy: "LEAST_REQUEST", PanicThreshold: 0},
			check: func(t *testing.T, v View) {
				if v.LBFrom != lbFromCDS {
					t.Errorf("LB from %s", v.LBFrom)
				}
				// Each gateway copy stands for its own zone's pod.
				if len(v.Actual[1].StandsFor) != 1 || v.Actual[1].StandsFor[0].Pod != "helloworld-v2" || v.Actual[2].StandsFor[0].Pod != "helloworld-v2-c" {
					t.Errorf("stands for: %+v / %+v", v.Actual[1].StandsFor, v.Actual[2].StandsFor)
				}
				if !v.Actual[2].Shadowed || v.Actual[1].Share != 0.5 || v.Actual[2].Intended < 0.33 {
					t.Errorf("effects: %+v", v.Actual)
				}
				want := []NetworkSplit{{Network: "network1", Share: 0.5, Intended: 0.3333, Predicted: 0.5}, {Network: "network2", Share: 0.5, Intended: 0.6667, Predicted: 0.5}}
				if fmt.Sprint(v.Split) != fmt.Sprint(want) {
					t.Errorf("split %+v, want %+v", v.Split, want)
				}
			}},
		// istiod merging the copies (the proposed fix) is a difference:
		// one entry is missing and the other has another weight.
		{name: "two zones, gateway merged", snap: twoZones, verdict: Mismatch,
			cluster: &xdsclient.Cluster{Name: "outbound|5000||" + hello, LBPolicy: "LEAST_REQUEST", PanicThreshold: 0},
			sent: func() xdsclient.LoadAssignment {
				fixed := actualTwoZones()
				fixed.Endpoints[1].Weight, fixed.Endpoints[1].LocalityWeight = 2, 2
				fixed.Endpoints = fixed.Endpoints[:2]
				return fixed
			},
			kinds: map[DiffKind]int{DiffMissing: 1, DiffWeight: 1}},
		{name: "group weight, priority and LB", snap: twoZones, verdict: Mismatch,
			cluster: &xdsclient.Cluster{LocalityWeighted: true, PanicThreshold: 0}, // with locality weighting on
			sent: func() xdsclient.LoadAssignment {
				la := actualTwoZones()
				la.Endpoints[0].LocalityWeight = 5                        // istiod distributes localities
				la.Endpoints[1].Priority, la.Endpoints[2].Priority = 1, 1 // and fails over
				return la
			},
			kinds: map[DiffKind]int{DiffLocalityWeight: 1, DiffPriority: 2, DiffLB: 1},
			check: func(t *testing.T, v View) {
				// Priority 0 holds only the local pod: it gets everything.
				if v.Actual[0].Share != 1 || v.Actual[1].Share != 0 {
					t.Errorf("effects %+v", v.Actual)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			la := c.sent()
			v := ExplainWith(plane.NewSet(c.snap(), nil), hello, 5000, xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}, "cluster1", &la, Extra{Cluster: c.cluster})
			if v.Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s: %+v", v.Verdict, c.verdict, v.Differences)
			}
			if got := kindsOf(v); fmt.Sprint(got) != fmt.Sprint(c.kinds) && (len(got) > 0 || len(c.kinds) > 0) {
				t.Errorf("differences %v, want %v: %+v", got, c.kinds, v.Differences)
			}
			if c.check != nil {
				c.check(t, v)
			}
		})
	}
}

// Nothing sent yet: the verdict is pending.
func TestComparePending(t *testing.T) {
	s := seed()
	v := horizon.Proxy{Cluster: "cluster1", Network: "network1"}
	if got, _ := compare(horizon.Predict(s, hello, 5000, v), nil, false); got != Pending {
		t.Errorf("no EDS yet: verdict %s, want pending", got)
	}
	// attribute and compare, as Explain calls them: the lab as sent matches.
	pred := horizon.Predict(s, hello, 5000, v)
	if got, diffs := compare(pred, attribute(s, hello, actualSeed(), v, pred), true); got != Match || len(diffs) != 0 {
		t.Errorf("verdict %s, diffs %+v; want match", got, diffs)
	}
}
