package explain

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/meshscope/meshscope/model"
)

// nameChangeRecent is how long doctor reports that a gateway name's
// answer changed.
const nameChangeRecent = 10 * time.Minute

// namedGateway is one gateway whose address is a DNS name, before
// resolution: what its name became is in the snapshot's gateways that
// carry the name.
type namedGateway struct {
	name, network, cluster, source string
	port                           uint32
	resolved                       []string // meshscope's addresses
	notResolvedBy                  []string
}

// namedGateways lists the snapshot's gateways that have a DNS name, one
// per (name, network, cluster, source).
func namedGateways(snap *model.Snapshot) []namedGateway {
	byKey := map[string]*namedGateway{}
	var keys []string
	for _, g := range snap.Gateways {
		if g.Name == "" && !g.Hostname {
			continue
		}
		name := g.HostOrAddress()
		k := strings.Join([]string{name, g.Network, g.Cluster, g.Source()}, "\x00")
		ng := byKey[k]
		if ng == nil {
			ng = &namedGateway{name: name, network: g.Network, cluster: g.Cluster, source: g.Source(), port: g.Port, notResolvedBy: g.NotResolvedBy}
			byKey[k] = ng
			keys = append(keys, k)
		}
		if !g.Hostname && !slices.Contains(ng.resolved, g.Address) {
			ng.resolved = append(ng.resolved, g.Address)
		}
	}
	sort.Strings(keys)
	out := make([]namedGateway, 0, len(keys))
	for _, k := range keys {
		sort.Strings(byKey[k].resolved)
		out = append(out, *byKey[k])
	}
	return out
}

// hostnameGatewayProblems reports each gateway DNS name and what it
// resolves to: from istiod's own view (/debug/networkz) where it is read,
// since istiod's answer is the one proxies get; else from meshscope's
// answer, asked from where meshscope runs. A name that gives no address is
// an error: istiod drops its gateways, so its network's endpoints reach
// other networks as they are (a leak) or not at all. An istiod with
// RESOLVE_HOSTNAME_GATEWAYS off drops every such gateway. A name whose
// answer changed in the last ten minutes is noted: proxies move with it
// once istiod asks again.
func hostnameGatewayProblems(snap *model.Snapshot, views []model.IstiodView, now time.Time) []model.Problem {
	var ps []model.Problem
	for _, n := range snap.GatewayNames {
		if n.ChangedAt.IsZero() || now.Sub(n.ChangedAt) > nameChangeRecent {
			continue
		}
		ps = append(ps, model.Problem{Severity: model.SeverityInfo, Kind: model.ProblemGatewayHostname,
			Sentence: fmt.Sprintf("gateway name %s changed %s ago, from %s to %s (as meshscope resolves it): istiod pushes new EDS when its own answer's TTL runs out (at least 30 s)",
				n.Name, now.Sub(n.ChangedAt).Round(time.Second), orText(strings.Join(n.Previous, ", "), "no address"), orText(strings.Join(n.Addresses, ", "), "no address"))})
	}
	for _, ng := range namedGateways(snap) {
		what := fmt.Sprintf("gateway %s of %s (%s", ng.name, ng.network, ng.source)
		if ng.cluster != "" {
			what += " in " + ng.cluster
		}
		what += ")"
		for _, cp := range ng.notResolvedBy {
			st := snap.SettingsFor(cp).Get(model.SettingResolveHostnameGateways)
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemGatewayHostname, Cluster: ng.cluster,
				Sentence: fmt.Sprintf("istiod (%s) does not resolve gateway names (%s=false, %s): it drops %s", cp, model.SettingResolveHostnameGateways, st.From, what)})
		}
		ans, asked := snap.GatewayName(ng.name)
		mine := "meshscope resolved it from where it runs"
		switch {
		case !asked || ans.Pending:
			mine = "meshscope did not resolve it"
			if ans.Err != "" {
				mine += " (" + ans.Err + ")"
			}
		case len(ng.resolved) > 0:
			mine = fmt.Sprintf("meshscope resolved it from where it runs to %s", strings.Join(ng.resolved, ", "))
		case ans.Err != "":
			mine = fmt.Sprintf("meshscope's DNS query failed: %s", ans.Err)
		default:
			mine = "it does not resolve from where meshscope runs"
		}
		read := false
		for _, v := range views {
			if slices.Contains(ng.notResolvedBy, v.ControlPlane) {
				continue
			}
			read = true
			theirs := istiodAddressesOf(snap, v, ng)
			who := "istiod"
			if v.ControlPlane != "" {
				who = fmt.Sprintf("istiod (%s)", v.ControlPlane)
			}
			switch {
			case len(theirs) == 0:
				ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemGatewayHostname, Cluster: ng.cluster,
					Sentence: fmt.Sprintf("%s has no address for %s (its /debug/networkz): the name does not resolve for istiod, which drops the gateway — endpoints of %s are sent to other networks as they are, or not at all; %s", who, what, ng.network, mine)})
			case !slices.Equal(theirs, ng.resolved):
				ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemGatewayHostname, Cluster: ng.cluster,
					Sentence: fmt.Sprintf("%s resolves %s to %s (its /debug/networkz), but %s: the answer changed between the two queries or the resolvers differ; predictions use meshscope's", who, what, strings.Join(theirs, ", "), mine)})
			default:
				ps = append(ps, model.Problem{Severity: model.SeverityInfo, Kind: model.ProblemGatewayHostname, Cluster: ng.cluster,
					Sentence: fmt.Sprintf("%s resolves %s to %s (its /debug/networkz); meshscope's own answer is the same", who, what, strings.Join(theirs, ", "))})
			}
		}
		if read {
			continue
		}
		switch {
		case !asked || ans.Pending:
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemGatewayHostname, Cluster: ng.cluster,
				Sentence: fmt.Sprintf("%s is a DNS name istiod resolves itself (%s); %s, so predictions leave it out", what, model.SettingResolveHostnameGateways, mine)})
		case len(ng.resolved) == 0:
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemGatewayHostname, Cluster: ng.cluster,
				Sentence: fmt.Sprintf("%s gives no address: %s; istiod drops a gateway whose name does not resolve — endpoints of %s are sent to other networks as they are, or not at all", what, mine, ng.network)})
		default:
			ps = append(ps, model.Problem{Severity: model.SeverityInfo, Kind: model.ProblemGatewayHostname, Cluster: ng.cluster,
				Sentence: fmt.Sprintf("%s: %s (TTL %s); istiod resolves it itself and may get another answer", what, mine, ans.TTL)})
		}
	}
	return ps
}

