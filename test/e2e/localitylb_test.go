package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestLocalityLoadBalancing: with cluster2's helloworld in two zones (as in
// TestLocalities), each locality load-balancing setting istiod accepts —
// outlier detection alone (the mesh's default localityLbSetting), failover
// between regions, failoverPriority labels, distribute weights, and a
// Service's trafficDistribution — gives the locality groups the
// priorities and weights the real istiod sends, from a network1 sidecar, a
// network2 sidecar, a proxy without NETWORK and a network2 sidecar in
// zone-b (region/zone labels): meshscope's prediction equals istiod's
// groups, and the CDS locality weighting matches. Each scenario checks
// that istiod's answer is not the plain one (priorities or weights
// changed), so the scenario really exercises the setting.
func TestLocalityLoadBalancing(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	twoZones(t)
	vps := []xdsclient.Viewpoint{
		{Cluster: "cluster1", Network: "network1"},
		{Cluster: "cluster2", Network: "network2"},
		{Cluster: "cluster1", NoNetwork: true},
		{Cluster: "cluster2", Network: "network2", Labels: map[string]string{lab.RegionLabel: "region2", lab.ZoneLabel: "zone-b"}},
	}
	probes := make([]*probe, len(vps))
	for i, vp := range vps {
		probes[i] = startProbe(t, vp, xdsclient.ModeDelta, helloworldEDS)
	}
	dr := func(policy string) string {
		return `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: helloworld-locality, namespace: sample}
spec:
  host: helloworld.sample.svc.cluster.local
  trafficPolicy:
` + policy
	}
	const outlier = "    outlierDetection: {consecutive5xxErrors: 3, interval: 10s, baseEjectionTime: 30s}\n"
	apply := func(doc string) func() error {
		return func() error { return theLab.ApplyIstioConfig(ctx, "cluster1", doc) }
	}
	remove := func(doc string) func() error {
		return func() error { return theLab.DeleteIstioConfig(ctx, "cluster1", doc) }
	}
	td := func(v *string) func() error {
		return func() error {
			return theLab.SetAnnotation(ctx, "cluster1", lab.KindService, lab.SampleNamespace, "helloworld", "networking.istio.io/traffic-distribution", v)
		}
	}
	preferClose := "PreferClose"
	scenarios := []struct {
		name        string
		doc         string
		apply, undo func() error
		// weighted: the cluster has locality_weighted_lb_config.
		weighted bool
		// cli: also run meshscope explain with --proxy-label.
		cli bool
		// unready: a pod of cluster2 made not ready meanwhile, which
		// istiod must leave out (absent from every view).
		unready string
	}{
		{name: "outlier detection with the mesh's default localityLbSetting", doc: dr(outlier), cli: true},
		{name: "failover from region2 to region1", weighted: true,
			doc: dr(outlier + "    loadBalancer:\n      localityLbSetting:\n        enabled: true\n        failover: [{from: region2, to: region1}]\n")},
		{name: "failoverPriority network, region, zone", weighted: true,
			doc: dr(outlier + "    loadBalancer:\n      localityLbSetting:\n        enabled: true\n        failoverPriority: [topology.istio.io/network, topology.kubernetes.io/region, topology.kubernetes.io/zone]\n")},
		{name: "failoverPriority with a value override", weighted: true,
			doc: dr(outlier + "    loadBalancer:\n      localityLbSetting:\n        enabled: true\n        failoverPriority: [topology.kubernetes.io/zone=zone-c]\n")},
		{name: "distribute from region2/zone-b", weighted: true,
			doc: dr("    loadBalancer:\n      localityLbSetting:\n        enabled: true\n        distribute:\n        - from: region2/zone-b/*\n          to: {\"region2/zone-b/*\": 80, \"region2/zone-c/*\": 20}\n")},
		{name: "Service trafficDistribution PreferClose (annotation)", weighted: true, apply: td(&preferClose), undo: td(nil)},
		{name: "zoneAwareLbSetting with a failover region",
			doc: dr("    loadBalancer:\n      zoneAwareLbSetting:\n        failover: [{from: region2, to: region1}]\n")},
		{name: "zoneAwareLbSetting with failoverPriority zone",
			doc: dr("    loadBalancer:\n      zoneAwareLbSetting:\n        failoverPriority: [topology.kubernetes.io/zone]\n")},
		{name: "outlier detection with minHealthPercent and a pod not ready", unready: "helloworld-v2-54df5f84b-zc1",
			doc: dr("    outlierDetection: {consecutive5xxErrors: 3, interval: 10s, baseEjectionTime: 30s, minHealthPercent: 50}\n")},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			if sc.doc != "" {
				sc.apply, sc.undo = apply(sc.doc), remove(sc.doc)
			}
			withChange(t, sc.apply, sc.undo)
			if sc.unready != "" {
				withChange(t, func() error { return theLab.SetPodReady(ctx, "cluster2", lab.SampleNamespace, sc.unready, false) },
					func() error { return theLab.SetPodReady(ctx, "cluster2", lab.SampleNamespace, sc.unready, true) })
			}
			eventually(t, 30*time.Second, func() string {
				snap := reg.Snapshot()
				changed := false
				for i, vp := range vps {
					la, ok := probes[i].c.LoadAssignment(helloworldEDS)
					if !ok {
						return vp.String() + ": no EDS yet"
					}
					cl, ok := probes[i].c.Cluster(helloworldEDS)
					if !ok {
						return vp.String() + ": no CDS cluster " + helloworldEDS
					}
					if cl.LocalityWeighted != sc.weighted {
						return fmt.Sprintf("%s: istiod's cluster has locality_weighted_lb_config %v, want %v", vp, cl.LocalityWeighted, sc.weighted)
					}
					got := actualGroups(la)
					if sc.unready != "" && strings.Contains(got, "10.144.0.61:") {
						return fmt.Sprintf("%s: istiod still sends the pod made not ready: %s", vp, got)
					}
					if strings.Contains(got, "p=1") || !strings.Contains(got, "lw=1 p=0: 10.144.0.15:5000") && strings.Contains(got, "10.144.0.15") {
						changed = true
					}
					v := explain.ExplainWith(plane.NewSet(snap, nil), "helloworld.sample.svc.cluster.local", 5000, vp, "cluster1", &la, explain.Extra{Cluster: &cl})
					if pred := predictedGroups(v); pred != got {
						return fmt.Sprintf("%s: istiod sends\n%s\nmeshscope predicts\n%s\n%+v", vp, got, pred, v.Differences)
					}
					if v.Verdict != explain.Match {
						return fmt.Sprintf("%s: verdict %s: %+v", vp, v.Verdict, v.Differences)
					}
				}
				if !changed {
					return "istiod's groups are still all priority 0 with plain weights: the setting has not reached it yet"
				}
				return ""
			})
			for i, vp := range vps {
				la, _ := probes[i].c.LoadAssignment(helloworldEDS)
				t.Logf("%s: %s", vp, actualGroups(la))
			}
			if !sc.cli {
				return
			}
			// As a user runs it: a proxy in zone-b through --proxy-label.
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			out, err := exec.CommandContext(cctx, meshscopeBinary(t), "explain", "helloworld.sample", "--from", "cluster2/network2",
				"--proxy-label", lab.RegionLabel+"=region2", "--proxy-label", lab.ZoneLabel+"=zone-b", "-o", "json",
				"--kubeconfig", theLab.Kubeconfig, "--context", "cluster1", "--xds-address", theLab.Istiods()[0].XDSAddress(), "--log-file", "-").Output()
			if err != nil {
				t.Fatalf("explain: %v\n%s", err, out)
			}
			var res struct {
				Views []struct {
					Verdict   string
					Predicted []struct {
						Address  string
						Priority uint32
					}
				}
			}
			if err := json.Unmarshal(out, &res); err != nil || len(res.Views) != 1 || res.Views[0].Verdict != "match" {
				t.Fatalf("explain: %v\n%s", err, out)
			}
			prio := map[string]uint32{}
			for _, e := range res.Views[0].Predicted {
				prio[e.Address] = e.Priority
			}
			if prio["10.144.0.60"] != 0 || prio["10.144.0.61"] != 1 || prio["192.168.60.113"] != 2 {
				t.Fatalf("explain --proxy-label: priorities %v, want zone-b 0, zone-c 1, other regions 2", prio)
			}
		})
	}
}
