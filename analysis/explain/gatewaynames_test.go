package explain

import (
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

func TestHostnameGatewayProblems(t *testing.T) {
	const name = "gw2.example.test"
	base := model.Gateway{Network: "network2", Cluster: "cluster2", Port: 15443, From: model.GatewayFromService, Service: "istio-system/istio-eastwestgateway"}
	unresolved := base
	unresolved.Address, unresolved.Hostname = name, true
	resolved := func(addr string, notBy ...string) model.Gateway {
		g := base
		g.Address, g.Name, g.NotResolvedBy = addr, name, notBy
		return g
	}
	ip1 := model.Gateway{Network: "network1", Cluster: "cluster1", Address: "192.0.2.113", Port: 15443, From: model.GatewayFromService, Service: "istio-system/istio-eastwestgateway"}
	answer := func(addrs ...string) []model.GatewayName {
		return []model.GatewayName{{Name: name, Addresses: addrs, TTL: 30e9, By: model.ResolvedByMeshscope}}
	}
	view := func(addrs ...string) []model.IstiodView {
		v := model.IstiodView{ControlPlane: "cluster1", Gateways: []model.IstiodGateway{{Network: "network1", Cluster: "cluster1", Addr: "192.0.2.113", Port: 15443}}}
		for _, a := range addrs {
			v.Gateways = append(v.Gateways, model.IstiodGateway{Network: "network2", Cluster: "cluster2", Addr: a, Port: 15443})
		}
		return []model.IstiodView{v}
	}
	for _, tc := range []struct {
		name  string
		gws   []model.Gateway
		names []model.GatewayName
		views []model.IstiodView
		env   []model.IstiodEnv
		sev   model.Severity
		texts []string
	}{
		{"resolved by meshscope, istiod not read", []model.Gateway{ip1, resolved("192.0.2.21"), resolved("192.0.2.22")}, answer("192.0.2.21", "192.0.2.22"), nil, nil,
			model.SeverityInfo, []string{"gateway " + name + " of network2", "meshscope resolved it from where it runs to 192.0.2.21, 192.0.2.22", "TTL 30s"}},
		{"not resolved by meshscope", []model.Gateway{unresolved}, nil, nil, nil,
			model.SeverityWarning, []string{"meshscope did not resolve it", "predictions leave it out"}},
		{"does not resolve", []model.Gateway{unresolved}, answer(), nil, nil,
			model.SeverityError, []string{"gives no address", "does not resolve from where meshscope runs", "istiod drops"}},
		{"istiod's answer is read and the same", []model.Gateway{ip1, resolved("192.0.2.21")}, answer("192.0.2.21"), view("192.0.2.21"), nil,
			model.SeverityInfo, []string{"istiod (cluster1) resolves gateway " + name, "to 192.0.2.21 (its /debug/networkz)", "the same"}},
		{"istiod's answer differs", []model.Gateway{ip1, resolved("192.0.2.21")}, answer("192.0.2.21"), view("192.0.2.23"), nil,
			model.SeverityWarning, []string{"resolves gateway " + name + " of network2 (service istio-system/istio-eastwestgateway in cluster2) to 192.0.2.23", "meshscope resolved it from where it runs to 192.0.2.21"}},
		{"istiod has no address for it", []model.Gateway{ip1, unresolved}, answer(), view(), nil,
			model.SeverityError, []string{"istiod (cluster1) has no address for gateway " + name, "endpoints of network2 are sent to other networks as they are"}},
		{"RESOLVE_HOSTNAME_GATEWAYS=false", []model.Gateway{resolved("192.0.2.21", "cluster1")}, answer("192.0.2.21"), nil,
			[]model.IstiodEnv{{Cluster: "cluster1", Key: model.SettingResolveHostnameGateways, Value: "false"}},
			model.SeverityWarning, []string{"istiod (cluster1) does not resolve gateway names (RESOLVE_HOSTNAME_GATEWAYS=false, --istiod-env)", "it drops gateway " + name}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := &model.Snapshot{Gateways: tc.gws, GatewayNames: tc.names,
				Clusters: []model.Cluster{{ID: "cluster1", State: model.StateSynced, Source: model.SourceRef{Kind: model.SourceContext, Name: "cluster1"}}}}
			snap.Settings = snap.ResolveSettings(tc.env)
			ps := hostnameGatewayProblems(snap, tc.views, time.Now())
			var got []model.Problem
			for _, p := range ps {
				if p.Severity == tc.sev {
					got = append(got, p)
				}
			}
			want(t, got, string(model.ProblemGatewayHostname), tc.sev, tc.texts...)
		})
	}
}

