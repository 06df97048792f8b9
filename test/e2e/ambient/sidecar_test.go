package ambient

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/lab"
)

// sidecarView is the part of one sidecar view of explain -o json this
// test reads.
type sidecarView struct {
	Viewpoint struct {
		Name         string `json:"name"`
		ControlPlane string `json:"controlPlane"`
	} `json:"viewpoint"`
	Verdict string `json:"verdict"`
	Actual  []struct {
		Address string `json:"address"`
		Port    uint32 `json:"port"`
		Kind    string `json:"kind"`
	} `json:"actual"`
	Dropped []struct {
		Reason string `json:"reason"`
	} `json:"dropped"`
}

// sidecarViews explains service and checks that each sidecar view, one per
// istiod, matches what that istiod sent; it returns the views by control
// plane, or why not.
func sidecarViews(t *testing.T, service string) (map[string]sidecarView, string) {
	res, code := runExplain(t, service, "-o", "json")
	out := map[string]sidecarView{}
	for _, raw := range res.Views {
		var v sidecarView
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Sprintf("explain %s view: %v", service, err)
		}
		if v.Verdict != "match" {
			return nil, fmt.Sprintf("explain %s from %s: verdict %s (exit %d)", service, v.Viewpoint.Name, v.Verdict, code)
		}
		out[v.Viewpoint.ControlPlane] = v
	}
	if len(out) != 2 || code != 0 {
		return nil, fmt.Sprintf("explain %s: views from %d control planes, exit %d", service, len(out), code)
	}
	return out, ""
}

// sidecarDoctor is doctor's rows about sidecar EDS and istiod's gateways.
func sidecarDoctor(t *testing.T) string {
	out, _ := command(context.Background(), t, "doctor", "--timeout", "20s").Output()
	var bad []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "xds-differs") || strings.Contains(l, "istiod-disagrees") {
			bad = append(bad, l)
		}
	}
	return strings.Join(bad, "\n")
}

// eastWestGateway is a Gateway API Gateway that istiod's network manager
// takes as network1's sidecar gateway (handleGatewayResource): a network
// label, spec addresses, an auto-passthrough listener (15443 with TLS) and
// an HBONE one. Its class is none of the ambient ones: istiod reads any.
const eastWestGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: sidecar-eastwest
  namespace: istio-system
  labels:
    topology.istio.io/network: network1
spec:
  gatewayClassName: istio
  addresses:
  - type: IPAddress
    value: 192.168.70.1
  listeners:
  - name: tls
    port: 15443
    protocol: TLS
    tls:
      mode: Passthrough
  - name: hbone
    port: 15008
    protocol: HBONE
`

// TestAmbientSidecarEDS: istiod's sidecar EDS in ambient multi-network
// mode is predicted exactly. A service that is not global reaches sidecars
// with their own cluster's endpoints only; a global one goes through split
// horizon; a Gateway API Gateway with a network label and spec addresses
// adds network gateways (its auto-passthrough and HBONE listeners), which
// the prediction follows.
func TestAmbientSidecarEDS(t *testing.T) {
	ctx := context.Background()
	eventually(t, 90*time.Second, func() string {
		for _, svc := range []string{"helloworld.sample", "sleep.sample"} {
			vs, why := sidecarViews(t, svc)
			if why != "" {
				return why
			}
			for cp, v := range vs {
				if len(v.Actual) != 1 || v.Actual[0].Kind != "local" || len(v.Dropped) != 1 || v.Dropped[0].Reason != "not-global" {
					return fmt.Sprintf("%s from %s: %+v, want its own cluster's endpoint and the other dropped not-global", svc, cp, v)
				}
			}
		}
		return sidecarDoctor(t)
	})

	// helloworld.sample becomes global, and network1 gets a Gateway API
	// gateway next to its gateway Service.
	global := "true"
	for _, c := range []string{"cluster1", "cluster2"} {
		t.Cleanup(func() {
			_ = theLab.SetLabel(ctx, c, lab.KindService, lab.SampleNamespace, "helloworld", lab.GlobalLabel, nil)
		})
		if err := theLab.SetLabel(ctx, c, lab.KindService, lab.SampleNamespace, "helloworld", lab.GlobalLabel, &global); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = theLab.DeleteIstioConfig(ctx, "cluster1", eastWestGateway) })
	if err := theLab.ApplyIstioConfig(ctx, "cluster1", eastWestGateway); err != nil {
		t.Fatal(err)
	}
	gwService := theLab.Cluster("cluster1").GatewayIP
	eventually(t, 90*time.Second, func() string {
		vs, why := sidecarViews(t, "helloworld.sample")
		if why != "" {
			return why
		}
		var got []string
		for _, e := range vs["cluster2"].Actual {
			got = append(got, fmt.Sprintf("%s %s:%d", e.Kind, e.Address, e.Port))
		}
		slices.Sort(got)
		// network1's gateways for a network2 sidecar: the Service's
		// (15443) and the Gateway's two listeners (a sidecar uses the
		// HBONE one too: its Port is not 0).
		for _, want := range []string{"gateway 192.168.70.1:15008", "gateway 192.168.70.1:15443", "gateway " + gwService + ":15443"} {
			if !slices.Contains(got, want) {
				return fmt.Sprintf("cluster2's istiod sends %q, lacking %q", got, want)
			}
		}
		return sidecarDoctor(t)
	})
}
