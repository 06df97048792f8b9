package e2e

// The fleet with no address given: meshscope finds each primary's istiod
// pod through that primary's own kube context and reads its /debug/syncz
// through a port-forward to the pod's 8080 (through the real API servers
// and the lab's kubelet stand-in to the real istiods). Each istiod lists
// only the proxies connected to it, so only reading both makes the fleet
// complete: a pod that neither lists is then DISCONNECTED, not UNKNOWN.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/xdsclient"
)

func TestFleetThroughPortForwards(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const ns = "fleetpf"
	fleetNamespace(ctx, t, ns)
	gatewayStandIns(ctx, t) // the gateways' proxies are connected, as in a real mesh
	istiods := labIstiodsXDS()
	pods := []struct {
		cluster, name, ip, network string
		connect                    bool
	}{
		{"cluster1", "pf-one", "10.44.9.21", "network1", true},
		{"cluster2", "pf-two", "10.144.9.21", "network2", true},
		{"cluster2", "pf-orphan", "10.144.9.22", "network2", false},
	}
	for _, p := range pods {
		if err := theLab.AddPod(ctx, p.cluster, lab.PodSpec{Namespace: ns, Name: p.name, IP: p.ip, Labels: map[string]string{"app": p.name},
			Container: "istio-proxy", Image: "example.invalid/istio/proxyv2:1.31.0", Args: []string{"proxy", "sidecar"},
			Env: map[string]string{"ISTIO_META_NETWORK": p.network, "ISTIO_META_CLUSTER_ID": p.cluster}}); err != nil {
			t.Fatal(err)
		}
		p := p
		t.Cleanup(func() { _ = theLab.RemovePod(context.Background(), p.cluster, ns, p.name) })
		if p.connect {
			cctx, ccancel := context.WithCancel(ctx)
			t.Cleanup(ccancel)
			fakeProxy(cctx, t, istiods[p.cluster], p.name, ns, p.cluster, p.network, p.ip, ackAll)
		}
	}
	want := map[string]struct {
		state fleet.State
		cp    string
	}{"pf-one": {fleet.Synced, "cluster1"}, "pf-two": {fleet.Synced, "cluster2"}, "pf-orphan": {fleet.Disconnected, ""}}
	check := func(f fleet.Fleet) string {
		var bad []string
		for name, w := range want {
			if p := findProxy(f, ns, name); p == nil || p.State != w.state || p.ControlPlane != w.cp {
				bad = append(bad, fmt.Sprintf("%s: got %+v, want %s on %q", name, p, w.state, w.cp))
			}
		}
		if !f.Complete || len(f.Missing) > 0 {
			bad = append(bad, fmt.Sprintf("incomplete: missing %v", f.Missing))
		}
		return strings.Join(bad, "; ")
	}

	// The command, with the contexts and nothing else.
	eventually(t, 90*time.Second, func() string {
		out, code := runMeshscope(t, "proxies", "-o", "json", "--context", "cluster1,cluster2", "-n", ns)
		var f fleet.Fleet
		if err := json.Unmarshal([]byte(out), &f); err != nil || code != 0 {
			return fmt.Sprintf("proxies: exit %d, %v\n%s", code, err, out)
		}
		return check(f)
	})
	start := time.Now()
	table, _ := runMeshscope(t, "proxies", "--context", "cluster1,cluster2", "-n", ns)
	t.Logf("meshscope proxies --context cluster1,cluster2 -n %s (%s, settle and port-forwards included):\n%s", ns, time.Since(start).Round(time.Millisecond), table)
	// doctor, the same way: the disconnected pod is reported (only a
	// complete fleet says so) and no istiod is unreachable.
	eventually(t, 60*time.Second, func() string {
		ps, _ := doctorJSON(t, "--context", "cluster1,cluster2", "--offline")
		var kinds []string
		for _, p := range ps {
			kinds = append(kinds, string(p.Kind)+": "+p.Sentence)
		}
		all := strings.Join(kinds, "\n")
		if strings.Contains(all, "istiod-unreachable") || !strings.Contains(all, "proxy-disconnected: sidecar "+ns+"/pf-orphan") ||
			strings.Contains(all, "pf-one") || strings.Contains(all, "pf-two") {
			return "doctor:\n" + all
		}
		return ""
	})

	// The UI's feed: every poll reads both primaries' syncz, each named by
	// its cluster ID, and the fleet joined with the poll's snapshot is the
	// same.
	s, err := live.Open(ctx, live.Options{IstiodPoll: time.Second, Collector: collector.Options{
		Kubeconfig: theLab.Kubeconfig, Contexts: []string{"cluster1", "cluster2"}, SyncTimeout: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	feed := s.Feed(ctx, xdsclient.ModeDelta)
	defer feed.Close()
	eventually(t, 60*time.Second, func() string {
		reads, snap := feed.Syncz()
		var got []string
		for _, r := range reads {
			if r.Err != nil {
				return fmt.Sprintf("%s: %v", r.ControlPlane, r.Err)
			}
			if r.Address == fmt.Sprintf("127.0.0.1:%d", labDebugPort(r.ControlPlane)) {
				return fmt.Sprintf("%s read at %s: istiod's own address, not a port-forward", r.ControlPlane, r.Address)
			}
			got = append(got, r.ControlPlane)
		}
		slices.Sort(got)
		if strings.Join(got, ",") != "cluster1,cluster2" {
			return fmt.Sprintf("syncz read from %v", got)
		}
		f := fleet.Build(snap, reads, time.Now())
		f.Proxies = slices.DeleteFunc(f.Proxies, func(p fleet.Proxy) bool { return p.Namespace != ns })
		return check(f)
	})
	if c := cluster(s.Registry().Snapshot(), "cluster2"); !c.IsContext() {
		t.Errorf("cluster2 is not read through its context: %+v", c.Source)
	}
}

// labDebugPort is the lab istiod's own HTTP debug port for cluster.
func labDebugPort(cluster string) int {
	for _, is := range theLab.Istiods() {
		if is.Cluster == cluster {
			return is.HTTP
		}
	}
	return 0
}
