package whatif

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// What a sidecar is sent can depend on its namespace: a Service,
// ServiceEntry, DestinationRule or VirtualService exported to some
// namespaces only (exportTo, and the mesh config's defaults), a Sidecar
// resource of one namespace, a DestinationRule looked up in the client's
// own namespace first. A what-if judges each viewpoint from the namespaces
// where clients really run — those with pods that run a sidecar on the
// viewpoint's network (or in its cluster, for a proxy without NETWORK) —
// grouped in classes that see every service alike: each namespace the
// config names or restricts on its own, the others together.

// nsClass is a class of client namespaces, predicted from rep (what
// explain --namespace rep predicts).
type nsClass struct {
	rep string
	// names are the namespaces with clients it stands for (none: no client
	// runs where the viewpoint is; rep is then explain's default).
	names []string
	// other: the namespaces no config names or restricts.
	other bool
}

// label names the class for people: "sample", "4 other namespaces with
// sidecars", or "" for a class without clients.
func (c nsClass) label() string {
	switch {
	case len(c.names) == 0:
		return ""
	case !c.other:
		return c.rep
	case len(c.names) == 1:
		return "1 other namespace with sidecars (" + c.names[0] + ")"
	}
	return fmt.Sprintf("%d other namespaces with sidecars (%s)", len(c.names), examples(c.names))
}

func examples(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:3], ", ") + ", …"
}

// defaultNamespace is the namespace of meshscope's probe
// (xdsclient.DefaultNamespace): a viewpoint's namespace when no client
// runs there.
const defaultNamespace = "default"

// namespaceClasses are the classes of the client namespaces of a viewpoint
// (clients), given the namespaces the config of either snapshot makes
// special; one class of explain's default namespace when no client runs.
func namespaceClasses(clients []string, special map[string]bool) []nsClass {
	if len(clients) == 0 {
		return []nsClass{{rep: defaultNamespace}}
	}
	var out []nsClass
	other := nsClass{other: true}
	for _, ns := range clients {
		if special[ns] {
			out = append(out, nsClass{rep: ns, names: []string{ns}})
		} else {
			other.names = append(other.names, ns)
		}
	}
	if len(other.names) > 0 {
		other.rep = other.names[0]
		// One class alone is no class: it is the viewpoint itself.
		out = append(out, other)
	}
	return out
}

// clientNamespaces are the namespaces, sorted, that run a sidecar on the
// viewpoint's network, or in its cluster for a proxy without NETWORK, in
// either snapshot.
func clientNamespaces(vpCluster, vpNetwork string, snaps ...*model.Snapshot) []string {
	var out []string
	for _, s := range snaps {
		for _, p := range s.Proxies {
			if p.Kind != model.ProxySidecar || slices.Contains(out, p.Namespace) {
				continue
			}
			if (vpNetwork != "" && p.Network == vpNetwork) || (vpNetwork == "" && p.Cluster == vpCluster) {
				out = append(out, p.Namespace)
			}
		}
	}
	slices.Sort(out)
	return out
}

// specials are the namespaces whose clients may see a service otherwise
// than the rest: for every service (all) or for some (byHost).
type specials struct {
	all    map[string]bool
	byHost map[string]map[string]bool
}

// forHost are the namespaces special for host.
func (sp specials) forHost(host string) map[string]bool {
	h := sp.byHost[host]
	if len(h) == 0 {
		return sp.all
	}
	out := make(map[string]bool, len(sp.all)+len(h))
	for ns := range sp.all {
		out[ns] = true
	}
	for ns := range h {
		out[ns] = true
	}
	return out
}

// in is the set of host's special namespaces ("" or a wildcard: every
// service's), made on first use.
func (sp specials) in(host string) map[string]bool {
	if host == "" || strings.Contains(host, "*") {
		return sp.all
	}
	m := sp.byHost[host]
	if m == nil {
		m = map[string]bool{}
		sp.byHost[host] = m
	}
	return m
}

// mark records the namespaces exportTo names (with "." the object's own,
// own) in set.
func mark(set map[string]bool, exportTo []string, own string) {
	for _, e := range exportTo {
		switch e {
		case "*", "~":
		case ".":
			set[own] = true
		default:
			set[e], set[own] = true, true
		}
	}
}

// specialNamespaces are, in either snapshot, the namespaces whose clients
// may see a service otherwise than the rest: for every service, where a
// Sidecar resource is (but the root namespace's, which applies everywhere)
// and those a VirtualService's exportTo names; for a host, where a
// DestinationRule or ServiceEntry of it is (a client's own namespace is
// looked in first) and the namespaces their exportTo, or its Service's
// (its annotation, else the mesh's defaultServiceExportTo), name — "."
// being the object's own. A wildcard host counts for every service.
func specialNamespaces(snaps ...*model.Snapshot) specials {
	sp := specials{all: map[string]bool{}, byHost: map[string]map[string]bool{}}
	for _, s := range snaps {
		roots := map[string]bool{}
		var svcDefault []string
		for _, mc := range s.MeshConfigs {
			roots[mc.RootNamespace] = true
			svcDefault = append(svcDefault, mc.DefaultServiceExportTo...)
		}
		for _, sc := range s.Sidecars {
			if !roots[sc.Namespace] {
				sp.all[sc.Namespace] = true
			} else if relativeEgress(sc) {
				svcDefault = append(svcDefault, ".") // each namespace sees its own services
			}
		}
		for _, d := range s.DestinationRules {
			set := sp.in(model.FQDN(d.Host, d.Namespace))
			set[d.Namespace] = true
			mark(set, d.ExportTo, d.Namespace)
		}
		for _, se := range s.ServiceEntries {
			for _, h := range se.Hosts {
				set := sp.in(model.FQDN(h, se.Namespace))
				set[se.Namespace] = true
				mark(set, se.ExportTo, se.Namespace)
			}
		}
		for _, vs := range s.VirtualServices {
			mark(sp.all, vs.ExportTo, vs.Namespace)
		}
		for _, svc := range s.Services {
			for _, sic := range svc.Clusters {
				exportTo := sic.ExportTo
				if len(exportTo) == 0 {
					exportTo = svcDefault
				}
				mark(sp.in(svc.Hostname), exportTo, svc.Namespace)
			}
		}
	}
	return sp
}

// relativeEgress: a Sidecar whose egress imports "./…", the proxy's own
// namespace.
func relativeEgress(sc model.Sidecar) bool {
	for _, e := range sc.Egress {
		for _, h := range e.Hosts {
			if strings.HasPrefix(h, "./") {
				return true
			}
		}
	}
	return false
}
