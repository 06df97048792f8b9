package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// KubeChange is one change meshscope saw in a cluster between two
// snapshots: endpoints of a service added, removed or changing readiness,
// or a network gateway appearing or going away. Readers put them next to
// the xDS pushes they cause.
type KubeChange struct {
	Time    time.Time `json:"time"`
	Cluster string    `json:"cluster"`
	// Service is the hostname whose endpoints changed ("" for a gateway).
	Service  string   `json:"service,omitempty"`
	Added    []string `json:"added,omitempty"`    // endpoint addresses
	Removed  []string `json:"removed,omitempty"`  // endpoint addresses
	Ready    []string `json:"ready,omitempty"`    // became ready
	NotReady []string `json:"notReady,omitempty"` // stopped being ready
	// Gateway is "network addr:port" of a gateway that appeared
	// (GatewayGone false) or went away.
	Gateway     string `json:"gateway,omitempty"`
	GatewayGone bool   `json:"gatewayGone,omitempty"`
	// GatewayName is a gateway DNS name whose answer changed, in Network
	// (Cluster holds its gateway): the addresses it gives now and gave
	// before (none: it does not resolve) — what istiod turns into gateways
	// (istiod-rules.md G7) when it asks again. NameChange says how.
	GatewayName      string     `json:"gatewayName,omitempty"`
	Network          string     `json:"network,omitempty"`
	GatewayAddresses []string   `json:"gatewayAddresses,omitempty"`
	GatewayPrevious  []string   `json:"gatewayPrevious,omitempty"`
	NameChange       NameChange `json:"nameChange,omitempty"`
}

// NameChange says how a gateway DNS name changed between two snapshots.
type NameChange string

const (
	// nameNew: a gateway with this name appeared.
	nameNew NameChange = "new"
	// NameAnswer: the name's answer changed.
	NameAnswer NameChange = "answer"
	// nameGone: no gateway has this name any more.
	nameGone NameChange = "gone"
)

// Summary is the change in a few words.
func (c KubeChange) Summary() string {
	if c.GatewayName != "" {
		return c.nameSummary()
	}
	if c.Gateway != "" {
		if c.GatewayGone {
			return "gateway gone: " + c.Gateway
		}
		return "gateway up: " + c.Gateway
	}
	var parts []string
	add := func(sign string, l []string) {
		if len(l) == 0 {
			return
		}
		s := sign + strings.Join(l[:min(len(l), 3)], " "+sign)
		if len(l) > 3 {
			s += fmt.Sprintf(" (+%d)", len(l)-3)
		}
		parts = append(parts, s)
	}
	add("+", c.Added)
	add("-", c.Removed)
	add("ready ", c.Ready)
	add("unready ", c.NotReady)
	return ShortHost(c.Service) + ": " + strings.Join(parts, ", ")
}

// nameSummary: "gateway name NAME of NETWORK: NOW (was BEFORE)".
func (c KubeChange) nameSummary() string {
	return "gateway name " + c.GatewayName + " of " + c.Network + ": " + c.AnswerText()
}

// AnswerText is a gateway DNS name's change without the name: "NOW (was
// BEFORE)", "does not resolve (was …)", "A, B (new)".
func (c KubeChange) AnswerText() string {
	addrs := func(l []string) string {
		if len(l) == 0 {
			return "does not resolve"
		}
		return strings.Join(l, ", ")
	}
	was := " (did not resolve before)"
	if len(c.GatewayPrevious) > 0 {
		was = " (was " + strings.Join(c.GatewayPrevious, ", ") + ")"
	}
	switch c.NameChange {
	case nameNew:
		return addrs(c.GatewayAddresses) + " (new)"
	case nameGone:
		if len(c.GatewayPrevious) == 0 {
			return "no gateway has it any more"
		}
		return "no gateway has it any more" + was
	}
	return addrs(c.GatewayAddresses) + was
}

// IsDNS reports whether the change is a gateway DNS name's new answer
// (not a change of a cluster's objects).
func (c KubeChange) IsDNS() bool { return c.GatewayName != "" }

// Source is where the change comes from: the gateway DNS name, else the
// cluster.
func (c KubeChange) Source() string {
	if c.GatewayName != "" {
		return c.GatewayName
	}
	return c.Cluster
}

