package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/xdsclient"
)

// Two zones of cluster2 for TestLocalities: Nodes with the topology labels
// a cloud provider sets, and helloworld pods on them.
var localityNodes = map[string]map[string]string{
	"lab-zone-b-1": {lab.RegionLabel: "region2", lab.ZoneLabel: "zone-b"},
	"lab-zone-c-1": {lab.RegionLabel: "region2", lab.ZoneLabel: "zone-c"},
}

var localityPods = []lab.PodSpec{
	{Namespace: lab.SampleNamespace, Name: "helloworld-v2-54df5f84b-zb1", IP: "10.144.0.60", Node: "lab-zone-b-1", Labels: lab.AppLabels("helloworld", "v2", "network2")},
	{Namespace: lab.SampleNamespace, Name: "helloworld-v2-54df5f84b-zc1", IP: "10.144.0.61", Node: "lab-zone-c-1", Labels: lab.AppLabels("helloworld", "v2", "network2")},
	{Namespace: lab.SampleNamespace, Name: "helloworld-v2-54df5f84b-zc2", IP: "10.144.0.62", Node: "lab-zone-c-1", Labels: lab.AppLabels("helloworld", "v2", "network2")},
}

// TestLocalities: cluster2's helloworld pods sit in two zones —
// two pods on a zone-c node, one on a zone-b node, and the seed pod
// labelled topology.istio.io/locality=region2.zone-b (istiod's string
// "region2/zone-b", another group than the node's "region2/zone-b/" though
// Envoy sees the same locality). The real istiod then sends network2's
// gateway once per group; meshscope's actual and predicted EDS (groups,
// weights, locality weights, priorities) equal istiod's from a network1
// sidecar, a network2 sidecar and a proxy without NETWORK; the shares say
// what Envoy makes of it; doctor reports the split and exits 1.
func TestLocalities(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	vps, probes := threeViewProbes(t)

	pod2 := twoZones(t)

	// What istiod sends, group by group in its order ("" < "region2/zone-b"
	// < "region2/zone-b/" < "region2/zone-c/"), written with the locality
	// Envoy sees.
	gw9, gw113 := "192.168.60.9:15443", "192.168.60.113:15443"
	want := [3]string{
		"[- lw=1 p=0: 10.44.0.13:5000 w=1] [region2/zone-b lw=1 p=0: " + gw9 + " w=1] [region2/zone-b lw=1 p=0: " + gw9 + " w=1] [region2/zone-c lw=2 p=0: " + gw9 + " w=2]",
		"[- lw=1 p=0: " + gw113 + " w=1] [region2/zone-b lw=1 p=0: 10.144.0.15:5000 w=1] [region2/zone-b lw=1 p=0: 10.144.0.60:5000 w=1] [region2/zone-c lw=2 p=0: 10.144.0.61:5000 w=1, 10.144.0.62:5000 w=1]",
		"[- lw=1 p=0: " + gw113 + " w=1] [region2/zone-b lw=1 p=0: " + gw9 + " w=1] [region2/zone-b lw=1 p=0: " + gw9 + " w=1] [region2/zone-c lw=2 p=0: " + gw9 + " w=2]",
	}
	// Each network's share of the proxy's requests: what Envoy does (the
	// first gateway entry only) and what istiod's weights mean.
	wantSplit := [3]string{
		"network1 50% (20%), network2 50% (80%)",
		"network1 20% (20%), network2 80% (80%)",
		"network1 50% (20%), network2 50% (80%)",
	}
	wantPredictedSplit := [3]string{"network1 50%, network2 50%", "network1 20%, network2 80%", "network1 50%, network2 50%"}
	eventually(t, 30*time.Second, func() string {
		snap := reg.Snapshot()
		for i, vp := range vps {
			la, ok := probes[i].c.LoadAssignment(helloworldEDS)
			if !ok {
				return vp.String() + ": no EDS yet"
			}
			if got := actualGroups(la); got != want[i] {
				return fmt.Sprintf("%s: istiod sends\n%s\nwant\n%s", vp, got, want[i])
			}
			cl, ok := probes[i].c.Cluster(helloworldEDS)
			if !ok {
				return vp.String() + ": no CDS cluster " + helloworldEDS
			}
			v := explain.ExplainWith(plane.NewSet(snap, nil), "helloworld.sample.svc.cluster.local", 5000, vp, "cluster1", &la, explain.Extra{Cluster: &cl})
			if v.Verdict != explain.Match {
				return fmt.Sprintf("%s: verdict %s: %+v", vp, v.Verdict, v.Differences)
			}
			if got := predictedGroups(v); got != want[i] {
				return fmt.Sprintf("%s: meshscope predicts\n%s\nwant\n%s", vp, got, want[i])
			}
			if v.LBFrom != "cds" || v.LB.LocalityWeighted || v.LB.Policy != "LEAST_REQUEST" || v.LB.PanicThreshold != 0 {
				return fmt.Sprintf("%s: the cluster's load balancing from CDS: %s %+v", vp, v.LBFrom, v.LB)
			}
			if got := splitString(v.Split, false); got != wantSplit[i] {
				return fmt.Sprintf("%s: split %s, want %s", vp, got, wantSplit[i])
			}
			if got := splitString(v.Split, true); got != wantPredictedSplit[i] {
				return fmt.Sprintf("%s: predicted split %s", vp, got)
			}
		}
		return ""
	})

	// doctor, as a user runs it, reports the split and exits 1.
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, meshscopeBinary(t), "doctor", "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1",
		"--istiod-debug-address", theLab.Istiods()[0].HTTPURL(), "--log-file", "-")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("doctor: %v (want exit status 1)\n%s", err, out)
	}
	t.Logf("doctor:\n%s", out)
	for _, s := range []string{"duplicate-gateway", "network2 gets 50 % of a network1 proxy's requests instead of 80 %",
		"Envoy keeps only the first of 3 gateway entries for 192.168.60.9:15443", "istio#56355", "topology.istio.io/locality"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("doctor output lacks %q:\n%s", s, out)
		}
	}

	// The table shows LOCALITY and SHARE.
	cmd = exec.CommandContext(cctx, meshscopeBinary(t), "explain", "helloworld.sample", "--from", "cluster1/network1",
		"--kubeconfig", theLab.Kubeconfig, "--context", "cluster1", "--xds-address", theLab.Istiods()[0].XDSAddress(), "--log-file", "-")
	out, err = cmd.Output()
	t.Logf("explain:\n%s", out)
	if err != nil || !strings.Contains(string(out), "LOCALITY") || !strings.Contains(string(out), "SHARE") || !strings.Contains(string(out), "0% (40%) dup") ||
		!strings.Contains(string(out), "50% (20%)     gateway  "+pod2) ||
		!strings.Contains(string(out), "split: network1 50% (istiod's weights mean 20%), network2 50% (istiod's weights mean 80%)") {
		t.Errorf("explain table: %v", err)
	}

	// explain -o json carries locality, locality weight, priority and
	// share for actual and predicted endpoints; every view matches.
	cmd = exec.CommandContext(cctx, meshscopeBinary(t), "explain", "helloworld.sample", "--all-views", "-o", "json",
		"--kubeconfig", theLab.Kubeconfig, "--context", "cluster1", "--xds-address", theLab.Istiods()[0].XDSAddress(), "--log-file", "-")
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, out)
	}
	var res struct {
		Views []struct {
			Viewpoint struct{ Name string }
			Verdict   string
			Actual    []map[string]any
			Predicted []map[string]any
		}
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("explain JSON: %v\n%s", err, out)
	}
	if len(res.Views) != 3 {
		t.Fatalf("explain: %d views, want 3:\n%s", len(res.Views), out)
	}
	for _, v := range res.Views {
		if v.Verdict != "match" {
			t.Errorf("explain %s: %s", v.Viewpoint.Name, v.Verdict)
		}
		for _, list := range [][]map[string]any{v.Actual, v.Predicted} {
			var sum float64
			for _, e := range list {
				for _, k := range []string{"localityWeight", "priority", "share", "intendedShare"} {
					if _, ok := e[k]; !ok {
						t.Errorf("explain %s: %v lacks %s", v.Viewpoint.Name, e, k)
					}
				}
				// Only cluster1's pod (and network1's gateway for it) has no locality.
				if a := e["address"]; e["locality"] == nil && a != "10.44.0.13" && a != "192.168.60.113" {
					t.Errorf("explain %s: %v has no locality", v.Viewpoint.Name, e)
				}
				sh, _ := e["share"].(float64)
				sum += sh
			}
			if math.Abs(sum-1) > 0.001 {
				t.Errorf("explain %s: shares add up to %f", v.Viewpoint.Name, sum)
			}
		}
	}
}