// TestIstiodDisagreementsLeaveNamesOut: istiod resolving a gateway name to
// other addresses than meshscope did is reported once, as gateway-hostname,
// not also as gateways each side lacks.
func TestIstiodDisagreementsLeaveNamesOut(t *testing.T) {
	snap := &model.Snapshot{Gateways: []model.Gateway{
		{Network: "network1", Cluster: "cluster1", Address: "192.0.2.113", Port: 15443},
		{Network: "network2", Cluster: "cluster2", Address: "192.0.2.21", Name: "gw2.example.test", Port: 15443},
	}}
	v := model.IstiodView{ControlPlane: "cluster1", Gateways: []model.IstiodGateway{
		{Network: "network1", Cluster: "cluster1", Addr: "192.0.2.113", Port: 15443},
		{Network: "network2", Cluster: "cluster2", Addr: "192.0.2.23", Port: 15443},
	}}
	if ps := IstiodDisagreements(snap, v); len(ps) != 0 {
		t.Errorf("disagreements: %+v", ps)
	}
	v.Gateways = v.Gateways[1:]
	if ps := IstiodDisagreements(snap, v); len(ps) != 1 || ps[0].Kind != model.ProblemIstiodDisagrees {
		t.Errorf("a missing IP gateway is still reported: %+v", ps)
	}
}

// TestWithIstiodNames: explain predicts with istiod's addresses for a
// gateway name where istiod's view is read, and says whose they are.
func TestWithIstiodNames(t *testing.T) {
	ip1 := model.Gateway{Network: "network1", Cluster: "cluster1", Address: "192.0.2.113", Port: 15443, From: model.GatewayFromService, Service: "istio-system/gw"}
	named := func(addr string) model.Gateway {
		return model.Gateway{Network: "network2", Cluster: "cluster2", Address: addr, Name: "gw2.example.test", Port: 15443, From: model.GatewayFromService, Service: "istio-system/gw"}
	}
	snap := &model.Snapshot{Gateways: []model.Gateway{ip1, named("192.0.2.21"), named("192.0.2.22")}}
	view := func(addrs ...string) []model.IstiodView {
		v := model.IstiodView{ControlPlane: "cluster1", Gateways: []model.IstiodGateway{{Network: "network1", Cluster: "cluster1", Addr: "192.0.2.113", Port: 15443}}}
		for _, a := range addrs {
			v.Gateways = append(v.Gateways, model.IstiodGateway{Network: "network2", Cluster: "cluster2", Addr: a, Port: 15443})
		}
		return []model.IstiodView{v}
	}
	addrs := func(s *model.Snapshot) string {
		var out []string
		for _, g := range s.Gateways {
			a := g.Address
			if g.Hostname {
				a += "(unresolved)"
			}
			out = append(out, a)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name  string
		views []model.IstiodView
		want  string
		note  string
	}{
		{"istiod not read: meshscope's answer", nil, "192.0.2.113,192.0.2.21,192.0.2.22", "resolved from where meshscope runs"},
		{"istiod's answer is the same", view("192.0.2.21", "192.0.2.22"), "192.0.2.113,192.0.2.21,192.0.2.22", "as istiod resolves it"},
		{"istiod's answer differs: istiod's", view("192.0.2.23"), "192.0.2.113,192.0.2.23", "istiod's addresses (its /debug/networkz) 192.0.2.23 — meshscope resolved 192.0.2.21, 192.0.2.22"},
		{"istiod has none: dropped", view(), "192.0.2.113,gw2.example.test(unresolved)", "istiod's addresses (its /debug/networkz) none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pv := plane.NewSet(snap, tc.views).Of("cluster1")
			got, notes := pv.Snap, pv.NameNotes
			if addrs(got) != tc.want {
				t.Errorf("gateways %s, want %s", addrs(got), tc.want)
			}
			if len(notes) != 1 || !strings.Contains(notes[0], tc.note) {
				t.Errorf("notes %q, want one with %q", notes, tc.note)
			}
			if addrs(snap) != "192.0.2.113,192.0.2.21,192.0.2.22" {
				t.Errorf("the snapshot was changed: %s", addrs(snap))
			}
		})
	}
}