// DiffSnapshots lists what changed from prev to next, per cluster and
// service, at next's time. It compares endpoint addresses and readiness and
// the gateways; it is cheap for unchanged services (pointer-equal parts of
// consecutive snapshots are skipped).
func DiffSnapshots(prev, next *Snapshot) []KubeChange {
	if prev == nil || next == nil {
		return nil
	}
	var out []KubeChange
	for _, svc := range next.Services {
		old := prev.Service(svc.Hostname)
		for id, sic := range svc.Clusters {
			var before []Endpoint
			if old != nil {
				if o := old.Clusters[id]; o != nil {
					if o == sic {
						continue
					}
					before = o.Endpoints
				}
			}
			if c, ok := diffEndpoints(before, sic.Endpoints); ok {
				c.Time, c.Cluster, c.Service = next.Time, id, svc.Hostname
				out = append(out, c)
			}
		}
		if old != nil {
			for id, o := range old.Clusters {
				if _, still := svc.Clusters[id]; !still {
					if c, ok := diffEndpoints(o.Endpoints, nil); ok {
						c.Time, c.Cluster, c.Service = next.Time, id, svc.Hostname
						out = append(out, c)
					}
				}
			}
		}
	}
	gw := func(g Gateway) string {
		if g.Name != "" {
			// The change comes from a DNS answer: say which name.
			return fmt.Sprintf("%s %s:%d (DNS name %s)", g.Network, g.Address, g.Port, g.Name)
		}
		return fmt.Sprintf("%s %s:%d", g.Network, g.Address, g.Port)
	}
	// Gateways from DNS names change with their name's answer: one change
	// per name, below, not one per address.
	had := map[string]Gateway{}
	for _, g := range prev.Gateways {
		if g.Name == "" && !g.Hostname {
			had[gw(g)] = g
		}
	}
	for _, g := range next.Gateways {
		if g.Name != "" || g.Hostname {
			continue
		}
		if _, ok := had[gw(g)]; ok {
			delete(had, gw(g))
			continue
		}
		out = append(out, KubeChange{Time: next.Time, Cluster: g.Cluster, Gateway: gw(g)})
	}
	for k, g := range had {
		out = append(out, KubeChange{Time: next.Time, Cluster: g.Cluster, Gateway: k, GatewayGone: true})
	}
	out = append(out, diffGatewayNames(prev, next)...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Cluster != out[j].Cluster {
			return out[i].Cluster < out[j].Cluster
		}
		return out[i].Service+out[i].Gateway+out[i].GatewayName < out[j].Service+out[j].Gateway+out[j].GatewayName
	})
	return out
}

func diffEndpoints(before, after []Endpoint) (KubeChange, bool) {
	var c KubeChange
	old := make(map[string]bool, len(before))
	for _, e := range before {
		old[e.Address] = e.Ready
	}
	for _, e := range after {
		was, ok := old[e.Address]
		switch {
		case !ok:
			c.Added = append(c.Added, e.Address)
		case was != e.Ready && e.Ready:
			c.Ready = append(c.Ready, e.Address)
		case was != e.Ready:
			c.NotReady = append(c.NotReady, e.Address)
		}
		delete(old, e.Address)
	}
	for a := range old {
		c.Removed = append(c.Removed, a)
	}
	sort.Strings(c.Removed)
	return c, len(c.Added)+len(c.Removed)+len(c.Ready)+len(c.NotReady) > 0
}

// gatewayName is what a snapshot's gateways make of one DNS name: the
// addresses it resolved to (sorted, none when it does not resolve), its
// network and the cluster of its gateway.
type gatewayName struct {
	addrs            []string
	network, cluster string
}

func gatewayNamesOf(s *Snapshot) map[string]*gatewayName {
	out := map[string]*gatewayName{}
	for _, g := range s.Gateways {
		name := g.Name
		if g.Hostname {
			name = g.Address
		}
		if name == "" {
			continue
		}
		n := out[name]
		if n == nil {
			n = &gatewayName{network: g.Network, cluster: g.Cluster}
			out[name] = n
		}
		if !g.Hostname && !slices.Contains(n.addrs, g.Address) {
			n.addrs = append(n.addrs, g.Address)
		}
	}
	for _, n := range out {
		sort.Strings(n.addrs)
	}
	return out
}

// diffGatewayNames is one change per gateway DNS name that appeared, went
// or whose answer changed from prev to next.
func diffGatewayNames(prev, next *Snapshot) []KubeChange {
	before, after := gatewayNamesOf(prev), gatewayNamesOf(next)
	var out []KubeChange
	for name, n := range after {
		c := KubeChange{Time: next.Time, Cluster: n.cluster, Network: n.network, GatewayName: name, GatewayAddresses: n.addrs, NameChange: nameNew}
		if b, ok := before[name]; ok {
			if slices.Equal(b.addrs, n.addrs) {
				continue
			}
			c.GatewayPrevious, c.NameChange = b.addrs, NameAnswer
		}
		out = append(out, c)
	}
	for name, b := range before {
		if _, ok := after[name]; !ok {
			out = append(out, KubeChange{Time: next.Time, Cluster: b.cluster, Network: b.network, GatewayName: name, GatewayPrevious: b.addrs, NameChange: nameGone})
		}
	}
	return out
}
