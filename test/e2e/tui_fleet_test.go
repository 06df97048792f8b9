package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/lab"
)

// TestTUIProxiesOnLab: the UI with nothing but both contexts, as a user
// starts it on a multi-primary mesh: :proxies shows a proxy connected to
// each primary's istiod SYNCED — its syncz read through a port-forward to
// that primary's istiod pod — and a pod that neither lists DISCONNECTED
// (only a fleet read from every primary says so; otherwise UNKNOWN).
func TestTUIProxiesOnLab(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const ns = "fleetui"
	fleetNamespace(ctx, t, ns)
	istiods := labIstiodsXDS()
	for _, p := range []struct {
		cluster, name, ip, network string
		connect                    bool
	}{
		{"cluster1", "ui-one", "10.44.9.41", "network1", true},
		{"cluster2", "ui-two", "10.144.9.41", "network2", true},
		{"cluster2", "ui-orphan", "10.144.9.42", "network2", false},
	} {
		if err := theLab.AddPod(ctx, p.cluster, lab.PodSpec{Namespace: ns, Name: p.name, IP: p.ip, Labels: map[string]string{"app": p.name},
			Container: "istio-proxy", Image: "example.invalid/istio/proxyv2:1.31.0", Args: []string{"proxy", "sidecar"},
			Env: map[string]string{"ISTIO_META_NETWORK": p.network, "ISTIO_META_CLUSTER_ID": p.cluster}}); err != nil {
			t.Fatal(err)
		}
		cluster, name := p.cluster, p.name
		t.Cleanup(func() { _ = theLab.RemovePod(context.Background(), cluster, ns, name) })
		if p.connect {
			cctx, ccancel := context.WithCancel(ctx)
			t.Cleanup(ccancel)
			fakeProxy(cctx, t, istiods[p.cluster], p.name, ns, p.cluster, p.network, p.ip, ackAll)
		}
	}
	ts := labTUI(t, "meshscope-e2e-fleet", 160, "cluster1,cluster2")
	ts.Keys(":")
	ts.Keys("proxies")
	ts.Keys("Enter")
	ts.Keys("/")
	ts.Keys("ns=" + ns)
	ts.Keys("Enter")
	row := func(s, id string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, id) {
				return l
			}
		}
		return ""
	}
	s := ts.WaitScreen("a proxy SYNCED on each primary, the orphan DISCONNECTED", 60*time.Second, func(s string) bool {
		one, two, orphan := row(s, "ui-one."+ns), row(s, "ui-two."+ns), row(s, "ui-orphan."+ns)
		return strings.Contains(one, "SYNCED") && strings.Contains(one, "cluster1") &&
			strings.Contains(two, "SYNCED") && strings.Contains(two, "cluster2") &&
			strings.Contains(orphan, "DISCONNECTED")
	})
	t.Logf("proxies view:\n%s", s)
	ts.Quit()
}
