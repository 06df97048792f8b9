package whatif

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Endpoint is one endpoint (LbEndpoint, or a ztunnel's workload) as a
// what-if compares it.
type Endpoint struct {
	Address string `json:"address"`
	Port    uint32 `json:"port,omitempty"`
	// Weight is the LbEndpoint's load-balancing weight (a split-horizon
	// workload's capacity); Priority its locality priority.
	Weight   uint32 `json:"weight"`
	Priority uint32 `json:"priority,omitempty"`
	// Kind is direct or gateway (horizon.Kind), or a workload kind.
	Kind    string `json:"kind"`
	Cluster string `json:"cluster,omitempty"`
	Network string `json:"network,omitempty"`
	// UID is a workload's (ztunnel views).
	UID string `json:"uid,omitempty"`
	// Count is how many entries of the same address:port istiod sends
	// (more than one: duplicates, each with its weight).
	Count int `json:"count,omitempty"`
}

func (e Endpoint) key() string {
	if e.UID != "" {
		return e.UID
	}
	return e.Address + ":" + strconv.FormatUint(uint64(e.Port), 10)
}

// String is "ADDRESS:PORT ×WEIGHT (kind, network)".
func (e Endpoint) String() string {
	s := e.Address
	if e.Port != 0 {
		s = fmt.Sprintf("%s:%d", e.Address, e.Port)
	}
	if e.Weight > 1 {
		s += fmt.Sprintf(" ×%d", e.Weight)
	}
	where := e.Network
	if where == "" {
		where = "no network"
	}
	return s + " (" + e.Kind + ", " + where + ")"
}

// Share is a network's share of a proxy's requests to the service.
type Share struct {
	Network string  `json:"network"`
	Share   float64 `json:"share"`
}

// ServiceChange is one service port, from one viewpoint, whose endpoints
// the change moves.
type ServiceChange struct {
	Service string `json:"service"`
	Port    int32  `json:"port,omitempty"`
	// Viewpoint names the proxy as explain --from takes it
	// (CLUSTER/NETWORK@CONTROLPLANE, none for no NETWORK); for a ztunnel
	// view, "ztunnel@CONTROLPLANE".
	Viewpoint    string `json:"viewpoint"`
	ControlPlane string `json:"controlPlane,omitempty"`
	// Proxy is "sidecar" (EDS) or "ztunnel" (WDS).
	Proxy      string     `json:"proxy"`
	Before     []Endpoint `json:"before"`
	After      []Endpoint `json:"after"`
	Added      []Endpoint `json:"added,omitempty"`
	Removed    []Endpoint `json:"removed,omitempty"`
	Reweighted []Endpoint `json:"reweighted,omitempty"`
	// SharesBefore and SharesAfter are each network's share of requests.
	SharesBefore []Share `json:"sharesBefore,omitempty"`
	SharesAfter  []Share `json:"sharesAfter,omitempty"`
	// LostAll: every endpoint gone; LostRemote: every endpoint of other
	// clusters gone, some left.
	LostAll    bool `json:"lostAll,omitempty"`
	LostRemote bool `json:"lostRemote,omitempty"`
	// Why are sentences from the prediction: why the new endpoints are sent
	// as they are and the old ones no longer are.
	Why []string `json:"why"`
}

// maxWhy bounds the sentences of one change.
const maxWhy = 3

// viewpoint is one proxy a what-if predicts for.
type viewpoint struct {
	name  string
	proxy horizon.Proxy
	cp    string
}

// Endpoints compares, for every control plane and every viewpoint of it,
// every service port's predicted endpoints in before and after, and lists
// the ones that change.
func Endpoints(before, after *model.Snapshot) []ServiceChange {
	out, _ := compareAll(before, after)
	return out
}

// compareAll is Endpoints, and the services whose prediction changes in
// any way from some viewpoint (endpoints, or only why some are dropped).
func compareAll(before, after *model.Snapshot) ([]ServiceChange, map[string]bool) {
	affected := map[string]bool{}
	var out []ServiceChange
	// Each side's control-plane views, built once: explain predicts from
	// the same views (analysis/plane), so the before is explain's.
	sides := [2]*plane.Set{plane.NewSet(before, nil), plane.NewSet(after, nil)}
	for _, cp := range controlPlanes(before, after) {
		pvs := [2]*plane.View{sides[0].Of(cp), sides[1].Of(cp)}
		bv, av := pvs[0].Snap, pvs[1].Snap
		vps := sidecarViewpoints(bv, av, cp)
		type job struct {
			host string
			port int32
			vp   viewpoint
		}
		var jobs []job
		for _, host := range hostnames(bv, av) {
			for _, port := range ports(bv, av, host) {
				for _, vp := range vps {
					jobs = append(jobs, job{host, port, vp})
				}
			}
		}
		// Before and after are predicted side by side (two cores).
		preds := [2][]horizon.Prediction{make([]horizon.Prediction, len(jobs)), make([]horizon.Prediction, len(jobs))}
		var wg sync.WaitGroup
		for side, pv := range pvs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i, j := range jobs {
					preds[side][i] = pv.Predict(j.host, "", j.port, j.vp.proxy)
				}
			}()
		}
		wg.Wait()
		for i, j := range jobs {
			if c, changed := compareEDS(preds[0][i], preds[1][i], j.vp); changed {
				out = append(out, c)
				affected[j.host] = true
			} else if !sameDrops(preds[0][i], preds[1][i]) {
				affected[j.host] = true
			}
		}
		if before.AmbientInUse() || after.AmbientInUse() {
			out = append(out, ztunnelChanges(pvs, affected)...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Service != out[j].Service {
			return out[i].Service < out[j].Service
		}
		if out[i].Port != out[j].Port {
			return out[i].Port < out[j].Port
		}
		return out[i].Viewpoint < out[j].Viewpoint
	})
	return out, affected
}

