package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/gatewayhop"
)

// ":pc gateway@NETWORK": an east-west gateway pod's config as istiod sends
// it to meshscope impersonating the pod — its AUTO_PASSTHROUGH listeners
// with their SNI chains and its SNI-DNAT clusters — beside the prediction
// (what differs, as doctor's sent-gateway check says it).

// gatewayArg resolves a ":pc" argument naming a gateway (a name of the
// feed's, or a unique part of one), or flashes why not: no such gateway,
// or one meshscope cannot impersonate (no ready pod runs a router proxy).
func (m *Model) gatewayArg(a string) (string, bool) {
	gf, ok := m.feed.(GatewayFeed)
	if !ok {
		m.setFlash("this feed impersonates no gateway", true)
		return "", false
	}
	names := gf.GatewayNames()
	var found []string
	for _, n := range names {
		if n == a {
			return n, true
		}
		if strings.Contains(n, strings.TrimPrefix(a, "gateway@")) {
			found = append(found, n)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	why := fmt.Sprintf("no single gateway %q (gateways: %s)", a, orDash(strings.Join(names, ", ")))
	if m.ix.snap != nil {
		for _, g := range gatewayhop.Gateways(m.ix.snap) {
			if "gateway@"+g.Network == a && g.Error != "" {
				why = a + ": " + g.Error // its pods cannot be found: nothing to impersonate
			}
		}
	}
	m.setFlash(why, true)
	return "", false
}

// renderGatewayConfig draws a gateway stream's SNI listeners and clusters,
// then what differs from the prediction.
func renderGatewayConfig(vc viewContext, name string, c ProxyConfig) []string {
	var out []string
	for _, l := range c.Listeners {
		if len(l.SNIChains) == 0 {
			continue
		}
		out = append(out, vc.st.Header.Render(fmt.Sprintf("LISTENER %s (%d SNI chains)", l.Name, len(l.SNIChains))))
		for _, fc := range l.SNIChains {
			out = append(out, " "+strings.Join(fc.ServerNames, ",")+vc.st.Muted.Render(" → "+fc.Cluster))
		}
		out = append(out, "")
	}
	var sni []string
	for _, cl := range c.Clusters {
		if strings.HasPrefix(cl.Name, "outbound_.") {
			sni = append(sni, fmt.Sprintf(" %-70s %s", cl.Name, cl.Type))
		}
	}
	sort.Strings(sni)
	out = append(out, vc.st.Header.Render(fmt.Sprintf("SNI-DNAT CLUSTERS (%d)", len(sni))))
	out = append(out, sni...)
	gf, ok := vc.feed.(GatewayFeed)
	if !ok || vc.ix == nil || vc.ix.snap == nil {
		return out
	}
	for _, s := range gf.SentGateways() {
		if s.Gateway == "" || !strings.HasPrefix(name, "gateway@"+s.Workload.Network()) {
			continue
		}
		diffs := explain.CompareGateway(vc.ix.planes.Of(s.ControlPlane), s)
		out = append(out, "", vc.st.Header.Render(fmt.Sprintf("AGAINST THE PREDICTION (pod %s, istiod %s): %d differences", s.Workload.Pod, s.ControlPlane, len(diffs))))
		for _, d := range diffs {
			out = append(out, " "+vc.st.Error.Render("≠ "+d.Sentence))
		}
		break
	}
	return out
}
