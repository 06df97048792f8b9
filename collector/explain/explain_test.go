package explain

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/collector/horizon"
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

func TestAttributeAndMatch(t *testing.T) {
	s := seed()
	v := horizon.Proxy{Cluster: "cluster1", Network: "network1"}
	pred := horizon.Predict(s, hello, 5000, v)
	act := attribute(s, hello, actualSeed(), v, pred)
	if act[0].Kind != horizon.Local || act[0].Network != "network1" || act[0].Pod != "helloworld-v1" {
		t.Errorf("pod endpoint attributed as %+v", act[0])
	}
	if act[1].Kind != horizon.Gateway || act[1].Network != "network2" || len(act[1].StandsFor) != 1 || act[1].StandsFor[0].Pod != "helloworld-v2" {
		t.Errorf("gateway endpoint attributed as %+v", act[1])
	}
	verdict, diffs := Compare(pred, act, true)
	if verdict != Match || len(diffs) != 0 {
		t.Errorf("verdict %s, diffs %+v; want match", verdict, diffs)
	}
}

func TestCompareDifferences(t *testing.T) {
	s := seed()
	v := horizon.Proxy{Cluster: "cluster1", Network: "network1"}
	pred := horizon.Predict(s, hello, 5000, v)
	la := actualSeed()
	la.Endpoints[1].Weight = 3                                                                                                                                                                // istiod counts 3 pods behind the gateway
	la.Endpoints = append(la.Endpoints, xdsclient.Endpoint{Address: "10.99.0.1", Port: 5000, Weight: 1, Health: "HEALTHY", Workload: xdsclient.Workload{Name: "ghost", Cluster: "cluster9"}}) // unknown cluster
	la.Endpoints = la.Endpoints[1:]                                                                                                                                                           // local pod missing
	verdict, diffs := Compare(pred, attribute(s, hello, la, v, pred), true)
	if verdict != Mismatch {
		t.Fatalf("verdict %s, want mismatch", verdict)
	}
	kinds := map[DiffKind]string{}
	for _, d := range diffs {
		kinds[d.Kind] = d.Sentence
	}
	for _, k := range []DiffKind{DiffMissing, DiffUnexpected, DiffWeight} {
		if kinds[k] == "" {
			t.Errorf("no %s difference in %+v", k, diffs)
		}
	}
	if !strings.Contains(kinds[DiffWeight], "weight 3, predicted 1") {
		t.Errorf("weight sentence: %s", kinds[DiffWeight])
	}
	if !strings.Contains(kinds[DiffUnexpected], "cluster9") {
		t.Errorf("unexpected sentence should name the cluster: %s", kinds[DiffUnexpected])
	}
	if v, _ := Compare(pred, nil, false); v != Pending {
		t.Errorf("no EDS yet: verdict %s, want pending", v)
	}
}

func TestDiagnoseHealthyMesh(t *testing.T) {
	if ps := Diagnose(seed(), Inputs{}); len(ps) != 0 {
		t.Errorf("healthy seed mesh has problems: %+v", ps)
	}
}

func TestDiagnoseLeakDropSkew(t *testing.T) {
	// Scenario (3): network2's gateway Service loses its network label: no
	// gateway for network2, and its pod IP leaks to network1.
	s := seed()
	s.Gateways = s.Gateways[:1]
	delete(s.Services[1].Clusters["cluster2"].Labels, model.LabelNetwork)
	ps := Diagnose(s, Inputs{})
	if !HasErrors(ps) || !hasProblem(ps, "leak", "no gateway is known for network2") {
		t.Errorf("leak not found: %+v", ps)
	}

	// Scenario (4): the cluster2 pod loses its tlsMode label: dropped from network1.
	s = seed()
	s.Services[0].Clusters["cluster2"].Endpoints[0].TLSMode = ""
	ps = Diagnose(s, Inputs{})
	if !hasProblem(ps, "drop", "helloworld-v2") {
		t.Errorf("drop not found: %+v", ps)
	}

	// Three pods in cluster2: 75% of network1's traffic crosses networks,
	// which the endpoint counts explain: no problem (Diagnose reports skew
	// only beyond them).
	s = seed()
	sic := s.Services[0].Clusters["cluster2"]
	for _, ip := range []string{"10.144.0.20", "10.144.0.21"} {
		e := sic.Endpoints[0]
		e.Address = ip
		sic.Endpoints = append(sic.Endpoints, e)
	}
	ps = Diagnose(s, Inputs{})
	if hasProblem(ps, "skew", "") || HasErrors(ps) {
		t.Errorf("skew explained by endpoint counts reported: %+v", ps)
	}
}

