package plane

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// NamedGateway is one gateway whose address is a DNS name, before
// resolution: what its name became is in the snapshot's gateways that
// carry the name.
type NamedGateway struct {
	Name, Network, Cluster, Source string
	Port                           uint32
	// Resolved are meshscope's addresses for it; NotResolvedBy the
	// control planes whose istiod does not resolve gateway names.
	Resolved      []string
	NotResolvedBy []string
}

// NamedGateways lists the snapshot's gateways that have a DNS name, one
// per (name, network, cluster, source).
func NamedGateways(snap *model.Snapshot) []NamedGateway {
	byKey := map[string]*NamedGateway{}
	var keys []string
	for _, g := range snap.Gateways {
		if g.Name == "" && !g.Hostname {
			continue
		}
		name := g.HostOrAddress()
		k := strings.Join([]string{name, g.Network, g.Cluster, g.Source()}, "\x00")
		ng := byKey[k]
		if ng == nil {
			ng = &NamedGateway{Name: name, Network: g.Network, Cluster: g.Cluster, Source: g.Source(), Port: g.Port, NotResolvedBy: g.NotResolvedBy}
			byKey[k] = ng
			keys = append(keys, k)
		}
		if !g.Hostname && !slices.Contains(ng.Resolved, g.Address) {
			ng.Resolved = append(ng.Resolved, g.Address)
		}
	}
	sort.Strings(keys)
	out := make([]NamedGateway, 0, len(keys))
	for _, k := range keys {
		sort.Strings(byKey[k].Resolved)
		out = append(out, *byKey[k])
	}
	return out
}

// IstiodAddresses are the addresses istiod lists for a named gateway:
// its /debug/networkz gateways of the same network, cluster and port whose
// address no gateway of the snapshot without a name has (those are the
// ones istiod resolved), sorted.
func IstiodAddresses(snap *model.Snapshot, v model.IstiodView, ng NamedGateway) []string {
	plain := map[string]bool{}
	for _, g := range snap.Gateways {
		if g.Name == "" && !g.Hostname && g.Network == ng.Network {
			plain[g.Address] = true
		}
	}
	var out []string
	for _, g := range v.Gateways {
		if g.Network == ng.Network && g.Cluster == ng.Cluster && g.Port == ng.Port && !plain[g.Addr] && !slices.Contains(out, g.Addr) {
			out = append(out, g.Addr)
		}
	}
	sort.Strings(out)
	return out
}

// withIstiodNames prefers istiod's answers for gateway DNS names: where
// istiod's /debug/networkz (the view of control plane cp, if read) lists
// other addresses for a name than meshscope resolved, the prediction uses
// istiod's, since they are what its proxies get. It returns the snapshot
// to predict from and a note per name saying whose addresses it used.
func withIstiodNames(snap *model.Snapshot, views []model.IstiodView, cp string) (*model.Snapshot, []string) {
	groups := NamedGateways(snap)
	if len(groups) == 0 {
		return snap, nil
	}
	v := istiodViewOf(views, cp)
	var notes []string
	replace := map[int][]string{} // group index → istiod's addresses
	for i, ng := range groups {
		if slices.Contains(ng.NotResolvedBy, cp) {
			continue
		}
		what := fmt.Sprintf("gateway %s of %s", ng.Name, ng.Network)
		if v == nil {
			if len(ng.Resolved) > 0 {
				notes = append(notes, fmt.Sprintf("%s: predicted with %s, resolved from where meshscope runs (istiod resolves it itself)", what, strings.Join(ng.Resolved, ", ")))
			}
			continue
		}
		theirs := IstiodAddresses(snap, *v, ng)
		if slices.Equal(theirs, ng.Resolved) {
			if len(theirs) > 0 {
				notes = append(notes, fmt.Sprintf("%s: predicted with %s, as istiod resolves it (its /debug/networkz)", what, strings.Join(theirs, ", ")))
			}
			continue
		}
		replace[i] = theirs
		notes = append(notes, fmt.Sprintf("%s: predicted with istiod's addresses (its /debug/networkz) %s — meshscope resolved %s from where it runs",
			what, or(strings.Join(theirs, ", "), "none"), or(strings.Join(ng.Resolved, ", "), "nothing")))
	}
	if len(replace) == 0 {
		return snap, notes
	}
	of := func(g model.Gateway) int {
		for i, ng := range groups {
			if (g.Name != "" || g.Hostname) && g.HostOrAddress() == ng.Name && g.Network == ng.Network && g.Cluster == ng.Cluster && g.Source() == ng.Source {
				return i
			}
		}
		return -1
	}
	var gws []model.Gateway
	done := map[int]bool{}
	for _, g := range snap.Gateways {
		i := of(g)
		addrs, ok := replace[i]
		if i < 0 || !ok {
			gws = append(gws, g)
			continue
		}
		if done[i] {
			continue
		}
		done[i] = true
		if len(addrs) == 0 {
			u := g
			u.Address, u.Name, u.Hostname = groups[i].Name, "", true
			gws = append(gws, u)
		}
		for _, a := range addrs {
			r := g
			r.Address, r.Name, r.Hostname = a, groups[i].Name, false
			gws = append(gws, r)
		}
	}
	out := *snap
	out.Gateways = gws
	return &out, notes
}

// istiodViewOf returns the view of the istiod of control plane cp, if read.
// Another revision of a primary (cluster1@canary) without a view of its
// own takes its primary's: both read the same remote secrets and resolve
// the same names.
func istiodViewOf(views []model.IstiodView, cp string) *model.IstiodView {
	for _, name := range []string{cp, model.ControlPlaneCluster(cp)} {
		for i := range views {
			if views[i].ControlPlane == name {
				return &views[i]
			}
		}
	}
	return nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
