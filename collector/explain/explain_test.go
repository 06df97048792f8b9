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
	verdict, diffs := compare(pred, act, true)
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
	verdict, diffs := compare(pred, attribute(s, hello, la, v, pred), true)
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
	if v, _ := compare(pred, nil, false); v != Pending {
		t.Errorf("no EDS yet: verdict %s, want pending", v)
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
