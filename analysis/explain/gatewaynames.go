package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// nameChangeRecent is how long doctor reports that a gateway name's
// answer changed.
const nameChangeRecent = 10 * time.Minute

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
	for _, ng := range plane.NamedGateways(snap) {
		what := fmt.Sprintf("gateway %s of %s (%s", ng.Name, ng.Network, ng.Source)
		if ng.Cluster != "" {
			what += " in " + ng.Cluster
		}
		what += ")"
		for _, cp := range ng.NotResolvedBy {
			st := snap.SettingsFor(cp).Get(model.SettingResolveHostnameGateways)
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemGatewayHostname, Cluster: ng.Cluster,
				Sentence: fmt.Sprintf("istiod (%s) does not resolve gateway names (%s=false, %s): it drops %s", cp, model.SettingResolveHostnameGateways, st.From, what)})
		}
		ans, asked := snap.GatewayName(ng.Name)
		mine := "meshscope resolved it from where it runs"
		switch {
		case !asked || ans.Pending:
			mine = "meshscope did not resolve it"
			if ans.Err != "" {
				mine += " (" + ans.Err + ")"
			}
		case len(ng.Resolved) > 0:
			mine = fmt.Sprintf("meshscope resolved it from where it runs to %s", strings.Join(ng.Resolved, ", "))
		case ans.Err != "":
			mine = fmt.Sprintf("meshscope's DNS query failed: %s", ans.Err)
		default:
			mine = "it does not resolve from where meshscope runs"
		}
		read := false
		for _, v := range views {
			if slices.Contains(ng.NotResolvedBy, v.ControlPlane) {
				continue
			}
			read = true
			theirs := plane.IstiodAddresses(snap, v, ng)
			who := "istiod"
			if v.ControlPlane != "" {
				who = fmt.Sprintf("istiod (%s)", v.ControlPlane)
			}
			switch {
			case len(theirs) == 0:
				ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemGatewayHostname, Cluster: ng.Cluster,
					Sentence: fmt.Sprintf("%s has no address for %s (its /debug/networkz): the name does not resolve for istiod, which drops the gateway — endpoints of %s are sent to other networks as they are, or not at all; %s", who, what, ng.Network, mine)})
			case !slices.Equal(theirs, ng.Resolved):
				ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemGatewayHostname, Cluster: ng.Cluster,
					Sentence: fmt.Sprintf("%s resolves %s to %s (its /debug/networkz), but %s: the answer changed between the two queries or the resolvers differ; predictions use meshscope's", who, what, strings.Join(theirs, ", "), mine)})
			default:
				ps = append(ps, model.Problem{Severity: model.SeverityInfo, Kind: model.ProblemGatewayHostname, Cluster: ng.Cluster,
					Sentence: fmt.Sprintf("%s resolves %s to %s (its /debug/networkz); meshscope's own answer is the same", who, what, strings.Join(theirs, ", "))})
			}
		}
		if read {
			continue
		}
		switch {
		case !asked || ans.Pending:
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemGatewayHostname, Cluster: ng.Cluster,
				Sentence: fmt.Sprintf("%s is a DNS name istiod resolves itself (%s); %s, so predictions leave it out", what, model.SettingResolveHostnameGateways, mine)})
		case len(ng.Resolved) == 0:
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemGatewayHostname, Cluster: ng.Cluster,
				Sentence: fmt.Sprintf("%s gives no address: %s; istiod drops a gateway whose name does not resolve — endpoints of %s are sent to other networks as they are, or not at all", what, mine, ng.Network)})
		default:
			ps = append(ps, model.Problem{Severity: model.SeverityInfo, Kind: model.ProblemGatewayHostname, Cluster: ng.Cluster,
				Sentence: fmt.Sprintf("%s: %s (TTL %s); istiod resolves it itself and may get another answer", what, mine, ans.TTL)})
		}
	}
	return ps
}