// controlPlanes are the control planes meshscope predicts for in either
// snapshot, each primary's other running revisions included
// (plane.WithRevisions), ("" alone when none is known: every cluster, the
// first context's config).
func controlPlanes(snaps ...*model.Snapshot) []string {
	var cps []string
	for _, s := range snaps {
		for _, cp := range plane.WithRevisions(s) {
			if !slices.Contains(cps, cp) {
				cps = append(cps, cp)
			}
		}
	}
	sort.Strings(cps)
	if len(cps) == 0 {
		return []string{""}
	}
	return cps
}

// sidecarViewpoints are a sidecar per network of either view (the same
// proxy in both: a running proxy keeps the network it was injected with)
// and a proxy without NETWORK in the control plane's cluster.
func sidecarViewpoints(before, after *model.Snapshot, cp string) []viewpoint {
	var out []viewpoint
	seen := map[string]bool{}
	add := func(p horizon.Proxy, noNetwork bool) {
		name := xdsclient.Viewpoint{Cluster: p.Cluster, Network: p.Network, NoNetwork: noNetwork, ControlPlane: cp}.String()
		if !seen[name] {
			seen[name] = true
			out = append(out, viewpoint{name: name, proxy: p, cp: cp})
		}
	}
	for _, s := range []*model.Snapshot{before, after} {
		for _, p := range horizon.Viewpoints(s) {
			add(p, false)
		}
	}
	home := model.ControlPlaneCluster(cp)
	if home == "" && len(before.Clusters) > 0 {
		home = before.Clusters[0].ID
	}
	add(horizon.Proxy{Cluster: home}, true)
	return out
}

