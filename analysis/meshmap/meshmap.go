// Package meshmap is the mesh drawn as a map: networks as boxes holding
// their clusters and gateways, each control plane with an arrow to every
// cluster it reads (broken where its remote secret is missing or fails),
// each cluster's data-plane mode, and doctor's problems placed on the box
// or arrow they concern. Build is pure (a snapshot, istiod's own views and
// a diagnosis in, a Map out); the terminal UI (:map) and `meshscope
// snapshot -o dot` (Dot) are two renderings of the same Map.
package meshmap

import (
	"slices"
	"strings"

	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// Map is the whole drawing.
type Map struct {
	Networks      []Network      `json:"networks"`
	ControlPlanes []ControlPlane `json:"controlPlanes"`
	// Problems are those that concern no box or arrow (a service's leak,
	// a mesh-wide setting).
	Problems []model.Problem `json:"problems,omitempty"`
}

// Network is one box: its clusters (those whose default network it is)
// and its gateways.
type Network struct {
	// Name is "" for the clusters without a network.
	Name     string          `json:"name"`
	Clusters []Cluster       `json:"clusters"`
	Gateways []Gateway       `json:"gateways,omitempty"`
	Problems []model.Problem `json:"problems,omitempty"`
}

// Cluster is a box inside its network's.
type Cluster struct {
	ID    string      `json:"id"`
	State model.State `json:"state"`
	// Mode is the cluster's data plane: sidecar, ambient, mixed (both), or
	// "" when it runs no proxy meshscope sees.
	Mode string `json:"mode,omitempty"`
	// Primary: an istiod runs here (a control plane of the map).
	Primary  bool            `json:"primary,omitempty"`
	Problems []model.Problem `json:"problems,omitempty"`
}

// Gateway is one of a network's gateways.
type Gateway struct {
	Cluster string `json:"cluster,omitempty"`
	// Address is host:port (the HBONE port when it has no mTLS port).
	Address string `json:"address"`
	// Healthy is false when a problem sits on it (no ready pod, no
	// address...); Health is "ok" or the worst problem's kind.
	Healthy  bool            `json:"healthy"`
	Health   string          `json:"health"`
	Problems []model.Problem `json:"problems,omitempty"`
	// ServesNothing: its second hop breaks for every request — no
	// listener, a port that misses, no router pod, a proxy whose network
	// sends requests elsewhere or that no istiod serves.
	ServesNothing bool `json:"servesNothing,omitempty"`
}

// servesNothing are the second-hop errors that break every path through
// a gateway, not one service's.
var servesNothing = map[model.ProblemKind]bool{model.ProblemHopNoListener: true, model.ProblemHopPort: true, model.ProblemHopPods: true,
	model.ProblemHopNetwork: true, model.ProblemHopProxy: true}

// ControlPlane is an istiod and the clusters it reads.
type ControlPlane struct {
	ID string `json:"id"`
	// Known is false when meshscope cannot tell which clusters it reads
	// (no remote secrets read, no clusterz): no arrows then.
	Known bool `json:"known"`
	// From is where meshscope learned it: "secrets" or "clusterz".
	From   string  `json:"from,omitempty"`
	Arrows []Arrow `json:"arrows,omitempty"`
	// Problems concern the control plane itself (not one of its arrows).
	Problems []model.Problem `json:"problems,omitempty"`
}

// Arrow is a control plane reading a remote cluster.
type Arrow struct {
	To string `json:"to"`
	// Broken: its remote secret is missing, or the cluster cannot be read
	// through it; Why says which in a few words.
	Broken   bool            `json:"broken,omitempty"`
	Why      string          `json:"why,omitempty"`
	Problems []model.Problem `json:"problems,omitempty"`
}

// arrowKinds are the problems that concern a control plane's reading of a
// cluster, not the cluster itself: they sit on the arrow.
func arrowKind(kind string) bool {
	return strings.HasPrefix(kind, "remote-secret") || kind == "istiod-disagrees" || kind == "control-plane-missing-cluster"
}

// Build draws the map of a snapshot from its control-plane views (planes:
// which clusters each control plane reads, from its remote secrets or its
// istiod's clusterz), problems a diagnosis of it (explain.Diagnose) whose
// errors and warnings it places.
func Build(planes *plane.Set, problems []model.Problem) Map {
	var m Map
	snap := planes.Snapshot()
	if snap == nil {
		return m
	}
	cps := snap.ControlPlanes()
	netIdx := map[string]int{}
	addNet := func(name string) int {
		if i, ok := netIdx[name]; ok {
			return i
		}
		netIdx[name] = len(m.Networks)
		m.Networks = append(m.Networks, Network{Name: name})
		return netIdx[name]
	}
	for _, n := range snap.Networks {
		addNet(n.Name)
	}
	clusterAt := map[string][2]int{} // cluster ID → network, cluster index
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		if c.State == model.StateRemoved {
			continue
		}
		ni := addNet(c.Network)
		n := &m.Networks[ni]
		clusterAt[c.ID] = [2]int{ni, len(n.Clusters)}
		n.Clusters = append(n.Clusters, Cluster{ID: c.ID, State: c.State, Mode: mode(snap, c.ID), Primary: slices.Contains(cps, c.ID)})
	}
	for ni := range m.Networks {
		n := &m.Networks[ni]
		for _, g := range snap.GatewaysFor(n.Name) {
			addr := g.Address + ":" + itoa(g.Port)
			if g.Port == 0 && g.HBONEPort != 0 {
				addr = g.Address + ":" + itoa(g.HBONEPort) + " (hbone)"
			}
			n.Gateways = append(n.Gateways, Gateway{Cluster: g.Cluster, Address: addr, Healthy: true, Health: "ok"})
		}
	}
	// Networks with nothing in them (a meshNetworks entry with no cluster
	// and no gateway) are left out; so is an unnamed one left empty.
	m.Networks = slices.DeleteFunc(m.Networks, func(n Network) bool { return len(n.Clusters) == 0 && len(n.Gateways) == 0 })
	reindex(&m, clusterAt)
	for _, cp := range cps {
		m.ControlPlanes = append(m.ControlPlanes, controlPlane(snap, planes.Of(cp)))
	}
	for _, p := range problems {
		// Information (what a mode always does, not a fault) would crowd
		// the boxes: :problems and doctor list it.
		if p.Severity == model.SeverityError || p.Severity == model.SeverityWarning {
			place(&m, snap, clusterAt, p)
		}
	}
	for ni := range m.Networks {
		for gi := range m.Networks[ni].Gateways {
			g := &m.Networks[ni].Gateways[gi]
			for _, p := range g.Problems {
				if g.Healthy || p.Severity == model.SeverityError {
					g.Healthy, g.Health = false, string(p.Kind)
				}
				if p.Severity == model.SeverityError && servesNothing[p.Kind] {
					g.ServesNothing = true
				}
			}
			if g.ServesNothing {
				g.Health = "serves nothing"
			}
		}
	}
	return m
}

