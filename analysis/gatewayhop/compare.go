package gatewayhop

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/xdsclient"
)

// Comparing what istiod really sent an impersonated gateway with the
// prediction: its listeners on AUTO_PASSTHROUGH ports with their SNI
// filter chains, and its SNI-DNAT clusters. (The clusters' endpoints are
// compared as a sidecar's are, by analysis/explain.)

// sniPrefix starts every SNI-DNAT cluster name and the server name of its
// filter chain (TrafficDirectionOutbound + "_.").
const sniPrefix = "outbound_."

// Difference is one way what istiod sent a gateway differs from the
// prediction.
type Difference struct {
	// What is "listener", "chain" or "cluster"; Name the listener, SNI or
	// cluster name.
	What     string `json:"what"`
	Name     string `json:"name"`
	Sentence string `json:"sentence"`
}

// CompareConfig compares the listeners and SNI-DNAT clusters istiod sent
// a gateway with c. Only what the second hop is made of is compared:
// listeners with SNI-DNAT chains, and outbound_ clusters.
func CompareConfig(c *Config, listeners []xdsclient.Listener, clusters []xdsclient.Cluster) []Difference {
	var out []Difference
	sent := map[string]xdsclient.Listener{}
	for _, l := range listeners {
		if len(sniNames(l)) > 0 {
			sent[l.Name] = l
		}
	}
	for _, l := range c.Listeners {
		got, ok := sent[l.Name]
		delete(sent, l.Name)
		switch {
		case l.Dropped != "" && ok:
			out = append(out, Difference{"listener", l.Name, fmt.Sprintf("istiod sends listener %s with %d SNI chain(s); meshscope predicts none (%s)", l.Name, len(sniNames(got)), l.Dropped)})
		case l.Dropped != "":
		case !ok:
			out = append(out, Difference{"listener", l.Name, fmt.Sprintf("istiod sends no listener %s with SNI chains; meshscope predicts one with %d chain(s)", l.Name, len(l.Chains))})
		default:
			out = append(out, chainDiffs(l, sniNames(got))...)
		}
	}
	for name, l := range sent {
		out = append(out, Difference{"listener", name, fmt.Sprintf("istiod sends listener %s with %d SNI chain(s) (e.g. %s); meshscope predicts no AUTO_PASSTHROUGH server on port %d",
			name, len(sniNames(l)), sniNames(l)[0], l.Port)})
	}
	out = append(out, clusterDiffs(c, clusters)...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].What != out[j].What {
			return out[i].What > out[j].What // listener, chain, cluster
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// sniNames are the server names of a listener's SNI-DNAT chains.
func sniNames(l xdsclient.Listener) []string {
	var out []string
	for _, fc := range l.SNIChains {
		for _, n := range fc.ServerNames {
			if strings.HasPrefix(n, sniPrefix) {
				out = append(out, n)
			}
		}
	}
	return out
}

func chainDiffs(l Listener, got []string) []Difference {
	var out []Difference
	want := map[string]bool{}
	for _, ch := range l.Chains {
		want[ch.SNI] = true
		if !slices.Contains(got, ch.SNI) {
			out = append(out, Difference{"chain", ch.SNI, fmt.Sprintf("listener %s has no filter chain for %s; meshscope predicts one", l.Name, ch.SNI)})
		}
	}
	for _, n := range got {
		if !want[n] {
			out = append(out, Difference{"chain", n, fmt.Sprintf("listener %s has a filter chain for %s that meshscope does not predict", l.Name, n)})
		}
	}
	return out
}

func clusterDiffs(c *Config, clusters []xdsclient.Cluster) []Difference {
	var out []Difference
	got := map[string]xdsclient.Cluster{}
	for _, cl := range clusters {
		if strings.HasPrefix(cl.Name, sniPrefix) {
			got[cl.Name] = cl
		}
	}
	for _, p := range c.Clusters {
		g, ok := got[p.Name]
		delete(got, p.Name)
		switch {
		case !ok:
			out = append(out, Difference{"cluster", p.Name, fmt.Sprintf("istiod sends no cluster %s; meshscope predicts a %s cluster", p.Name, p.Type)})
		case g.Type != p.Type:
			out = append(out, Difference{"cluster", p.Name, fmt.Sprintf("cluster %s is %s; meshscope predicts %s", p.Name, g.Type, p.Type)})
		}
	}
	for name := range got {
		out = append(out, Difference{"cluster", name, fmt.Sprintf("istiod sends cluster %s that meshscope does not predict", name)})
	}
	return out
}