// hostnames are the services of either view, gateways left out.
func hostnames(before, after *model.Snapshot) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range []*model.Snapshot{before, after} {
		for _, svc := range s.Services {
			if !seen[svc.Hostname] && !explain.IsGatewayService(svc) {
				seen[svc.Hostname] = true
				out = append(out, svc.Hostname)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ports are the service's ports in either view.
func ports(before, after *model.Snapshot, host string) []int32 {
	var out []int32
	for _, s := range []*model.Snapshot{before, after} {
		if svc := s.Service(host); svc != nil {
			for _, p := range svc.Ports {
				if !slices.Contains(out, p.Port) {
					out = append(out, p.Port)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// edsEndpoints turns a prediction's endpoints into compared ones, one per
// address:port (duplicates counted).
func edsEndpoints(p horizon.Prediction) []Endpoint {
	var out []Endpoint
	at := map[string]int{}
	for _, e := range p.Endpoints {
		ep := Endpoint{Address: e.Address, Port: e.Port, Weight: e.Weight, Priority: e.Priority, Kind: string(e.Kind), Cluster: e.Cluster, Network: e.Network, Count: 1}
		if i, ok := at[ep.key()]; ok {
			out[i].Count++
			out[i].Weight += ep.Weight
			continue
		}
		at[ep.key()] = len(out)
		out = append(out, ep)
	}
	for i := range out {
		if out[i].Count == 1 {
			out[i].Count = 0
		}
	}
	sortEndpoints(out)
	return out
}

func sortEndpoints(eps []Endpoint) {
	sort.Slice(eps, func(i, j int) bool { return eps[i].key() < eps[j].key() })
}

// compareEDS is one viewpoint's change of one service port, if any.
func compareEDS(b, a horizon.Prediction, vp viewpoint) (ServiceChange, bool) {
	if sameEDS(b, a) {
		return ServiceChange{}, false
	}
	c := ServiceChange{Service: b.Service, Port: b.Port, Viewpoint: vp.name, ControlPlane: vp.cp, Proxy: "sidecar",
		Before: edsEndpoints(b), After: edsEndpoints(a)}
	if !b.Found {
		c.Service = a.Service
	}
	if !diffEndpoints(&c) {
		return c, false
	}
	c.SharesBefore, c.SharesAfter = shares(b), shares(a)
	c.LostRemote = !c.LostAll && remote(c.Before, vp.proxy.Cluster) > 0 && remote(c.After, vp.proxy.Cluster) == 0
	c.Why = edsWhy(c, a)
	return c, true
}

// sameEDS says two predictions send the same endpoints in the same order
// (the common case, told without building the compared lists).
func sameEDS(b, a horizon.Prediction) bool {
	if len(b.Endpoints) != len(a.Endpoints) {
		return false
	}
	for i := range b.Endpoints {
		x, y := &b.Endpoints[i], &a.Endpoints[i]
		if x.Address != y.Address || x.Port != y.Port || x.Weight != y.Weight || x.Priority != y.Priority || x.Kind != y.Kind || x.Network != y.Network || x.Cluster != y.Cluster {
			return false
		}
	}
	return true
}

// sameDrops says two predictions drop the same endpoints for the same
// reasons.
func sameDrops(b, a horizon.Prediction) bool {
	if len(b.Dropped) != len(a.Dropped) || b.NoEndpoints != a.NoEndpoints {
		return false
	}
	for i := range b.Dropped {
		if b.Dropped[i].Address != a.Dropped[i].Address || b.Dropped[i].Reason != a.Dropped[i].Reason || b.Dropped[i].Why != a.Dropped[i].Why {
			return false
		}
	}
	return true
}

// diffEndpoints fills Added, Removed, Reweighted and LostAll, and says
// whether anything changed.
func diffEndpoints(c *ServiceChange) bool {
	before := map[string]Endpoint{}
	for _, e := range c.Before {
		before[e.key()] = e
	}
	after := map[string]bool{}
	for _, e := range c.After {
		after[e.key()] = true
		old, ok := before[e.key()]
		switch {
		case !ok:
			c.Added = append(c.Added, e)
		case old.Weight != e.Weight || old.Priority != e.Priority || old.Kind != e.Kind || old.Network != e.Network || old.Count != e.Count:
			c.Reweighted = append(c.Reweighted, e)
		}
	}
	for _, e := range c.Before {
		if !after[e.key()] {
			c.Removed = append(c.Removed, e)
		}
	}
	c.LostAll = len(c.Before) > 0 && len(c.After) == 0
	return len(c.Added)+len(c.Removed)+len(c.Reweighted) > 0
}

// remote counts the endpoints that are not of the proxy's own cluster.
func remote(eps []Endpoint, cluster string) int {
	n := 0
	for _, e := range eps {
		if e.Cluster != cluster {
			n++
		}
	}
	return n
}

func shares(p horizon.Prediction) []Share {
	nets, effs := make([]string, len(p.Endpoints)), make([]horizon.Effect, len(p.Endpoints))
	for i, e := range p.Endpoints {
		nets[i], effs[i] = e.Network, e.Effect
	}
	var out []Share
	for _, s := range horizon.SharesByNetwork(nets, effs) {
		out = append(out, Share{Network: s.Network, Share: s.Share})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Network < out[j].Network })
	return out
}

// edsWhy says why, from the prediction after the change: why each removed
// endpoint is dropped (or why nothing is sent), and why each added or
// re-weighted one is sent as it is.
func edsWhy(c ServiceChange, a horizon.Prediction) []string {
	var why []string
	add := func(s string) {
		if s != "" && !slices.Contains(why, s) && len(why) < maxWhy {
			why = append(why, s)
		}
	}
	if a.NoEndpoints != "" {
		add(a.NoEndpoints)
	}
	if !a.Found && len(c.Before) > 0 {
		add("the service (or this port) no longer exists in what this control plane reads")
	}
	for _, e := range c.Removed {
		found := false
		for _, d := range a.Dropped {
			if d.Address == e.Address {
				add(d.Why)
				found = true
				break
			}
		}
		if !found && (e.Kind == string(horizon.Gateway) || e.Kind == string(horizon.Forced)) {
			// A gateway entry goes when the endpoints behind it do: say why
			// they are dropped.
			for _, d := range a.Dropped {
				if d.Network == e.Network {
					add(d.Why)
					found = true
				}
			}
		}
		if !found && (e.Kind == string(horizon.Gateway) || e.Kind == string(horizon.Forced)) {
			add(fmt.Sprintf("gateway %s no longer stands for endpoints of %s", e.Address, orNone(e.Network)))
		} else if !found && a.NoEndpoints == "" {
			add(fmt.Sprintf("%s is no longer an endpoint of the service", e.Address))
		}
	}
	for _, list := range [][]Endpoint{c.Added, c.Reweighted} {
		for _, e := range list {
			for _, p := range a.Endpoints {
				if p.Address == e.Address && p.Port == e.Port {
					add(p.Why)
					break
				}
			}
		}
	}
	if why == nil {
		why = []string{}
	}
	return why
}

func orNone(network string) string {
	if network == "" {
		return "no network"
	}
	return network
}

// ztunnelChanges compares what the istiod of cp sends ztunnels for every
// service (WDS is the same for every ztunnel of one istiod).
func ztunnelChanges(pvs [2]*plane.View, affected map[string]bool) []ServiceChange {
	before, after, cp := pvs[0].Full, pvs[1].Full, pvs[0].Name
	bv, av := pvs[0].Ambient(), pvs[1].Ambient()
	name := "ztunnel@" + cp
	if cp == "" {
		name = "ztunnel"
	}
	var out []ServiceChange
	for _, host := range hostnames(before, after) {
		b, a := bv.Predict(host), av.Predict(host)
		c := ServiceChange{Service: host, Viewpoint: name, ControlPlane: cp, Proxy: "ztunnel",
			Before: workloads(b), After: workloads(a)}
		if !reflect.DeepEqual(b.Dropped, a.Dropped) || b.Sent != a.Sent || b.Scope != a.Scope {
			affected[host] = true
		}
		if !diffEndpoints(&c) {
			continue
		}
		affected[host] = true
		c.SharesBefore, c.SharesAfter = workloadShares(c.Before), workloadShares(c.After)
		own := cp
		c.LostRemote = !c.LostAll && remote(c.Before, own) > 0 && remote(c.After, own) == 0
		c.Why = wdsWhy(c, a)
		out = append(out, c)
	}
	return out
}

func workloads(p ambient.Prediction) []Endpoint {
	out := []Endpoint{}
	for _, w := range p.Workloads {
		e := Endpoint{UID: w.UID, Kind: string(w.Kind), Cluster: w.Cluster, Network: w.Network, Weight: max(w.Capacity, 1)}
		if len(w.Addresses) > 0 {
			e.Address = w.Addresses[0]
		}
		if w.Gateway != "" {
			e.Address = w.Gateway
		}
		out = append(out, e)
	}
	sortEndpoints(out)
	return out
}

// workloadShares weighs each network by its workloads' capacity (ztunnel
// spreads over workloads by capacity).
func workloadShares(eps []Endpoint) []Share {
	total := 0.0
	by := map[string]float64{}
	for _, e := range eps {
		by[e.Network] += float64(e.Weight)
		total += float64(e.Weight)
	}
	var out []Share
	for _, n := range slices.Sorted(maps.Keys(by)) {
		out = append(out, Share{Network: n, Share: float64(int(by[n]/total*10000+0.5)) / 10000})
	}
	return out
}

func wdsWhy(c ServiceChange, a ambient.Prediction) []string {
	var why []string
	add := func(s string) {
		if s != "" && !slices.Contains(why, s) && len(why) < maxWhy {
			why = append(why, s)
		}
	}
	if !a.Sent && len(c.Before) > 0 {
		add("istiod no longer sends the service")
	}
	if len(c.Removed) > 0 {
		for _, d := range a.Dropped {
			add(d.Why)
		}
	}
	for _, list := range [][]Endpoint{c.Added, c.Reweighted} {
		for _, e := range list {
			for _, w := range a.Workloads {
				if w.UID == e.UID {
					add(w.Why)
				}
			}
		}
	}
	if why == nil {
		why = []string{}
	}
	return why
}

// summary counts what the changes do per viewpoint, most affected first:
// "network2 sidecars (cluster2/network2@cluster1): 12 services change, 3
// lose every endpoint".
func summary(changes []ServiceChange) []string {
	type tally struct {
		services          map[string]bool
		lostAll, lostRemo map[string]bool
	}
	by := map[string]*tally{}
	for _, c := range changes {
		t := by[c.Viewpoint]
		if t == nil {
			t = &tally{services: map[string]bool{}, lostAll: map[string]bool{}, lostRemo: map[string]bool{}}
			by[c.Viewpoint] = t
		}
		t.services[c.Service] = true
		if c.LostAll {
			t.lostAll[c.Service] = true
		}
		if c.LostRemote {
			t.lostRemo[c.Service] = true
		}
	}
	names := slices.Sorted(maps.Keys(by))
	sort.SliceStable(names, func(i, j int) bool { return len(by[names[i]].services) > len(by[names[j]].services) })
	var out []string
	for _, n := range names {
		t := by[n]
		s := fmt.Sprintf("%s: %s change", n, humanize.Count(len(t.services), "service"))
		if k := len(t.lostAll); k > 0 {
			s += fmt.Sprintf(", %d lose every endpoint", k)
		}
		if k := len(t.lostRemo); k > 0 {
			s += fmt.Sprintf(", %d lose every remote endpoint", k)
		}
		out = append(out, s)
	}
	return out
}

// joinEndpoints writes endpoints for a line of text.
func joinEndpoints(eps []Endpoint) string {
	if len(eps) == 0 {
		return "(none)"
	}
	parts := make([]string, len(eps))
	for i, e := range eps {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}