func TestDiagnoseClustersAndGateways(t *testing.T) {
	s := seed()
	s.Clusters[1].State = model.StateError
	s.Clusters[1].Reason = "x509: certificate signed by unknown authority (TLS/CA mismatch)"
	s.Clusters[0].Warnings = []string{"cannot read remote secrets: forbidden"}
	s.Gateways = append(s.Gateways, model.Gateway{Network: "network3", Address: "gw.example.com", Port: 15443, Hostname: true})
	s.Gateways = s.Gateways[1:] // cluster1's gateway Service gives no gateway
	ps := Diagnose(s, Inputs{})
	for _, want := range [][2]string{
		{"remote-secret", "TLS/CA mismatch"},
		{"cluster-warning", "forbidden"},
		{"gateway-hostname", "gw.example.com"},
		{"gateway-no-address", "cluster1"},
	} {
		if !hasProblem(ps, want[0], want[1]) {
			t.Errorf("no %s problem mentioning %q in %+v", want[0], want[1], ps)
		}
	}
	if ps[0].Severity != Error {
		t.Errorf("errors must come first: %+v", ps[0])
	}
}

func hasProblem(ps []Problem, kind, text string) bool {
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

func TestDiagnoseDuplicateGateway(t *testing.T) {
	ps := Diagnose(twoZones(), Inputs{})
	if !HasErrors(ps) || !hasProblem(ps, "duplicate-gateway", "network2 gets 50 % of a network1 proxy's requests instead of 67 % (and network1 50 % instead of 33 %): Envoy keeps only the first of 2 gateway entries for 192.168.60.9:15443 (one per locality: region2/zone-b, region2/zone-c) — istio#56355") {
		t.Fatalf("duplicate gateway not reported: %+v", ps)
	}
	if !hasProblem(ps, "duplicate-gateway", "topology.istio.io/locality") {
		t.Errorf("no workaround: %+v", ps)
	}
	// One zone: one entry, no problem.
	if ps := Diagnose(seed(), Inputs{}); hasProblem(ps, "duplicate-gateway", "") {
		t.Errorf("one zone reported: %+v", ps)
	}
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

func TestExplainTwoZones(t *testing.T) {
	s := twoZones()
	la := actualTwoZones()
	cl := xdsclient.Cluster{Name: la.Cluster, LBPolicy: "LEAST_REQUEST", PanicThreshold: 0}
	v := ExplainWith(s, hello, 5000, xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}, "cluster1", &la, Extra{Cluster: &cl})
	if v.Verdict != Match || v.LBFrom != "cds" {
		t.Fatalf("verdict %s (%s): %+v", v.Verdict, v.LBFrom, v.Differences)
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

	// istiod merging the copies (the proposed fix) is a difference: one
	// entry is missing and the other has another weight.
	fixed := actualTwoZones()
	fixed.Endpoints[1].Weight, fixed.Endpoints[1].LocalityWeight = 2, 2
	fixed.Endpoints = fixed.Endpoints[:2]
	v = ExplainWith(s, hello, 5000, xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}, "cluster1", &fixed, Extra{Cluster: &cl})
	kinds := map[DiffKind]int{}
	for _, d := range v.Differences {
		kinds[d.Kind]++
	}
	if v.Verdict != Mismatch || kinds[DiffMissing] != 1 || kinds[DiffWeight] != 1 {
		t.Errorf("merged gateway: %s %+v", v.Verdict, v.Differences)
	}
}

func TestCompareGroupWeightPriorityAndLB(t *testing.T) {
	s := twoZones()
	la := actualTwoZones()
	la.Endpoints[0].LocalityWeight = 5                                 // istiod distributes localities
	la.Endpoints[1].Priority, la.Endpoints[2].Priority = 1, 1          // and fails over
	cl := xdsclient.Cluster{LocalityWeighted: true, PanicThreshold: 0} // with locality weighting on
	v := ExplainWith(s, hello, 5000, xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}, "cluster1", &la, Extra{Cluster: &cl})
	kinds := map[DiffKind]int{}
	for _, d := range v.Differences {
		kinds[d.Kind]++
	}
	if v.Verdict != Mismatch || kinds[DiffLocalityWeight] != 1 || kinds[DiffPriority] != 2 || kinds[DiffLB] != 1 {
		t.Errorf("%s %+v", v.Verdict, v.Differences)
	}
	// Priority 0 holds only the local pod: it gets everything.
	if v.Actual[0].Share != 1 || v.Actual[1].Share != 0 {
		t.Errorf("effects %+v", v.Actual)
	}
}
