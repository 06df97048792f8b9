package live

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// plantHop plants, in the bench mesh with router gateway pods, one cause
// of a broken second hop: gateway is cluster1's cross-network Gateway
// ("" for none), targetPort what cluster2's gateway Service's port 15443
// reaches (0: itself).
func plantHop(tb testing.TB, gateway string, targetPort int32) benchPlant {
	return func(c int, objs, istio []runtime.Object) ([]runtime.Object, []runtime.Object) {
		for _, o := range objs {
			if s, ok := o.(*corev1.Service); ok && c == 2 && s.Name == "istio-eastwestgateway" && targetPort != 0 {
				for i := range s.Spec.Ports {
					if s.Spec.Ports[i].Port == 15443 {
						s.Spec.Ports[i].TargetPort = intstr.FromInt32(targetPort)
					}
				}
			}
		}
		net := fmt.Sprintf("network%d", c)
		objs = append(objs, benchGatewayPod(c), meshtest.EndpointSlice("istio-system", "istio-eastwestgateway", "gw-x", 15443, map[string]string{"gw-" + net: fmt.Sprintf("10.%d.255.2", c)}))
		if c == 1 {
			objs = append(objs, benchIstiod())
			if gateway != "" {
				istio = append(istio, meshtest.IstioObject(tb, gateway))
			}
		}
		return objs, istio
	}
}

// TestSecondHopFixesProven: each planted cause of a broken second hop is
// reported, and its fix — istio's cross-network-gateway made, a host added
// to the Gateway, the gateway Service's targetPort — is proven by what-if
// on the same mesh: the problem gone, no new error, no endpoint lost.
func TestSecondHopFixesProven(t *testing.T) {
	narrow := strings.Replace(meshtest.CrossNetworkGateway, `["*.local"]`, `["svc0.ns0.svc.cluster.local"]`, 1)
	wide := meshtest.CrossNetworkGateway
	for _, tc := range []struct {
		name    string
		plant   benchPlant
		kind    model.ProblemKind
		title   string
		objects string
	}{
		{"no Gateway", plantHop(t, "", 0), model.ProblemHopNoListener, "apply istio's cross-network-gateway in cluster1", "Gateway istio-system/cross-network-gateway in cluster1"},
		{"hosts", plantHop(t, narrow, 0), model.ProblemHopNoSNI, "to the AUTO_PASSTHROUGH hosts of Gateway istio-system/cross-network-gateway in cluster1", "Gateway istio-system/cross-network-gateway in cluster1"},
		{"targetPort", plantHop(t, wide, 15444), model.ProblemHopPort, "point port 15443 of Service istio-system/istio-eastwestgateway in cluster2", "Service istio-system/istio-eastwestgateway in cluster2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := benchMeshWith(t, 6, tc.plant)
			snap := r.Snapshot()
			d := explain.Run(snap, explain.Inputs{Now: time.Now()})
			var ps []model.Problem
			for _, p := range d.Problems {
				if p.Kind == tc.kind {
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 {
				t.Fatalf("no %s among %v", tc.kind, d.Problems)
			}
			for _, f := range Fixes(context.Background(), r, snap, ps[:1]) {
				o := f.Best()
				if o == nil {
					var why []string
					for _, x := range f.Proposals {
						why = append(why, x.Title+": "+x.Why)
					}
					t.Fatalf("%s: no proven fix (%s): %v", f.Problem.Sentence, f.None, why)
				}
				if !strings.Contains(o.Title, tc.title) || len(o.Manifests) != 1 || !o.Proof.Resolves || len(o.Proof.Fail) > 0 {
					t.Errorf("%s: %s, %d manifests, proof %+v", f.Problem.Kind, o.Title, len(o.Manifests), o.Proof)
				}
				if got := fmt.Sprintf("%s %s/%s in %s", o.Manifests[0].Object.GetKind(), o.Manifests[0].Object.GetNamespace(), o.Manifests[0].Object.GetName(), o.Manifests[0].Cluster); got != tc.objects {
					t.Errorf("manifest of %s, want %s", got, tc.objects)
				}
				t.Logf("%s: %s — %s", f.Problem.Kind, o.Title, strings.Join(o.Proof.Lines(), "; "))
			}
		})
	}
}
