package model

import (
	"fmt"
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
}

// Summary is the change in a few words.
func (c KubeChange) Summary() string {
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
	had := map[string]Gateway{}
	for _, g := range prev.Gateways {
		had[gw(g)] = g
	}
	for _, g := range next.Gateways {
		if _, ok := had[gw(g)]; ok {
			delete(had, gw(g))
			continue
		}
		out = append(out, KubeChange{Time: next.Time, Cluster: g.Cluster, Gateway: gw(g)})
	}
	for k, g := range had {
		out = append(out, KubeChange{Time: next.Time, Cluster: g.Cluster, Gateway: k, GatewayGone: true})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Cluster != out[j].Cluster {
			return out[i].Cluster < out[j].Cluster
		}
		return out[i].Service+out[i].Gateway < out[j].Service+out[j].Gateway
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
