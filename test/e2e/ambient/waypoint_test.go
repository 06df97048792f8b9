package ambient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
)

// waypointIP is the status address the lab writes for the waypoint, as a
// gateway controller would once its pods are ready (data only).
const waypointIP = "10.97.0.200"

// waypointGateway is a waypoint as `istioctl waypoint generate` writes it:
// class istio-waypoint, an HBONE listener on 15008.
const waypointGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: waypoint
  namespace: ambient
spec:
  gatewayClassName: istio-waypoint
  listeners:
  - name: mesh
    port: 15008
    protocol: HBONE
`

// doctorJSON runs doctor -o json and returns its problems of these kinds.
func doctorJSON(t *testing.T, kinds ...string) []model.Problem {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, _ := command(ctx, t, "doctor", "--timeout", "5s", "-o", "json").Output()
	var res struct {
		Problems []model.Problem `json:"problems"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("doctor -o json: %v\n%s", err, out)
	}
	var ps []model.Problem
	for _, p := range res.Problems {
		for _, k := range kinds {
			if string(p.Kind) == k {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// waypointOf is what one ztunnel view of explain -o json says of the
// Service's waypoint: "verdict sent=ADDRESS predicted=ADDRESS".
func waypointOf(z ambient.Explanation) string {
	sent := "none"
	if z.Actual != nil && z.Actual.Service != nil && z.Actual.Service.Waypoint != nil {
		sent = z.Actual.Service.Waypoint.Network + "/" + z.Actual.Service.Waypoint.String()
	}
	pred := "none"
	if w := z.Prediction.Waypoint; w != nil && w.Address != nil {
		pred = w.Address.Network + "/" + w.AddressString()
	}
	return fmt.Sprintf("%s sent=%s predicted=%s", z.Verdict, sent, pred)
}

// TestAmbientWaypointCrossNetwork: a waypoint Gateway in cluster2 only,
// and the global helloworld labelled istio.io/use-waypoint in both
// clusters. istiod resolves a Service's waypoint with the Gateways of the
// Service's own cluster and sends the merged Service with its own
// cluster's: cluster2's istiod sends helloworld with the waypoint (on
// network2, port 15008), cluster1's without (it has no such Gateway), so
// network1's ztunnels send helloworld's traffic across the east-west
// gateway without the waypoint. meshscope predicts both, from the
// collector and through explain, and doctor reports
// waypoint-cross-network for cluster1's istiod. Without the label and the
// Gateway, the problem is gone and the waypoint with it.
func TestAmbientWaypointCrossNetwork(t *testing.T) {
	ctx := context.Background()
	m := startMesh(t)
	for _, z := range m.ztunnels {
		eventually(t, 30*time.Second, func() string { why, _ := m.agree(z, helloKey); return why })
	}
	name := "waypoint"
	undo := func() {
		for _, c := range []string{"cluster1", "cluster2"} {
			_ = theLab.SetLabel(ctx, c, lab.KindService, lab.AmbientNamespace, "helloworld", model.LabelUseWaypoint, nil)
		}
		_ = theLab.DeleteIstioConfig(ctx, "cluster2", waypointGateway)
	}
	t.Cleanup(undo)
	if err := theLab.ApplyIstioConfig(ctx, "cluster2", waypointGateway); err != nil {
		t.Fatal(err)
	}
	if err := theLab.SetGatewayAddresses(ctx, "cluster2", lab.AmbientNamespace, name, waypointIP); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"cluster1", "cluster2"} {
		if err := theLab.SetLabel(ctx, c, lab.KindService, lab.AmbientNamespace, "helloworld", model.LabelUseWaypoint, &name); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"cluster1": "", "cluster2": "network2/" + waypointIP + ":15008"}
	for _, z := range m.ztunnels {
		eventually(t, 30*time.Second, func() string {
			why, p := m.agree(z, helloKey)
			if why != "" {
				return why
			}
			got := ""
			if s := z.c.ServiceView(helloKey).Service; s != nil && s.Waypoint != nil {
				got = s.Waypoint.Network + "/" + s.Waypoint.String()
			}
			if got != want[z.cp] {
				return fmt.Sprintf("%s: istiod sends helloworld with waypoint %q, want %q", z.cp, got, want[z.cp])
			}
			if len(p.WaypointUses) != 2 {
				return fmt.Sprintf("%s: prediction's waypoint uses %+v", z.cp, p.WaypointUses)
			}
			return ""
		})
	}
	eventually(t, 20*time.Second, func() string { return hasProblem(m, "waypoint-cross-network", "cluster1") })

	// The commands, as a user runs them.
	explainWant := map[string]string{
		"cluster1": "match sent=none predicted=none",
		"cluster2": "match sent=network2/" + waypointIP + ":15008 predicted=network2/" + waypointIP + ":15008",
	}
	eventually(t, 60*time.Second, func() string {
		res, _ := runExplain(t, "helloworld.ambient", "--from", "ztunnel", "-o", "json")
		var bad []string
		for _, z := range res.Ztunnels {
			if got := waypointOf(z); got != explainWant[z.ControlPlane] {
				bad = append(bad, fmt.Sprintf("%s: %s (differences %+v), want %s", z.ControlPlane, got, z.Differences, explainWant[z.ControlPlane]))
			}
		}
		if len(res.Ztunnels) != 2 {
			bad = append(bad, fmt.Sprintf("%d ztunnel views", len(res.Ztunnels)))
		}
		return strings.Join(bad, "; ")
	})
	ps := doctorJSON(t, "waypoint-cross-network", "waypoint-unresolved", "wds-differs")
	if len(ps) != 1 || ps[0].Kind != "waypoint-cross-network" || ps[0].Severity != model.SeverityError || ps[0].Cluster != "cluster2" {
		t.Fatalf("doctor reports %+v; want one waypoint-cross-network error", ps)
	}
	for _, part := range []string{"helloworld.ambient.svc.cluster.local uses waypoint ambient/waypoint in cluster2 (network network2)",
		"ztunnels of cluster1's istiod (network network1) get the Service from cluster1 without a waypoint",
		"never through the waypoint", "deploy the waypoint in cluster1"} {
		if !strings.Contains(ps[0].Sentence, part) {
			t.Errorf("doctor's sentence lacks %q: %s", part, ps[0].Sentence)
		}
	}
	t.Logf("doctor: %s %s: %s", ps[0].Severity, ps[0].Kind, ps[0].Sentence)

	// Undone: no waypoint, no problem.
	undo()
	for _, z := range m.ztunnels {
		eventually(t, 30*time.Second, func() string {
			why, p := m.agree(z, helloKey)
			if why == "" && (p.Waypoint != nil || len(p.WaypointUses) != 0) {
				return fmt.Sprintf("%s: prediction still has a waypoint: %+v", z.cp, p.WaypointUses)
			}
			if s := z.c.ServiceView(helloKey).Service; why == "" && s != nil && s.Waypoint != nil {
				return fmt.Sprintf("%s: istiod still sends waypoint %s", z.cp, s.Waypoint)
			}
			return why
		})
	}
	if ps := doctorJSON(t, "waypoint-cross-network", "waypoint-unresolved", "wds-differs"); len(ps) != 0 {
		t.Errorf("doctor still reports %+v", ps)
	}
}
