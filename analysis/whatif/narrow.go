package whatif

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/model"
)

// A what-if of one object in a big mesh changes a few services. What
// istiod sends for a service depends on the service itself and on what the
// whole mesh shares (clusters, networks, gateways, Istio and mesh config,
// ambient facts, istiod settings). When the shared part is the same before
// and after, a service that is itself the same predicts the same from
// every viewpoint, and its doctor problems are the same: only the services
// that differ need predicting and diagnosing. narrow cuts both snapshots to
// those; when the shared part differs, everything is compared.

// narrow returns before and after cut to the services that differ, and
// whether it cut (false: the shared part differs, compare everything).
// Labels of namespaces and Services are the ambient facts of the services
// they label (a namespace's, the services in it: scope, waypoint,
// discovery): a label that differs makes those services differ, not the
// shared part.
func narrow(before, after *model.Snapshot) (b, a *model.Snapshot, cut bool) {
	if !sameShared(before, after) {
		return before, after, false
	}
	relabelled := relabelled(before, after)
	b, a = withServices(before), withServices(after)
	for _, svc := range before.Services {
		if other := after.Service(svc.Hostname); other == nil || !sameService(svc, other) || relabelled(svc) {
			b.Services = append(b.Services, svc)
			if other != nil {
				a.Services = append(a.Services, other)
			}
		}
	}
	for _, svc := range after.Services {
		if before.Service(svc.Hostname) == nil {
			a.Services = append(a.Services, svc)
		}
	}
	return b, a, true
}

// withKept is cut (a narrowed side of whole), for a diagnosis, with the
// services of keep, the gateway Services (the second hop of every service
// goes through them) and every service of the namespaces of the services it
// holds, in whole's order (hostname order, which Snapshot.Service searches
// by): a check of one service can read its namespace's others (whether
// pods with sidecars run there: missing-service).
func withKept(cut, whole *model.Snapshot, keep []string) *model.Snapshot {
	namespaces := map[string]bool{}
	for _, svc := range cut.Services {
		namespaces[svc.Namespace] = true
	}
	for _, h := range keep {
		if svc := whole.Service(h); svc != nil {
			namespaces[svc.Namespace] = true
		}
	}
	out := withServices(cut)
	witnesses := hopWitnesses(whole)
	for _, svc := range whole.Services {
		if cut.Service(svc.Hostname) != nil || namespaces[svc.Namespace] || explain.IsGatewayService(svc) || witnesses[svc.Hostname] {
			out.Services = append(out.Services, svc)
		}
	}
	return out
}

// hopWitnesses are, for each host of each AUTO_PASSTHROUGH server, the
// first service of s it matches (one exported everywhere when there is
// one). istiod omits a gateway listener without filter chains, so a
// narrowed diagnosis keeps a witness per server: the second hop of the
// services it checks then sees the listener the whole mesh gives.
func hopWitnesses(s *model.Snapshot) map[string]bool {
	out := map[string]bool{}
	for _, g := range s.IstioGateways {
		for _, srv := range g.Servers {
			if !srv.AutoPassthrough() {
				continue
			}
			for _, h := range srv.Hosts {
				_, pattern, ok := strings.Cut(h, "/")
				if !ok {
					pattern = h
				}
				first := ""
				for _, svc := range s.Services {
					if !model.HostSubsetOf(svc.Hostname, pattern) {
						continue
					}
					if first == "" {
						first = svc.Hostname
					}
					if exportedEverywhere(svc) {
						first = svc.Hostname
						break
					}
				}
				if first != "" {
					out[first] = true
				}
			}
		}
	}
	return out
}

// exportedEverywhere: no cluster's Service of svc limits its exportTo.
func exportedEverywhere(svc *model.Service) bool {
	for _, sic := range svc.Clusters {
		if len(sic.ExportTo) > 0 && !slices.Contains(sic.ExportTo, "*") {
			return false
		}
	}
	return true
}

// withServices is a shallow copy of s without its services.
func withServices(s *model.Snapshot) *model.Snapshot {
	c := *s
	c.Services = nil
	return &c
}

// sameShared compares everything but the services (and what no
// prediction or check reads: versions, proxies, counts, clocks).
func sameShared(b, a *model.Snapshot) bool {
	if b.SystemNamespace != a.SystemNamespace || len(b.Clusters) != len(a.Clusters) {
		return false
	}
	for i := range b.Clusters {
		if !reflect.DeepEqual(stable(b.Clusters[i]), stable(a.Clusters[i])) {
			return false
		}
	}
	return reflect.DeepEqual(b.Networks, a.Networks) &&
		reflect.DeepEqual(b.Gateways, a.Gateways) &&
		reflect.DeepEqual(b.DestinationRules, a.DestinationRules) &&
		reflect.DeepEqual(b.PeerAuthentications, a.PeerAuthentications) &&
		reflect.DeepEqual(b.Sidecars, a.Sidecars) &&
		reflect.DeepEqual(b.VirtualServices, a.VirtualServices) &&
		reflect.DeepEqual(b.ServiceEntries, a.ServiceEntries) &&
		reflect.DeepEqual(b.WorkloadEntries, a.WorkloadEntries) &&
		reflect.DeepEqual(b.MeshConfigs, a.MeshConfigs) &&
		sameAmbient(b.Ambient, a.Ambient) &&
		reflect.DeepEqual(b.Settings, a.Settings) &&
		reflect.DeepEqual(b.RevisionPlanes, a.RevisionPlanes) &&
		reflect.DeepEqual(b.IstioGateways, a.IstioGateways) &&
		reflect.DeepEqual(routers(b), routers(a))
}