// reindex rebuilds the cluster positions after empty networks are gone.
func reindex(m *Map, at map[string][2]int) {
	clear(at)
	for ni, n := range m.Networks {
		for ci, c := range n.Clusters {
			at[c.ID] = [2]int{ni, ci}
		}
	}
}

// controlPlane is cp's arrows: one per cluster it reads, broken when the
// cluster cannot be read through its secret; and a broken one per cluster
// of the mesh it does not read (no remote secret, or one refused).
func controlPlane(snap *model.Snapshot, pv *plane.View) ControlPlane {
	cp, reads, known := pv.Name, pv.Reads, pv.Known()
	out := ControlPlane{ID: cp, Known: known, From: string(pv.From)}
	if !known {
		return out
	}
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		if c.ID == cp || c.State == model.StateRemoved {
			continue
		}
		viaSecret := len(c.SecretsFrom(cp)) > 0
		refused := false
		switch c.ErrorKind {
		case model.ErrBadKubeconfig, model.ErrRefusedConfig, model.ErrDuplicateID:
			refused = true
		}
		a := Arrow{To: c.ID}
		switch {
		case slices.Contains(reads, c.ID) && !refused:
			if viaSecret && (c.State == model.StateError || c.State == model.StateTimeout) {
				a.Broken, a.Why = true, "secret fails: "+string(c.State)
			}
		case viaSecret:
			a.Broken, a.Why = true, "secret refused"
		case refused:
			continue // not a member of the mesh (as doctor counts it)
		default:
			a.Broken, a.Why = true, "no remote secret"
		}
		out.Arrows = append(out.Arrows, a)
	}
	return out
}

