package whatif

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
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
	// Namespace is the client namespace the change is predicted from
	// (explain --from VIEWPOINT --namespace NAMESPACE predicts the same;
	// for a ztunnel view, none). Where the namespace makes a difference,
	// Namespaces are the namespaces with clients the change stands for,
	// NamespaceClass says so for people ("sample", "4 other namespaces
	// with sidecars (…)"), and UnchangedIn names the classes of the same
	// viewpoint that see no change; else the change holds for every
	// namespace.
	Namespace      string   `json:"namespace,omitempty"`
	Namespaces     []string `json:"namespaces,omitempty"`
	NamespaceClass string   `json:"namespaceClass,omitempty"`
	UnchangedIn    []string `json:"unchangedIn,omitempty"`
	// NoClient: no client runs where the change is seen (no sidecar on the
	// viewpoint's network, no pod in ambient mode for a ztunnel view):
	// reported, but never failing --fail-on lost or lost-remote.
	NoClient bool `json:"noClient,omitempty"`
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

// viewpoint is one proxy a what-if predicts for, and the namespaces its
// clients run in.
type viewpoint struct {
	name string
	vp   xdsclient.Viewpoint
	cp   string
	// clients are the namespaces where its clients run (clientNamespaces).
	clients []string
}

// proxy is the viewpoint in namespace ns as explain --from VP --namespace
// NS predicts for it (horizon.ProxyOf, the one conversion).
func (v viewpoint) proxy(ns string) horizon.Proxy {
	vp := v.vp
	vp.Namespace = ns
	return horizon.ProxyOf(vp)
}

// Endpoints compares, for every control plane and every viewpoint of it,
// every service port's predicted endpoints in before and after, and lists
// the ones that change.
func Endpoints(before, after *model.Snapshot) []ServiceChange {
	out, _ := compareAll(before, after)
	return out
}

// job is one service port from one viewpoint in namespace ns (its class's).
type job struct {
	host string
	port int32
	ns   string
}

// group is the jobs of one service port from one viewpoint: one per
// namespace class, from start.
type group struct {
	start   int
	vp      int
	classes []nsClass
}