// istiodAddressesOf are the addresses istiod lists for a named gateway:
// its /debug/networkz gateways of the same network, cluster and port whose
// address no gateway of the snapshot without a name has (those are the
// ones istiod resolved), sorted.
func istiodAddressesOf(snap *model.Snapshot, v model.IstiodView, ng namedGateway) []string {
	plain := map[string]bool{}
	for _, g := range snap.Gateways {
		if g.Name == "" && !g.Hostname && g.Network == ng.network {
			plain[g.Address] = true
		}
	}
	var out []string
	for _, g := range v.Gateways {
		if g.Network == ng.network && g.Cluster == ng.cluster && g.Port == ng.port && !plain[g.Addr] && !slices.Contains(out, g.Addr) {
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
	groups := namedGateways(snap)
	if len(groups) == 0 {
		return snap, nil
	}
	v := istiodViewOf(views, cp)
	var notes []string
	replace := map[int][]string{} // group index → istiod's addresses
	for i, ng := range groups {
		if slices.Contains(ng.notResolvedBy, cp) {
			continue
		}
		what := fmt.Sprintf("gateway %s of %s", ng.name, ng.network)
		if v == nil {
			if len(ng.resolved) > 0 {
				notes = append(notes, fmt.Sprintf("%s: predicted with %s, resolved from where meshscope runs (istiod resolves it itself)", what, strings.Join(ng.resolved, ", ")))
			}
			continue
		}
		theirs := istiodAddressesOf(snap, *v, ng)
		if slices.Equal(theirs, ng.resolved) {
			if len(theirs) > 0 {
				notes = append(notes, fmt.Sprintf("%s: predicted with %s, as istiod resolves it (its /debug/networkz)", what, strings.Join(theirs, ", ")))
			}
			continue
		}
		replace[i] = theirs
		notes = append(notes, fmt.Sprintf("%s: predicted with istiod's addresses (its /debug/networkz) %s — meshscope resolved %s from where it runs",
			what, orText(strings.Join(theirs, ", "), "none"), orText(strings.Join(ng.resolved, ", "), "nothing")))
	}
	if len(replace) == 0 {
		return snap, notes
	}
	of := func(g model.Gateway) int {
		for i, ng := range groups {
			if (g.Name != "" || g.Hostname) && g.HostOrAddress() == ng.name && g.Network == ng.network && g.Cluster == ng.cluster && g.Source() == ng.source {
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
			u.Address, u.Name, u.Hostname = groups[i].name, "", true
			gws = append(gws, u)
		}
		for _, a := range addrs {
			r := g
			r.Address, r.Name, r.Hostname = a, groups[i].name, false
			gws = append(gws, r)
		}
	}
	out := *snap
	out.Gateways = gws
	return &out, notes
}