// place puts a problem on the box or arrow it concerns.
func place(m *Map, snap *model.Snapshot, at map[string][2]int, p model.Problem) {
	kind := string(p.Kind)
	switch {
	case kind == "control-plane-missing-cluster":
		// Cluster is the control plane; the sentence names the cluster.
		if cp := m.controlPlane(p.Cluster); cp != nil {
			for i := range cp.Arrows {
				if a := &cp.Arrows[i]; a.Broken && namesCluster(p.Sentence, a.To) {
					a.Problems = append(a.Problems, p)
					return
				}
			}
			cp.Problems = append(cp.Problems, p)
			return
		}
	case arrowKind(kind) && p.Cluster != "":
		placed := false
		for ci := range m.ControlPlanes {
			for ai := range m.ControlPlanes[ci].Arrows {
				if a := &m.ControlPlanes[ci].Arrows[ai]; a.To == p.Cluster {
					a.Problems = append(a.Problems, p)
					placed = true
				}
			}
		}
		if placed {
			return
		}
	case strings.HasPrefix(kind, "second-hop-") && p.Network != "":
		// The gateway the path breaks at (its network, cluster and address).
		for ni := range m.Networks {
			for gi := range m.Networks[ni].Gateways {
				g := &m.Networks[ni].Gateways[gi]
				if m.Networks[ni].Name == p.Network && g.Cluster == p.Cluster && strings.Contains(p.Sentence, g.Address) {
					g.Problems = append(g.Problems, p)
					return
				}
			}
		}
	case strings.HasPrefix(kind, "gateway-") && p.Cluster != "":
		if pos, ok := at[p.Cluster]; ok {
			n := &m.Networks[pos[0]]
			if g := gatewayOf(n, snap, p); g != nil {
				g.Problems = append(g.Problems, p)
			} else {
				n.Problems = append(n.Problems, p)
			}
			return
		}
	}
	if p.Cluster != "" {
		if pos, ok := at[p.Cluster]; ok {
			c := &m.Networks[pos[0]].Clusters[pos[1]]
			c.Problems = append(c.Problems, p)
			return
		}
		if cp := m.controlPlane(p.Cluster); cp != nil {
			cp.Problems = append(cp.Problems, p)
			return
		}
	}
	m.Problems = append(m.Problems, p)
}

// gatewayOf is the gateway of n a gateway problem concerns: the one of its
// cluster whose Service is the problem's (a gateway Service without an
// address is no gateway at all: the problem then sits on the network).
func gatewayOf(n *Network, snap *model.Snapshot, p model.Problem) *Gateway {
	for i := range n.Gateways {
		g := &n.Gateways[i]
		if g.Cluster != p.Cluster {
			continue
		}
		for _, sg := range snap.Gateways {
			if sg.Cluster == g.Cluster && sg.Service != "" && serviceHost(sg.Service) == p.Service {
				return g
			}
		}
	}
	return nil
}

// serviceHost is the hostname of a "namespace/name" Service.
func serviceHost(nsName string) string {
	ns, name, _ := strings.Cut(nsName, "/")
	return model.Hostname(name, ns)
}

// namesCluster says whether a sentence names cluster id ("cluster
// cluster3:", not "cluster cluster30").
func namesCluster(sentence, id string) bool {
	for rest := sentence; ; {
		i := strings.Index(rest, "cluster "+id)
		if i < 0 {
			return false
		}
		rest = rest[i+len("cluster "+id):]
		if rest == "" || !isNameByte(rest[0]) {
			return true
		}
	}
}

func isNameByte(b byte) bool {
	return b == '-' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
}

func (m *Map) controlPlane(id string) *ControlPlane {
	for i := range m.ControlPlanes {
		if m.ControlPlanes[i].ID == id {
			return &m.ControlPlanes[i]
		}
	}
	return nil
}

// mode is a cluster's data plane, from the proxies meshscope sees there:
// sidecars (and gateways) make "sidecar", pods captured by ambient mode
// "ambient", both "mixed". A ztunnel alone says nothing of the workloads.
func mode(snap *model.Snapshot, cluster string) string {
	var sidecar, amb bool
	for _, p := range snap.Proxies {
		if p.Cluster != cluster {
			continue
		}
		switch p.Kind {
		case model.ProxySidecar:
			sidecar = true
		case model.ProxyAmbient:
			amb = true
		}
	}
	switch {
	case sidecar && amb:
		return "mixed"
	case amb:
		return "ambient"
	case sidecar:
		return "sidecar"
	}
	return ""
}

func itoa(n uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// Counts are the problems on a box or arrow by severity.
func Counts(ps []model.Problem) (errs, warns int) {
	for _, p := range ps {
		switch p.Severity {
		case model.SeverityError:
			errs++
		case model.SeverityWarning:
			warns++
		}
	}
	return errs, warns
}
