package ambient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

const (
	helloKey = "ambient/helloworld.ambient.svc.cluster.local"
	sleepKey = "ambient/sleep.ambient.svc.cluster.local"
)

// ztunnel is meshscope impersonating a ztunnel against one lab istiod.
type ztunnel struct {
	cp string
	is *lab.Istiod
	c  *xdsclient.WDSClient

	mu     sync.Mutex
	events []xdsclient.Event
}

func (z *ztunnel) eventsSince(n int) []xdsclient.Event {
	z.mu.Lock()
	defer z.mu.Unlock()
	return append([]xdsclient.Event(nil), z.events[min(n, len(z.events)):]...)
}

func (z *ztunnel) count() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return len(z.events)
}

// mesh is the collector on both lab clusters and one ztunnel per istiod.
type mesh struct {
	reg      *collector.Registry
	ztunnels []*ztunnel
}

func startMesh(t *testing.T, opts ...func(*collector.Options)) *mesh {
	t.Helper()
	o := collector.Options{Kubeconfig: theLab.Kubeconfig, Contexts: []string{"cluster1", "cluster2"}, SyncTimeout: 20 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	reg, err := collector.NewRegistry(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() { _ = reg.Run(ctx) })
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if _, err := reg.WaitSettled(wctx); err != nil {
		t.Fatalf("collector did not settle: %v", err)
	}
	m := &mesh{reg: reg}
	for _, is := range theLab.Istiods() {
		z := &ztunnel{cp: is.Cluster, is: is}
		c, err := xdsclient.NewWDS(xdsclient.WDSOptions{
			Identity: xdsclient.ZtunnelIdentity{Cluster: is.Cluster}, ControlPlane: is.Cluster,
			Transport: xdsclient.TransportConfig{Address: is.XDSAddress()},
			Backoff:   xdsclient.Backoff{Initial: 200 * time.Millisecond, Max: 2 * time.Second},
			OnEvent: func(e xdsclient.Event) {
				z.mu.Lock()
				z.events = append(z.events, e)
				z.mu.Unlock()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		z.c = c
		wg.Go(func() { _ = c.Run(ctx) })
		m.ztunnels = append(m.ztunnels, z)
	}
	return m
}

func eventually(t *testing.T, timeout time.Duration, check func() string) {
	t.Helper()
	lab.Eventually(t, timeout, check)
}

// ambientz is istiod's /debug/ambientz: the workloads and services its
// ambient index holds, i.e. what it sends every ztunnel. Addresses are
// base64 of the IP's text or bytes.
type ambientz struct {
	Workloads []struct {
		UID            string                     `json:"uid"`
		Network        string                     `json:"network"`
		Addresses      []string                   `json:"addresses"`
		Hostname       string                     `json:"hostname"`
		Capacity       *uint32                    `json:"capacity"`
		Services       map[string]json.RawMessage `json:"services"`
		NetworkGateway *struct {
			Address *struct {
				Network string `json:"network"`
				Address string `json:"address"`
			} `json:"address"`
			// Hostname: a gateway named by DNS name (namespace/name).
			Hostname *struct {
				Namespace string `json:"namespace"`
				Hostname  string `json:"hostname"`
			} `json:"hostname"`
			HBONEPort uint32 `json:"hboneMtlsPort"`
		} `json:"networkGateway"`
	} `json:"workloads"`
	Services []struct {
		Namespace string `json:"namespace"`
		Hostname  string `json:"hostname"`
		Addresses []struct {
			Network string `json:"network"`
			Address string `json:"address"`
		} `json:"addresses"`
	} `json:"services"`
}

func debugIP(b64 string) string {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "?" + b64
	}
	if ip, ok := netip.AddrFromSlice(b); ok {
		return ip.String()
	}
	return string(b)
}

func fetchAmbientz(is *lab.Istiod) (*ambientz, error) {
	resp, err := http.Get(is.HTTPURL() + "/debug/ambientz")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var az ambientz
	return &az, json.NewDecoder(resp.Body).Decode(&az)
}

// render is one line per workload of a service (uid, network, addresses,
// gateway, capacity) and one for its VIPs, sorted, from istiod's debug view.
func (az *ambientz) render(key string) []string {
	var out []string
	for _, w := range az.Workloads {
		if _, ok := w.Services[key]; !ok {
			continue
		}
		var addrs []string
		for _, a := range w.Addresses {
			addrs = append(addrs, debugIP(a))
		}
		gw := ""
		if g := w.NetworkGateway; g != nil && g.Address != nil {
			gw = fmt.Sprintf("%s:%d", debugIP(g.Address.Address), g.HBONEPort)
		} else if g != nil && g.Hostname != nil {
			gw = fmt.Sprintf("%s/%s:%d", g.Hostname.Namespace, g.Hostname.Hostname, g.HBONEPort)
		}
		capacity := uint32(1)
		if w.Capacity != nil {
			capacity = *w.Capacity
		}
		out = append(out, fmt.Sprintf("workload %s net=%s addrs=%s gw=%s cap=%d", w.UID, w.Network, strings.Join(addrs, ","), gw, capacity))
	}
	for _, s := range az.Services {
		if s.Namespace+"/"+s.Hostname != key {
			continue
		}
		var vips []string
		for _, a := range s.Addresses {
			vips = append(vips, a.Network+"/"+debugIP(a.Address))
		}
		slices.Sort(vips)
		out = append(out, "service vips="+strings.Join(vips, ","))
	}
	slices.Sort(out)
	return out
}

// renderWDS is the same for what meshscope's ztunnel holds.
func renderWDS(v xdsclient.WDSServiceView) []string {
	var out []string
	for _, w := range v.Workloads {
		out = append(out, fmt.Sprintf("workload %s net=%s addrs=%s gw=%s cap=%d", w.UID, w.Network, strings.Join(w.Addresses, ","), w.NetworkGateway.String(), w.EffectiveCapacity()))
	}
	if s := v.Service; s != nil {
		var vips []string
		for _, a := range s.Addresses {
			vips = append(vips, a.Network+"/"+a.Address)
		}
		slices.Sort(vips)
		out = append(out, "service vips="+strings.Join(vips, ","))
	}
	slices.Sort(out)
	return out
}

// agree checks, for one istiod and one service, that meshscope's WDS is
// what istiod holds (/debug/ambientz) and what meshscope predicts; it
// returns what does not agree ("" when all do), and the prediction.
func (m *mesh) agree(z *ztunnel, key string) (string, ambient.Prediction) {
	actual := z.c.ServiceView(key)
	az, err := fetchAmbientz(z.is)
	if err != nil {
		return err.Error(), ambient.Prediction{}
	}
	got, want := renderWDS(actual), az.render(key)
	if !slices.Equal(got, want) {
		return fmt.Sprintf("%s %s: meshscope's WDS\n  %s\nistiod's /debug/ambientz\n  %s", z.cp, key, strings.Join(got, "\n  "), strings.Join(want, "\n  ")), ambient.Prediction{}
	}
	p := plane.NewSet(m.reg.Snapshot(), nil).Of(z.cp).Ambient().Predict(strings.SplitN(key, "/", 2)[1])
	if c := ambient.Compare(p, actual); c.Verdict != ambient.Match {
		return fmt.Sprintf("%s %s: prediction %s: %+v", z.cp, key, c.Verdict, c.Differences), p
	}
	return "", p
}

// hasProblem says what is missing when ambient.Problems lacks a problem of
// kind for control plane cp ("" when it has one).
func hasProblem(m *mesh, kind, cp string) string {
	ps := ambientProblems(m.reg.Snapshot())
	for _, p := range ps {
		if string(p.Kind) == kind && p.ControlPlane == cp {
			return ""
		}
	}
	return fmt.Sprintf("no %s problem for %s among %+v", kind, cp, ps)
}

func splitHorizons(p ambient.Prediction) []ambient.Workload {
	var out []ambient.Workload
	for _, w := range p.Workloads {
		if w.Kind == ambient.KindSplitHorizon {
			out = append(out, w)
		}
	}
	return out
}

// TestAmbientWDS: from each istiod, the WDS meshscope's ztunnel holds for
// the global service (helloworld) and the non-global one (sleep) equals
// what istiod reports in /debug/ambientz, istiod records the ACK of it
// (/debug/syncz), and meshscope's prediction matches: own pods one by one,
// the other network's helloworld pods as one split-horizon workload behind
// its east-west gateway (capacity = their number), the other cluster's
// sleep dropped as not global.
func TestAmbientWDS(t *testing.T) {
	m := startMesh(t)
	remotePods := map[string]uint32{"cluster1": 2, "cluster2": 1} // helloworld pods in the other cluster
	gateway := map[string]string{"cluster1": lab.AmbientGatewayIP("cluster2") + ":15008", "cluster2": lab.AmbientGatewayIP("cluster1") + ":15008"}
	for _, z := range m.ztunnels {
		var hello, sleep ambient.Prediction
		eventually(t, 30*time.Second, func() string {
			why, p := m.agree(z, helloKey)
			if why != "" {
				return why
			}
			hello = p
			why, sleep = m.agree(z, sleepKey)
			return why
		})
		if ps := ambientProblems(m.reg.Snapshot()); len(ps) != 0 {
			t.Errorf("the ambient lab has problems: %+v", ps)
		}
		sh := splitHorizons(hello)
		if len(sh) != 1 || sh[0].Capacity != remotePods[z.cp] || sh[0].Gateway != gateway[z.cp] || hello.Scope != ambient.Global || len(hello.VIPs) != 2 {
			t.Errorf("%s: helloworld predicted %+v", z.cp, hello)
		}
		if len(splitHorizons(sleep)) != 0 || sleep.Scope != ambient.Local || len(sleep.Dropped) != 1 || sleep.Dropped[0].Reason != ambient.DropNotGlobal {
			t.Errorf("%s: sleep predicted %+v", z.cp, sleep)
		}
		eventually(t, 10*time.Second, func() string { return acked(z) })
	}
}

// acked reads /debug/syncz: istiod's record of the last Address response it
// sent this ztunnel and the last one it acknowledged.
func acked(z *ztunnel) string {
	resp, err := http.Get(z.is.HTTPURL() + "/debug/syncz")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var sz []struct {
		Proxy     string `json:"proxy"`
		Type      string `json:"proxy_type"`
		Resources map[string]struct {
			Sent  string `json:"sent"`
			Acked string `json:"acked"`
		} `json:"resources"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&sz); err != nil {
		return err.Error()
	}
	for _, p := range sz {
		if p.Type != "ztunnel" || p.Proxy != xdsclient.DefaultZtunnelPod+"."+xdsclient.DefaultZtunnelNamespace {
			continue
		}
		r := p.Resources[xdsclient.AddressTypeURL]
		if r.Sent == "" || r.Sent != r.Acked {
			return fmt.Sprintf("%s syncz: sent %q, acked %q", z.cp, r.Sent, r.Acked)
		}
		return ""
	}
	return fmt.Sprintf("%s syncz lists no ztunnel: %+v", z.cp, sz)
}

// waitPush waits for a wds event after the first `since` events of z whose
// changes satisfy ok, and returns it.
func waitPush(t *testing.T, z *ztunnel, since int, what string, ok func(xdsclient.Event) bool) xdsclient.Event {
	t.Helper()
	var ev xdsclient.Event
	eventually(t, 30*time.Second, func() string {
		for _, e := range z.eventsSince(since) {
			if e.Type == xdsclient.EventWDS && ok(e) {
				ev = e
				return ""
			}
		}
		return fmt.Sprintf("%s: no push %s among %d events", z.cp, what, len(z.eventsSince(since)))
	})
	return ev
}

func changed(e xdsclient.Event, name, change string) bool {
	for _, a := range e.Addresses {
		if a.Name == name && a.Change == change {
			return true
		}
	}
	return false
}

// TestAmbientGatewayLosesAddress: cluster2's east-west gateway loses its
// address; istiod for cluster1 pushes the removal of the split-horizon
// workload (and of the gateway's), and the prediction drops network2's
// helloworld pods for want of a gateway. With the address back, it is
// pushed again.
func TestAmbientGatewayLosesAddress(t *testing.T) {
	m := startMesh(t)
	z := m.ztunnels[0]
	eventually(t, 30*time.Second, func() string { why, _ := m.agree(z, helloKey); return why })
	sh := splitHorizons(plane.NewSet(m.reg.Snapshot(), nil).Of(z.cp).Ambient().Predict("helloworld.ambient.svc.cluster.local"))[0].UID
	ctx := context.Background()
	gwIP := lab.AmbientGatewayIP("cluster2")
	t.Cleanup(func() { _ = theLab.SetAmbientGatewayAddresses(ctx, "cluster2", gwIP) })

	n := z.count()
	if err := theLab.SetAmbientGatewayAddresses(ctx, "cluster2"); err != nil {
		t.Fatal(err)
	}
	ev := waitPush(t, z, n, "removing "+sh, func(e xdsclient.Event) bool { return changed(e, sh, xdsclient.AddressRemoved) })
	if !changed(ev, "NetworkGateway/network2/"+gwIP+"/0", xdsclient.AddressRemoved) {
		t.Errorf("the gateway's own workload was not removed in the same push: %+v", ev.Addresses)
	}
	eventually(t, 20*time.Second, func() string {
		why, p := m.agree(z, helloKey)
		if why != "" {
			return why
		}
		if len(splitHorizons(p)) != 0 || len(p.Dropped) != 1 || p.Dropped[0].Reason != ambient.DropNoGateway {
			return fmt.Sprintf("prediction without the gateway: %+v", p)
		}
		return hasProblem(m, "ambient-no-gateway", "cluster1")
	})

	n = z.count()
	if err := theLab.SetAmbientGatewayAddresses(ctx, "cluster2", gwIP); err != nil {
		t.Fatal(err)
	}
	waitPush(t, z, n, "adding "+sh, func(e xdsclient.Event) bool { return changed(e, sh, xdsclient.AddressAdded) })
	eventually(t, 20*time.Second, func() string {
		why, p := m.agree(z, helloKey)
		if why == "" && len(splitHorizons(p)) != 1 {
			return fmt.Sprintf("prediction with the gateway back: %+v", p)
		}
		return why
	})
}

// TestAmbientGlobalLabelRemoved: cluster2's helloworld loses its
// istio.io/global label. istiod for cluster1 no longer reads it: its push
// removes the split-horizon workload and network2's VIP, and the prediction
// drops those pods as not global. istiod for cluster2 now holds a local
// helloworld: its push removes network1's split-horizon workload (its own
// service is not global, so nothing is merged) and cluster1's VIP.
// Labelled again, both come back.
func TestAmbientGlobalLabelRemoved(t *testing.T) {
	m := startMesh(t)
	ctx := context.Background()
	for _, z := range m.ztunnels {
		eventually(t, 30*time.Second, func() string { why, _ := m.agree(z, helloKey); return why })
	}
	shs := map[string]string{}
	counts := map[string]int{}
	for _, z := range m.ztunnels {
		shs[z.cp] = splitHorizons(plane.NewSet(m.reg.Snapshot(), nil).Of(z.cp).Ambient().Predict("helloworld.ambient.svc.cluster.local"))[0].UID
		counts[z.cp] = z.count()
	}
	global := "true"
	t.Cleanup(func() {
		_ = theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.AmbientNamespace, "helloworld", lab.GlobalLabel, &global)
	})
	if err := theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.AmbientNamespace, "helloworld", lab.GlobalLabel, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]ambient.DropReason{"cluster1": ambient.DropNotGlobal, "cluster2": ambient.DropLocalNotGlobal}
	for _, z := range m.ztunnels {
		ev := waitPush(t, z, counts[z.cp], "removing "+shs[z.cp], func(e xdsclient.Event) bool { return changed(e, shs[z.cp], xdsclient.AddressRemoved) })
		t.Logf("%s push %s: removed %v changed %v", z.cp, ev.Version, ev.Removed, ev.Changed)
		eventually(t, 20*time.Second, func() string {
			why, p := m.agree(z, helloKey)
			if why != "" {
				return why
			}
			if len(splitHorizons(p)) != 0 || len(p.VIPs) != 1 || len(p.Dropped) != 1 || p.Dropped[0].Reason != want[z.cp] {
				return fmt.Sprintf("%s prediction without the label: %+v", z.cp, p)
			}
			return hasProblem(m, "ambient-scope-mismatch", z.cp)
		})
		counts[z.cp] = z.count()
	}
	if err := theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.AmbientNamespace, "helloworld", lab.GlobalLabel, &global); err != nil {
		t.Fatal(err)
	}
	for _, z := range m.ztunnels {
		waitPush(t, z, counts[z.cp], "adding "+shs[z.cp], func(e xdsclient.Event) bool { return changed(e, shs[z.cp], xdsclient.AddressAdded) })
		eventually(t, 20*time.Second, func() string {
			why, p := m.agree(z, helloKey)
			if why == "" && len(splitHorizons(p)) != 1 {
				return fmt.Sprintf("%s prediction labelled again: %+v", z.cp, p)
			}
			return why
		})
	}
}

// TestAmbientReconnect: istiod for cluster2 restarts; meshscope's ztunnel
// reconnects, names what it holds, gets the whole state again, ACKs it, and
// still agrees with istiod and the prediction.
func TestAmbientReconnect(t *testing.T) {
	m := startMesh(t)
	z := m.ztunnels[1]
	eventually(t, 30*time.Second, func() string { why, _ := m.agree(z, helloKey); return why })
	n := z.count()
	if err := theLab.RestartIstiod(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() string {
		var kinds []string
		for _, e := range z.eventsSince(n) {
			kinds = append(kinds, string(e.Type))
		}
		if !slices.Contains(kinds, string(xdsclient.EventDisconnect)) || !slices.Contains(kinds, string(xdsclient.EventReconnect)) {
			return fmt.Sprintf("events since the restart: %v", kinds)
		}
		return ""
	})
	eventually(t, 30*time.Second, func() string {
		if why, _ := m.agree(z, helloKey); why != "" {
			return why
		}
		if why, _ := m.agree(z, sleepKey); why != "" {
			return why
		}
		return acked(z)
	})
}

// ambientProblems are ambient.Problems of snap, each control plane's view
// built as every reader builds it (analysis/plane).
func ambientProblems(snap *model.Snapshot) []model.Problem {
	return ambient.Problems(snap, plane.NewSet(snap, nil).Ambient)
}
