package ambient

import (
	"maps"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Resources are the WDS Address resources the istiod of v sends every
// ztunnel, in istiod's shapes, built from v's predictions (so that a
// control plane serving them sends exactly what meshscope predicts): one
// Service per service sent; one workload per pod backing a service, with
// every service it backs; one split-horizon workload per other network and
// global service; one workload per network gateway. Sorted by name. The
// demo's control plane serves them.
//
// istiod also sends pods that back no service, workloads of WorkloadEntries
// and the waypoints of workloads: those are not predicted (see
// docs/ambient.md).
func (v *View) Resources() []xdsclient.WDSAddress {
	byName := map[string]*xdsclient.WDSAddress{}
	for _, svc := range v.snap.Services {
		if svc.Source == model.SourceServiceEntry {
			continue // ServiceEntries in ambient mode are not modelled
		}
		p := v.Predict(svc.Hostname)
		if p.Sent {
			byName[p.Service] = &xdsclient.WDSAddress{Name: p.Service, Service: v.wdsService(svc, p)}
		}
		ports := wdsPorts(p.Ports)
		for _, w := range p.Workloads {
			a := byName[w.UID]
			if a == nil {
				a = &xdsclient.WDSAddress{Name: w.UID, Workload: v.wdsWorkload(svc, w)}
				byName[w.UID] = a
			}
			a.Workload.Services = append(a.Workload.Services, xdsclient.WDSServicePorts{Service: p.Service, Ports: ports})
		}
	}
	for _, w := range v.GatewayWorkloads() {
		g := v.gatewayOf(w)
		byName[w.UID] = &xdsclient.WDSAddress{Name: w.UID, Workload: &xdsclient.WDSWorkload{
			UID: w.UID, Name: w.UID, Namespace: g.Namespace, Addresses: w.Addresses, Hostname: w.Hostname, Network: w.Network,
			ServiceAccount: g.ServiceAccount, TunnelProtocol: w.TunnelProtocol, Status: w.Status,
		}}
	}
	out := make([]xdsclient.WDSAddress, 0, len(byName))
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		a := byName[n]
		if a.Workload != nil {
			slices.SortFunc(a.Workload.Services, func(x, y xdsclient.WDSServicePorts) int { return strings.Compare(x.Service, y.Service) })
		}
		out = append(out, *a)
	}
	return out
}

// ServiceView is what a ztunnel holding these resources has for a service
// key, as xdsclient.WDSClient.ServiceView builds it (in-process control
// planes and tests hold resources, not a client).
func ServiceView(res []xdsclient.WDSAddress, key string) xdsclient.WDSServiceView {
	v := xdsclient.WDSServiceView{Key: key, Workloads: []xdsclient.WDSWorkload{}}
	for _, a := range res {
		if a.Service != nil && a.Name == key {
			v.Service = a.Service
		}
		if a.Workload != nil && a.Workload.Backs(key) {
			v.Workloads = append(v.Workloads, *a.Workload)
		}
	}
	slices.SortFunc(v.Workloads, func(a, b xdsclient.WDSWorkload) int { return strings.Compare(a.UID, b.UID) })
	return v
}

// wdsService is the Service resource of a prediction.
func (v *View) wdsService(svc *model.Service, p Prediction) *xdsclient.WDSService {
	s := &xdsclient.WDSService{Name: svc.Name, Namespace: svc.Namespace, Hostname: svc.Hostname,
		Ports: wdsPorts(p.Ports), SubjectAltNames: p.SubjectAltNames, IPFamilies: "IPV4_ONLY", Canonical: true}
	if p.Waypoint != nil {
		s.Waypoint = p.Waypoint.Address
	}
	for _, vip := range p.VIPs {
		net, addr, _ := strings.Cut(vip, "/")
		s.Addresses = append(s.Addresses, xdsclient.WDSNetworkAddress{Network: net, Address: addr})
	}
	return s
}

// wdsWorkload is a predicted pod or split-horizon workload in istiod's
// shape (its services are added by the caller).
func (v *View) wdsWorkload(svc *model.Service, w Workload) *xdsclient.WDSWorkload {
	out := &xdsclient.WDSWorkload{UID: w.UID, Name: w.UID, Namespace: svc.Namespace, Addresses: w.Addresses, Network: w.Network,
		ServiceAccount: w.ServiceAccount, ClusterID: w.Cluster, TunnelProtocol: w.TunnelProtocol, Status: w.Status, WorkloadType: xdsclient.WorkloadPod}
	switch w.Kind {
	case KindSplitHorizon:
		// No addresses: reached through the gateway only.
		host, port := splitHostPort(w.Gateway)
		out.NetworkGateway = &xdsclient.WDSGateway{Network: w.Network, Address: host, HBONEPort: port}
		if ns, name, named := strings.Cut(host, "/"); named {
			out.NetworkGateway = &xdsclient.WDSGateway{Namespace: ns, Hostname: name, HBONEPort: port}
		}
		out.Capacity, out.CapacitySet = w.Capacity, true
	case KindPod:
		// uid CLUSTER//Pod/NS/NAME
		if i := strings.LastIndexByte(w.UID, '/'); i >= 0 {
			out.Name = w.UID[i+1:]
		}
		out.WorkloadName = out.Name
		out.CanonicalName, out.CanonicalRevision = canonical(svc, w.Cluster, out.Name)
	}
	return out
}

// canonical is a pod's canonical service name and revision, as istiod
// derives them from its labels (labels.CanonicalService): the
// service.istio.io labels, else app and version, else the workload name and
// "latest".
func canonical(svc *model.Service, cluster, pod string) (name, revision string) {
	name, revision = pod, "latest"
	sc := svc.Clusters[cluster]
	if sc == nil {
		return name, revision
	}
	for _, ep := range sc.Endpoints {
		if ep.Pod != pod {
			continue
		}
		l := ep.Labels
		name = firstOf(l[model.LabelCanonicalName], l["app.kubernetes.io/name"], l["app"], name)
		revision = firstOf(l[model.LabelCanonicalRevision], l["app.kubernetes.io/version"], l["version"], revision)
		break
	}
	return name, revision
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func wdsPorts(ps []port) []xdsclient.WDSPort {
	out := make([]xdsclient.WDSPort, 0, len(ps))
	for _, p := range ps {
		out = append(out, xdsclient.WDSPort{ServicePort: p.ServicePort, TargetPort: p.TargetPort})
	}
	return out
}

// gatewayOf finds the network gateway a gateway workload stands for.
func (v *View) gatewayOf(w Workload) networkGateway {
	for _, g := range v.Gateways {
		if g.Network == w.Network && g.Cluster == w.Cluster && (len(w.Addresses) == 0 && w.Hostname == "" || g.Address == w.Hostname || len(w.Addresses) > 0 && g.Address == w.Addresses[0]) {
			return g
		}
	}
	return networkGateway{}
}

func splitHostPort(hp string) (string, uint32) {
	i := strings.LastIndexByte(hp, ':')
	if i < 0 {
		return hp, 0
	}
	var port uint32
	for _, c := range hp[i+1:] {
		port = port*10 + uint32(c-'0')
	}
	return strings.Trim(hp[:i], "[]"), port
}
