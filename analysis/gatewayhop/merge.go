package gatewayhop

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// Which Gateways apply to a gateway proxy and how their servers merge into
// listeners (PushContext.mergeGateways, model/gateway.go mergeGateways).
// Only AUTO_PASSTHROUGH servers make SNI chains; the other servers of a
// port are counted, not predicted, and matter only where istiod rejects a
// server because of them.

// server is one AUTO_PASSTHROUGH server merged into a listener.
type server struct {
	// Gateway is "namespace/name" of the Gateway; Index the server's
	// position in it; Port its port number before resolvePorts.
	Gateway string `json:"gateway"`
	Index   int    `json:"index"`
	Port    uint32 `json:"port"`
	// Hosts are its SNI hosts (GetSNIHostsForServer: a "namespace/"
	// prefix dropped).
	Hosts []string `json:"hosts"`
}

// merged is what mergeGateways gives the second hop: the Gateways that
// apply, the AUTO_PASSTHROUGH servers of each listener, and sentences for
// what istiod ignores or rejects.
type merged struct {
	applied []string
	// listeners in the order their ports first appear.
	listeners []*Listener
	// autoPassthrough is MergedGateway.ContainsAutoPassthroughGateways:
	// only then are SNI-DNAT clusters built.
	autoPassthrough bool
	notes           []string
}

// serverPort is model.ServerPort: a port, a protocol and a bind.
type serverPort struct {
	port           uint32
	protocol, bind string
}

// mergeFor merges the Gateways of the config cluster that select w (its
// labels; only its namespace's with PILOT_SCOPE_GATEWAY_TO_NAMESPACE), in
// istiod's order (oldest first, then name, then namespace).
func mergeFor(view *model.Snapshot, cp string, w Workload, targets []target) merged {
	var m merged
	cc := model.ControlPlaneCluster(cp)
	mc := view.MeshConfigFor(cc)
	scoped := view.SettingsFor(cp).Get(model.SettingScopeGatewayToNamespace).Value
	var gws []model.IstioGateway
	for _, g := range view.IstioGateways {
		switch {
		case g.Cluster != cc || !mc.Discovered(g.Cluster, g.Namespace):
		case g.Error != "":
			m.notes = append(m.notes, fmt.Sprintf("Gateway %s is ignored: %s", g.Key(), g.Error))
		case scoped && g.Namespace != w.Namespace:
			if g.Selects(w.Labels) {
				m.notes = append(m.notes, fmt.Sprintf("Gateway %s selects the pod but is in namespace %s, and istiod %s has %s=true: only Gateways of the pod's namespace %s apply",
					g.Key(), g.Namespace, cp, model.SettingScopeGatewayToNamespace, w.Namespace))
			}
		case g.Selects(w.Labels):
			gws = append(gws, g)
		}
	}
	slices.SortStableFunc(gws, func(a, b model.IstioGateway) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Namespace, b.Namespace)
	})
	st := mergeState{tlsHosts: map[uint32]map[string]string{}, plain: map[uint32]serverPort{}, seen: map[uint32]bool{}}
	for _, g := range gws {
		m.applied = append(m.applied, g.Key())
		for i, s := range g.Servers {
			if s.Port == 0 {
				continue
			}
			s.Hosts = sanitizeHosts(s.Hosts, g.Namespace)
			for _, rp := range resolvePorts(s.Port, targets) {
				if note := st.add(&m, g.Key(), i, s, rp); note != "" {
					m.notes = append(m.notes, note)
				}
			}
		}
	}
	return m
}

// mergeState is mergeGateways' bookkeeping per resolved port.
type mergeState struct {
	tlsHosts map[uint32]map[string]string // port → host → bind
	plain    map[uint32]serverPort
	seen     map[uint32]bool
}

// add merges one server on resolved port rp, and says why istiod skips it
// ("" when it does not).
func (st *mergeState) add(m *merged, gw string, i int, s model.GatewayServer, rp uint32) string {
	what := fmt.Sprintf("server %d of Gateway %s (port %d → %d)", i, gw, s.Port, rp)
	if s.TLS {
		if st.tlsHosts[rp] == nil {
			st.tlsHosts[rp] = map[string]string{}
		}
		if dup := checkDuplicates(s.Hosts, s.Bind, st.tlsHosts[rp]); len(dup) > 0 {
			return fmt.Sprintf("%s is skipped: hosts %s are already served on that port (istiod: duplicate host names)", what, strings.Join(dup, ","))
		}
		if s.AutoPassthrough() {
			m.autoPassthrough = true
		}
	}
	sp := serverPort{rp, s.Protocol, s.Bind}
	tlsServer := s.TLS && !isHTTP(s.Protocol)
	if st.seen[rp] {
		if cur, ok := st.plain[rp]; ok {
			if cur.bind == sp.bind && (!canMergeProtocols(sp.protocol, cur.protocol) || !isHTTP(sp.protocol)) {
				return fmt.Sprintf("%s is skipped: a plaintext %s server is on that port already (istiod merges only HTTP servers there)", what, orText(cur.protocol, "TCP"))
			}
		} else if !tlsServer {
			st.plain[rp] = sp
		}
	} else {
		st.seen[rp] = true
		if !tlsServer {
			st.plain[rp] = sp
		}
	}
	l := m.listener(rp, s.Bind)
	if s.AutoPassthrough() && !isHTTP(s.Protocol) {
		l.Servers = append(l.Servers, server{Gateway: gw, Index: i, Port: s.Port, Hosts: model.GatewayServer{Hosts: s.Hosts}.SNIHosts()})
	} else {
		l.Other++
	}
	return ""
}