// routers are the gateway pods' proxies: the second hop of every service
// reads them (their labels, NETWORK and network view).
func routers(s *model.Snapshot) []model.ProxyPod {
	var out []model.ProxyPod
	for _, p := range s.Proxies {
		if p.Kind == model.ProxyGateway {
			out = append(out, p)
		}
	}
	return out
}

// sameAmbient compares the clusters' ambient facts but for the labels of
// namespaces and Services (relabelled).
func sameAmbient(b, a []model.AmbientCluster) bool {
	if len(b) != len(a) {
		return false
	}
	for i := range b {
		x, y := b[i], a[i]
		x.Namespaces, x.ServiceLabels, y.Namespaces, y.ServiceLabels = nil, nil, nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// relabelled says whether a service's labels or its namespace's differ
// between before and after in some cluster (their clusters in the same
// order: sameAmbient).
func relabelled(before, after *model.Snapshot) func(svc *model.Service) bool {
	namespaces, hosts := map[string]bool{}, map[string]bool{}
	for i := range before.Ambient {
		x, y := before.Ambient[i], after.Ambient[i]
		for _, m := range []map[string]map[string]string{x.Namespaces, y.Namespaces} {
			for ns := range m {
				if !maps.Equal(x.Namespaces[ns], y.Namespaces[ns]) {
					namespaces[ns] = true
				}
			}
		}
		for _, m := range []map[string]map[string]string{x.ServiceLabels, y.ServiceLabels} {
			for h := range m {
				if !maps.Equal(x.ServiceLabels[h], y.ServiceLabels[h]) {
					hosts[h] = true
				}
			}
		}
	}
	return func(svc *model.Service) bool { return hosts[svc.Hostname] || namespaces[svc.Namespace] }
}

// stable is a cluster without what moves on its own between two reads
// (counts, clocks, watch statistics).
func stable(c model.Cluster) model.Cluster {
	c.Counts = model.Counts{}
	c.SyncedAt, c.LastEventAt = time.Time{}, time.Time{}
	c.WatchErrors, c.Reconnects = 0, 0
	return c
}

// sameService compares two services of the same hostname: a cluster's
// part of it built once is one pointer in both; a rebuilt one is compared
// by value.
func sameService(b, a *model.Service) bool {
	if b == a {
		return true
	}
	if len(b.Clusters) != len(a.Clusters) {
		return false
	}
	for id, bc := range b.Clusters {
		ac, ok := a.Clusters[id]
		if !ok || (ac != bc && !reflect.DeepEqual(ac, bc)) {
			return false
		}
	}
	bs, as := *b, *a
	bs.Clusters, as.Clusters = nil, nil
	return reflect.DeepEqual(bs, as)
}

// diagnosed cuts both snapshots, for the diagnoses, to the services a
// change of the shared part can give problems to: the ones whose
// prediction changes from some viewpoint (affected: endpoints, or why some
// are dropped), the ones that differ, the gateways, and the hosts the
// Istio config that differs names. The others predict the same before and
// after, so their problems are the same: the checks of the shared part
// (clusters, secrets, gateways, config) still see everything but them.
func diagnosed(before, after *model.Snapshot, affected map[string]bool) (b, a *model.Snapshot) {
	keep := maps.Clone(affected)
	for _, h := range changedConfigHosts(before, after) {
		keep[h] = true
	}
	for _, s := range []*model.Snapshot{before, after} {
		for h := range hopWitnesses(s) {
			keep[h] = true
		}
	}
	cutTo := func(s, other *model.Snapshot) *model.Snapshot {
		out := withServices(s)
		for _, svc := range s.Services {
			o := other.Service(svc.Hostname)
			if keep[svc.Hostname] || explain.IsGatewayService(svc) || o == nil || !sameService(svc, o) {
				out.Services = append(out.Services, svc)
			}
		}
		return out
	}
	return cutTo(before, after), cutTo(after, before)
}

// changedConfigHosts are the hosts named by Istio config that is not the
// same in both snapshots (short names as written; Service matches them by
// its own rules).
func changedConfigHosts(before, after *model.Snapshot) []string {
	var out []string
	for _, s := range []*model.Snapshot{before, after} {
		other := after
		if s == after {
			other = before
		}
		for _, d := range s.DestinationRules {
			if !slices.ContainsFunc(other.DestinationRules, func(x model.DestinationRule) bool { return reflect.DeepEqual(x, d) }) {
				out = append(out, hostOf(s, d.Host, d.Namespace))
			}
		}
		for _, se := range s.ServiceEntries {
			if !slices.ContainsFunc(other.ServiceEntries, func(x model.ServiceEntry) bool { return reflect.DeepEqual(x, se) }) {
				for _, h := range se.Hosts {
					out = append(out, hostOf(s, h, se.Namespace))
				}
			}
		}
		for _, vs := range s.VirtualServices {
			if !slices.ContainsFunc(other.VirtualServices, func(x model.VirtualService) bool { return reflect.DeepEqual(x, vs) }) {
				for _, h := range vs.Hosts {
					out = append(out, hostOf(s, h, vs.Namespace))
				}
				for _, d := range vs.Destinations {
					out = append(out, hostOf(s, d.Host, vs.Namespace))
				}
			}
		}
	}
	return out
}

// hostOf is the hostname of a service a short name in namespace ns means.
func hostOf(s *model.Snapshot, name, ns string) string {
	if s.Service(name) != nil {
		return name
	}
	return model.FQDN(name, ns)
}