// twoZones puts cluster2's helloworld in two zones, as TestLocalities
// describes, and undoes it when the test ends. It returns the seed pod's
// name (labelled region2.zone-b).
func twoZones(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	// Undo first, so that a failure half-way still leaves the shared lab
	// as it was: pods, then nodes, then the seed pod's label.
	pod2 := lab.HelloworldPod("cluster2")
	t.Cleanup(func() {
		for _, p := range localityPods {
			if err := theLab.RemovePod(ctx, "cluster2", p.Namespace, p.Name); err != nil {
				t.Errorf("undo: %v", err)
			}
		}
		for n := range localityNodes {
			if err := theLab.RemoveNode(ctx, "cluster2", n); err != nil {
				t.Errorf("undo: %v", err)
			}
		}
		if err := theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.LocalityLabel, nil); err != nil {
			t.Errorf("undo: %v", err)
		}
	})
	for n, l := range localityNodes {
		if err := theLab.AddNode(ctx, "cluster2", n, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := theLab.AddPods(ctx, "cluster2", localityPods...); err != nil {
		t.Fatal(err)
	}
	zoneB := "region2.zone-b"
	if err := theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.LocalityLabel, &zoneB); err != nil {
		t.Fatal(err)
	}
	return pod2
}

// actualGroups renders an EDS response group by group:
// "[locality lw=N p=N: address:port w=N, ...]", endpoints sorted within a
// group. The flat list has no group boundaries; istiod's group weight is
// the sum of its endpoints' weights, so a group ends where they reach it.
func actualGroups(la xdsclient.LoadAssignment) string {
	var out []string
	eps := la.Endpoints
	for i := 0; i < len(eps); {
		g := eps[i]
		var members []string
		var sum uint32
		j := i
		for ; j < len(eps) && eps[j].Locality == g.Locality && eps[j].LocalityWeight == g.LocalityWeight && eps[j].Priority == g.Priority && (j == i || sum < g.LocalityWeight); j++ {
			sum += eps[j].Weight
			members = append(members, fmt.Sprintf("%s w=%d", eps[j].Key(), eps[j].Weight))
		}
		sort.Strings(members)
		loc := strings.TrimRight(g.Locality.String(), "/")
		if loc == "" {
			loc = "-"
		}
		out = append(out, fmt.Sprintf("[%s lw=%d p=%d: %s]", loc, g.LocalityWeight, g.Priority, strings.Join(members, ", ")))
		i = j
	}
	return strings.Join(out, " ")
}

// predictedGroups renders the prediction like actualGroups.
func predictedGroups(v explain.View) string {
	la := xdsclient.LoadAssignment{}
	for _, p := range v.Predicted {
		loc := append(strings.SplitN(p.Locality, "/", 3), "", "")
		la.Endpoints = append(la.Endpoints, xdsclient.Endpoint{Address: p.Address, Port: p.Port, Weight: p.Weight,
			Locality: xdsclient.Locality{Region: loc[0], Zone: loc[1], SubZone: loc[2]}, LocalityWeight: p.LocalityWeight, Priority: p.Priority})
	}
	return actualGroups(la)
}

// splitString is "network share% (intended%)", per network, or with
// predicted, "network share%" of the prediction.
func splitString(split []explain.NetworkSplit, predicted bool) string {
	var out []string
	for _, n := range split {
		if predicted {
			out = append(out, fmt.Sprintf("%s %.0f%%", n.Network, 100*n.Predicted))
			continue
		}
		out = append(out, fmt.Sprintf("%s %.0f%% (%.0f%%)", n.Network, 100*n.Share, 100*n.Intended))
	}
	return strings.Join(out, ", ")
}