// TestHostnameGatewayChanged: a name whose answer changed lately is noted,
// for ten minutes.
func TestHostnameGatewayChanged(t *testing.T) {
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	snap := &model.Snapshot{GatewayNames: []model.GatewayName{{Name: "gw2.example.test", Addresses: []string{"192.0.2.23"},
		Previous: []string{"192.0.2.21", "192.0.2.22"}, ChangedAt: now.Add(-42 * time.Second), By: model.ResolvedByMeshscope}}}
	want(t, hostnameGatewayProblems(snap, nil, now), string(model.ProblemGatewayHostname), model.SeverityInfo,
		"gateway name gw2.example.test changed 42s ago, from 192.0.2.21, 192.0.2.22 to 192.0.2.23")
	if ps := hostnameGatewayProblems(snap, nil, now.Add(11*time.Minute)); len(ps) != 0 {
		t.Errorf("an old change is still reported: %+v", ps)
	}
}

// TestAmbientGatewayName: an ambient east-west Gateway named by DNS is
// information when the name resolves from where meshscope runs, a warning
// when it does not (ztunnels resolve it themselves), and nothing before it
// is asked or for a Gateway of another class.
func TestAmbientGatewayName(t *testing.T) {
	const name = "gw2.lab.test"
	gw := func(class string) model.K8sGateway {
		return model.K8sGateway{Cluster: "cluster2", Namespace: "istio-system", Name: "istio-eastwestgateway", Class: class, Network: "network2",
			Addresses: []model.GatewayAddress{{Type: model.AddressTypeHostname, Value: name}}}
	}
	for _, tc := range []struct {
		name  string
		class string
		names []model.GatewayName
		sev   model.Severity // "" for no problem
		texts []string
	}{
		{"resolves", model.ClassEastWest, []model.GatewayName{{Name: name, Addresses: []string{"192.168.60.21", "192.168.60.22"}, TTL: 30 * time.Second}},
			model.SeverityInfo, []string{"ambient east-west Gateway istio-system/istio-eastwestgateway of network2 in cluster2 has the DNS name gw2.lab.test", "resolves to 192.168.60.21, 192.168.60.22 (TTL 30s)"}},
		{"does not resolve", model.ClassEastWest, []model.GatewayName{{Name: name}},
			model.SeverityWarning, []string{"it does not resolve from where meshscope runs (no A or AAAA record)", "ztunnels of other networks reach network2's pods only if it resolves where they run"}},
		{"query failed", model.ClassEastWest, []model.GatewayName{{Name: name, Err: "SERVFAIL"}}, model.SeverityWarning, []string{"(SERVFAIL)"}},
		{"not asked yet", model.ClassEastWest, []model.GatewayName{{Name: name, Pending: true}}, "", nil},
		{"a waypoint's name is not a network gateway", "istio-waypoint", []model.GatewayName{{Name: name}}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := &model.Snapshot{GatewayNames: tc.names, Ambient: []model.AmbientCluster{{Cluster: "cluster2", Gateways: []model.K8sGateway{gw(tc.class)}}}}
			ps := ambientGatewayNameProblems(snap)
			if tc.sev == "" {
				if len(ps) != 0 {
					t.Fatalf("want none, got %+v", ps)
				}
				return
			}
			want(t, ps, string(model.ProblemGatewayHostname), tc.sev, tc.texts...)
		})
	}
}