// compareAll is Endpoints, and the services whose prediction changes in
// any way from some viewpoint (endpoints, or only why some are dropped).
func compareAll(before, after *model.Snapshot) ([]ServiceChange, map[string]bool) {
	affected := map[string]bool{}
	var out []ServiceChange
	// Each side's control-plane views, built once: explain predicts from
	// the same views (analysis/plane), so the before is explain's.
	sides := [2]*plane.Set{plane.NewSet(before, nil), plane.NewSet(after, nil)}
	special := specialNamespaces(before, after)
	for _, cp := range controlPlanes(before, after) {
		pvs := [2]*plane.View{sides[0].Of(cp), sides[1].Of(cp)}
		bv, av := pvs[0].Snap, pvs[1].Snap
		vps := sidecarViewpoints(pvs)
		var jobs []job
		var groups []group
		for _, host := range hostnames(bv, av) {
			sp := special.forHost(host)
			cls := make([][]nsClass, len(vps))
			for v, vp := range vps {
				cls[v] = namespaceClasses(vp.clients, sp)
			}
			for _, port := range ports(bv, av, host) {
				for v := range vps {
					groups = append(groups, group{start: len(jobs), vp: v, classes: cls[v]})
					for _, c := range cls[v] {
						jobs = append(jobs, job{host, port, c.rep})
					}
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
				for _, g := range groups {
					vp := vps[g.vp]
					for i := g.start; i < g.start+len(g.classes); i++ {
						j := jobs[i]
						preds[side][i] = pv.Predict(j.host, "", j.port, vp.proxy(j.ns))
					}
				}
			}()
		}
		wg.Wait()
		for _, g := range groups {
			n := len(g.classes)
			out = append(out, compareClasses(preds[0][g.start:g.start+n], preds[1][g.start:g.start+n], vps[g.vp], g.classes, affected)...)
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
		if out[i].Viewpoint != out[j].Viewpoint {
			return out[i].Viewpoint < out[j].Viewpoint
		}
		return out[i].NamespaceClass < out[j].NamespaceClass
	})
	return out, affected
}

// compareClasses is one service port from one viewpoint: one change when
// every namespace class sees it alike (the namespace makes no
// difference), else one per class that changes, each saying where it does
// not.
func compareClasses(b, a []horizon.Prediction, vp viewpoint, classes []nsClass, affected map[string]bool) []ServiceChange {
	alike := true
	for k := range b {
		if !sameDrops(b[k], a[k]) {
			affected[b[k].Service] = true
			affected[a[k].Service] = true
		}
		alike = alike && sameEDS(b[k], b[0]) && sameEDS(a[k], a[0]) && b[k].NoEndpoints == b[0].NoEndpoints && a[k].NoEndpoints == a[0].NoEndpoints
	}
	clients := len(vp.clients) > 0
	if alike {
		c, changed := compareEDS(b[0], a[0], vp)
		if !changed {
			return nil
		}
		affected[c.Service] = true
		c.Namespace, c.NoClient = classes[0].rep, !clients
		return []ServiceChange{c}
	}
	var out []ServiceChange
	var unchanged []string
	for k, cl := range classes {
		c, changed := compareEDS(b[k], a[k], vp)
		if !changed {
			unchanged = append(unchanged, cl.label())
			continue
		}
		affected[c.Service] = true
		c.Namespace, c.Namespaces, c.NamespaceClass, c.NoClient = cl.rep, cl.names, cl.label(), len(cl.names) == 0
		out = append(out, c)
	}
	for i := range out {
		out[i].UnchangedIn = unchanged
	}
	return out
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
// and a proxy without NETWORK in the control plane's cluster, each with
// the namespaces its clients run in.
func sidecarViewpoints(pvs [2]*plane.View) []viewpoint {
	before, after, cp := pvs[0].Snap, pvs[1].Snap, pvs[0].Name
	var out []viewpoint
	seen := map[string]bool{}
	add := func(vp xdsclient.Viewpoint) {
		vp.ControlPlane = cp
		name := vp.String()
		if !seen[name] {
			seen[name] = true
			// The clients are the mesh's (a control plane's cut holds no pods).
			clients := clientNamespaces(vp.Cluster, vp.Network, pvs[0].Full, pvs[1].Full)
			out = append(out, viewpoint{name: name, vp: vp, cp: cp, clients: clients})
		}
	}
	for _, s := range []*model.Snapshot{before, after} {
		for _, vp := range horizon.SidecarViewpoints(s, "") {
			add(vp)
		}
	}
	home := model.ControlPlaneCluster(cp)
	if home == "" && len(before.Clusters) > 0 {
		home = before.Clusters[0].ID
	}
	add(xdsclient.Viewpoint{Cluster: home, NoNetwork: true, NodeType: xdsclient.Sidecar})
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
	c.LostRemote = !c.LostAll && remote(c.Before, vp.vp.Cluster) > 0 && remote(c.After, vp.vp.Cluster) == 0
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
		if x.Address != y.Address || x.Port != y.Port || x.Weight != y.Weight || x.Priority != y.Priority || x.Kind != y.Kind || x.Network != y.Network || x.Cluster != y.Cluster ||
			x.Health != y.Health || x.Locality != y.Locality || x.LocalityWeight != y.LocalityWeight || x.Effect != y.Effect || x.Pod != y.Pod {
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
		before[e.Key()] = e
	}
	after := map[string]bool{}
	for _, e := range c.After {
		after[e.Key()] = true
		old, ok := before[e.Key()]
		switch {
		case !ok:
			c.Added = append(c.Added, e)
		case !old.same(e) || old.Count != e.Count:
			c.Reweighted = append(c.Reweighted, e)
		}
	}
	for _, e := range c.Before {
		if !after[e.Key()] {
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
		if !found && e.Kind.gatewayKind() {
			// A gateway entry goes when the endpoints behind it do: say why
			// they are dropped.
			for _, d := range a.Dropped {
				if d.Network == e.Network {
					add(d.Why)
					found = true
				}
			}
		}
		if !found && e.Kind.gatewayKind() {
			add(fmt.Sprintf("gateway %s no longer stands for endpoints of %s", e.Address, orNone(e.Network)))
		} else if !found && a.NoEndpoints == "" {
			add(fmt.Sprintf("%s is no longer an endpoint of the service", e.Address))
		}
	}
	for _, list := range [][]Endpoint{c.Added, c.Reweighted} {
		for _, e := range list {
			add(e.HealthWhy)
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
	noClient := !ambientClients(before, after)
	var out []ServiceChange
	for _, host := range hostnames(before, after) {
		b, a := bv.Predict(host), av.Predict(host)
		c := ServiceChange{Service: host, Viewpoint: name, ControlPlane: cp, Proxy: "ztunnel",
			Before: workloads(b), After: workloads(a), NoClient: noClient}
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

// ambientClients: some pod of either snapshot runs in ambient mode (its
// node's ztunnel is its proxy).
func ambientClients(snaps ...*model.Snapshot) bool {
	for _, s := range snaps {
		for _, p := range s.Proxies {
			if p.Kind == model.ProxyAmbient {
				return true
			}
		}
	}
	return false
}

func workloads(p ambient.Prediction) []Endpoint {
	out := []Endpoint{}
	for _, w := range p.Workloads {
		e := Endpoint{UID: w.UID, Kind: endpointKind(w.Kind), Cluster: w.Cluster, Network: w.Network, Weight: max(w.Capacity, 1)}
		if len(w.Addresses) > 0 {
			e.Address = w.Addresses[0]
		}
		if w.Gateway != "" {
			e.Address = w.Gateway
		}
		out = append(out, e)
	}
	total := 0.0
	for _, e := range out {
		total += float64(e.Weight)
	}
	for i := range out {
		out[i].Share = float64(int(float64(out[i].Weight)/total*10000+0.5)) / 10000
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

// Where is the viewpoint and, when the namespace makes a difference, the
// namespace class: "cluster1/network1@cluster1 in sample".
func (c ServiceChange) Where() string {
	switch {
	case c.NamespaceClass != "":
		return c.Viewpoint + " in " + c.NamespaceClass
	case len(c.UnchangedIn) > 0:
		return c.Viewpoint + " in " + c.Namespace + " (no client runs there)"
	}
	return c.Viewpoint
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
		t := by[c.Where()]
		if t == nil {
			t = &tally{services: map[string]bool{}, lostAll: map[string]bool{}, lostRemo: map[string]bool{}}
			by[c.Where()] = t
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