// listener is the listener of (port, bind), made on first use.
func (m *merged) listener(port uint32, bind string) *Listener {
	for _, l := range m.listeners {
		if l.Port == port && l.Bind == bind {
			return l
		}
	}
	l := &Listener{Port: port, Bind: bind}
	m.listeners = append(m.listeners, l)
	return l
}

// sanitizeHosts mirrors sanitizeServerHostNamespace: "./h" is the
// Gateway's namespace, "*/h" is h, "*/*" alone stands for "*".
func sanitizeHosts(hosts []string, ns string) []string {
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		pre, rest, ok := strings.Cut(h, "/")
		switch {
		case !ok:
		case pre == ".":
			h = ns + "/" + rest
		case pre == "*" && rest == "*":
			return []string{"*"}
		case pre == "*":
			h = rest
		}
		out = append(out, h)
	}
	return out
}

// checkDuplicates mirrors CheckDuplicates: the hosts already known on the
// port with the same bind; when there are none, all are recorded.
func checkDuplicates(hosts []string, bind string, known map[string]string) []string {
	var dup []string
	for _, h := range hosts {
		if b, ok := known[h]; ok && b == bind {
			dup = append(dup, h)
		}
	}
	if len(dup) == 0 {
		for _, h := range hosts {
			known[h] = bind
		}
	}
	return dup
}

// isHTTP mirrors protocol.Instance.IsHTTP for a server's protocol.
func isHTTP(p string) bool {
	switch strings.ToUpper(p) {
	case "HTTP", "HTTP2", "GRPC", "GRPC-WEB", "HTTP_PROXY":
		return true
	}
	return false
}

// canMergeProtocols mirrors canMergeProtocols: HTTP onto HTTP.
func canMergeProtocols(cur, p string) bool {
	return (isHTTP(cur) || strings.EqualFold(cur, p)) && isHTTP(p)
}

// target is one of the proxy's ServiceTargets: a port of a Service that
// selects its pod and the pod port it reaches.
type target struct {
	service    string
	port       uint32
	targetPort uint32
}

// serviceTargets mirrors GetProxyServiceTargets for a pod: the ports of
// every Service of its namespace in its cluster whose selector its labels
// match, each with the pod port it reaches (FindPort: a number, or the
// name resolved by the endpoints of that Service; a port it cannot
// resolve is left out). istiod finds none when the proxy's CLUSTER_ID is
// not its pod's cluster (isControllerForProxy).
func serviceTargets(view *model.Snapshot, w Workload) []target {
	if w.clusterID() != w.Cluster {
		return nil
	}
	var out []target
	for _, svc := range view.Services {
		sic := svc.Clusters[w.Cluster]
		if svc.Namespace != w.Namespace || sic == nil || sic.NoService || len(sic.Selector) == 0 || !subsetOf(sic.Selector, w.Labels) {
			continue
		}
		var self *model.Endpoint
		for i := range sic.Endpoints {
			if sic.Endpoints[i].Pod == w.Pod {
				self = &sic.Endpoints[i]
			}
		}
		for _, p := range sic.Ports {
			if tp, ok := findPort(p, self); ok {
				out = append(out, target{service: svc.Namespace + "/" + svc.Name, port: uint32(p.Port), targetPort: tp})
			}
		}
	}
	return out
}

// findPort mirrors FindPort: a numeric targetPort (none: the port), or a
// named one as the pod's endpoint of the Service resolves it.
func findPort(p model.ServicePort, self *model.Endpoint) (uint32, bool) {
	if p.TargetPort == "" {
		return uint32(p.Port), true
	}
	if n, err := strconv.Atoi(p.TargetPort); err == nil {
		return uint32(n), true
	}
	if self != nil {
		for _, e := range self.Ports {
			if e.Name == p.Name {
				return uint32(e.Port), true
			}
		}
	}
	return 0, false
}

// resolvePorts mirrors resolvePorts for a Gateway with a selector (the
// legacy selector): the targetPort of the first ServiceTarget on the
// server's port, else the port as it is.
func resolvePorts(number uint32, targets []target) []uint32 {
	for _, t := range targets {
		if t.port == number {
			return []uint32{t.targetPort}
		}
	}
	return []uint32{number}
}

func subsetOf(sel, labels map[string]string) bool {
	for k, v := range sel {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
