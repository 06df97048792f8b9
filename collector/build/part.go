package build

import (
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/meshscope/meshscope/model"
)

// Part is what one cluster contributes to a snapshot. It is rebuilt
// only when that cluster's caches changed (or its ID, or meshNetworks), so a
// burst of events in one cluster does not rebuild the others.
type Part struct {
	ID, NetworksKey string
	Network         string // system namespace label
	ambient         *model.AmbientCluster
	proxies         []model.ProxyPod
	Services        map[string]*model.ServiceInCluster
	serviceMeta     map[string][3]string // hostname → namespace, name, ""
	gateways        []model.Gateway
	networks        map[string]bool // networks of its endpoints
	Counts          model.Counts
	// What the ServiceEntries' workloadSelectors pick among its pods (for
	// the selectors of key selKey), and its namespaces' labels.
	SelectorsKey    string
	Selected        [][]model.Endpoint
	NamespaceLabels map[string]map[string]string
}

// Valid says whether the part (nil: none built yet) is still the one to
// use for cluster id under these networks and ServiceEntry selectors, its
// caches unchanged.
func (p *Part) Valid(id string, ix *NetworkIndex, sel Selectors) bool {
	return p != nil && p.ID == id && p.NetworksKey == ix.Key && p.SelectorsKey == sel.Key
}

// importantServiceLabels are the Service labels that make it a gateway.
var importantServiceLabels = []string{model.LabelNetwork, model.LabelGatewayPort, "istio"}

// BuildPart turns one cluster's caches into its share of a snapshot: its
// Services, the endpoints of their EndpointSlices (with what their pods
// say) and of the WorkloadEntries they select, its gateways and its
// ambient facts.
func BuildPart(v Caches, id string, ix *NetworkIndex) *Part {
	p := &Part{
		ID:          id,
		Services:    make(map[string]*model.ServiceInCluster, len(v.Services)),
		serviceMeta: make(map[string][3]string, len(v.Services)),
		networks:    map[string]bool{},
	}
	if ix != nil {
		p.NetworksKey = ix.Key
	}
	if v.SystemNamespace != nil {
		p.Network = v.SystemNamespace.Labels[model.LabelNetwork]
	}
	p.Counts = model.Counts{Services: len(v.Services), EndpointSlices: len(v.Slices), Pods: v.PodCount, Nodes: v.NodeCount, RemoteSecrets: v.SecretCount}
	serviceLabels := p.addServices(v, ix)
	slicesOf := p.addSliceEndpoints(v, ix)
	for _, svc := range v.Services {
		if eps := serviceWorkloadEntries(svc, v.WorkloadEntries); len(eps) > 0 {
			sc := p.Services[model.Hostname(svc.Name, svc.Namespace)]
			sc.Endpoints = append(sc.Endpoints, eps...)
		}
	}
	for h, sc := range p.Services {
		sortEndpoints(sc.Endpoints)
		if slicesOf[h] > 1 {
			// Slices of one service can overlap while the endpoint
			// controller moves endpoints between them: keep one per address.
			sc.Endpoints = dedupeSorted(sc.Endpoints)
		}
		p.Counts.Endpoints += len(sc.Endpoints)
	}
	p.ambient = buildAmbient(v, id, serviceLabels)
	p.proxies = buildProxies(v, id, p.Network, ix)
	for _, g := range v.Gateways {
		p.gateways = append(p.gateways, GatewayAPIGateways(&g.K8sGateway, id)...)
	}
	return p
}

// addServices adds the cluster's Services and the gateways they are, and
// returns every Service's labels by hostname (for the ambient facts).
func (p *Part) addServices(v Caches, ix *NetworkIndex) map[string]map[string]string {
	serviceLabels := make(map[string]map[string]string, len(v.Services))
	nsTD := namespaceTrafficDistribution(v)
	for _, svc := range v.Services {
		h := model.Hostname(svc.Name, svc.Namespace)
		sc := &model.ServiceInCluster{
			Cluster:   p.ID,
			Type:      string(svc.Spec.Type),
			ClusterIP: svc.Spec.ClusterIP,
			Ports:     servicePorts(svc),
			Labels:    pick(svc.Labels, importantServiceLabels),
			ExportTo:  exportToAnnotation(svc.Annotations),
		}
		serviceShape(sc, svc)
		sc.TrafficDistribution = trafficDistribution(svc, nsTD[svc.Namespace])
		p.Services[h] = sc
		p.serviceMeta[h] = [3]string{svc.Namespace, svc.Name}
		serviceLabels[h] = svc.Labels
		p.gateways = append(p.gateways, serviceGateways(svc, p.ID, h, ix, v.Nodes)...)
	}
	return serviceLabels
}

// podInfo is what the endpoints of one pod take from it, read once and
// shared by every service the pod backs.
type podInfo struct {
	labels   map[string]string
	tlsMode  string
	netLabel string
	node     string
	locality string
	missing  bool
}

// podInfos reads each pod once.
type podInfos struct {
	v    Caches
	byID map[string]*podInfo
}

func (ps *podInfos) get(key string) *podInfo {
	pi := ps.byID[key]
	if pi != nil {
		return pi
	}
	pi = &podInfo{}
	if pod := ps.v.Pod(key); pod != nil {
		pi.labels = pod.Labels // interned by the pod cache
		pi.tlsMode = pod.Labels[model.LabelTLSMode]
		pi.netLabel = pod.Labels[model.LabelNetwork]
		pi.node = pod.NodeName
		pi.locality = ps.v.podLocality(pod.Labels, pod.NodeName)
	} else {
		pi.missing = true
	}
	ps.byID[key] = pi
	return pi
}

// sliceHosts are the hostnames of the slices istiod reads ("" for the
// FQDN slices and slices of no Service it ignores), and each hostname's
// endpoint count, so every service's endpoints are allocated once at
// their final size.
func sliceHosts(v Caches) (hostOf []string, total map[string]int) {
	hostOf = make([]string, len(v.Slices))
	total = map[string]int{}
	for i, sl := range v.Slices {
		if sl.Service == "" || sl.AddressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		hostOf[i] = model.Hostname(sl.Service, sl.Namespace)
		for _, ep := range sl.Endpoints {
			total[hostOf[i]] += len(ep.Addresses)
		}
	}
	return hostOf, total
}

// addSliceEndpoints adds the endpoints of the cluster's EndpointSlices to
// their services (a slice whose Service is gone still makes one), each
// with its pod's facts and its network, and returns how many slices each
// hostname has (more than one needs de-duplication).
func (p *Part) addSliceEndpoints(v Caches, ix *NetworkIndex) map[string]int {
	pods := &podInfos{v: v, byID: make(map[string]*podInfo, v.PodCount)}
	hostOf, total := sliceHosts(v)
	slicesOf := map[string]int{}
	for i, sl := range v.Slices {
		h := hostOf[i]
		if h == "" {
			continue
		}
		sc := p.Services[h]
		if sc == nil {
			sc = &model.ServiceInCluster{Cluster: p.ID, NoService: true}
			p.Services[h] = sc
			p.serviceMeta[h] = [3]string{sl.Namespace, sl.Service}
		}
		if sc.Endpoints == nil {
			sc.Endpoints = make([]model.Endpoint, 0, total[h])
		}
		slicesOf[h]++
		for j := range sl.Endpoints {
			ep := &sl.Endpoints[j]
			var pi *podInfo
			if ep.Pod != "" {
				pi = pods.get(ep.PodKey(sl.Namespace))
			}
			node := ep.Node
			for _, addr := range ep.Addresses {
				e := model.Endpoint{
					Cluster:     p.ID,
					Address:     addr,
					Ports:       sl.Ports,
					Ready:       ep.Conditions.Ready(),
					Serving:     ep.Conditions.Serving(),
					Terminating: ep.Conditions.Terminating(),
				}
				netLabel := ""
				if pi != nil {
					e.Labels, e.TLSMode, netLabel, e.Locality = pi.labels, pi.tlsMode, pi.netLabel, pi.locality
					if node == "" {
						node = pi.node
					}
					e.Pod = ep.PodName()
					e.PodMissing = pi.missing
				}
				e.Node = node
				e.Network, e.NetworkFrom = resolveNetwork(netLabel, p.Network, ix, p.ID, addr)
				if e.Network != "" {
					p.networks[e.Network] = true
				}
				sc.Endpoints = append(sc.Endpoints, e)
			}
		}
	}
	return slicesOf
}

// sortEndpoints orders endpoints by IP (numerically), parsing each address
// once rather than in every comparison.
func sortEndpoints(eps []model.Endpoint) {
	if len(eps) < 2 {
		return
	}
	keys := make([]netip.Addr, len(eps))
	for i := range eps {
		keys[i], _ = netip.ParseAddr(eps[i].Address)
	}
	sort.Sort(endpointsByAddr{eps, keys})
}

type endpointsByAddr struct {
	eps  []model.Endpoint
	keys []netip.Addr
}

func (e endpointsByAddr) Len() int { return len(e.eps) }
func (e endpointsByAddr) Less(i, j int) bool {
	a, b := e.keys[i], e.keys[j]
	if a.IsValid() && b.IsValid() {
		return a.Less(b)
	}
	return e.eps[i].Address < e.eps[j].Address
}
func (e endpointsByAddr) Swap(i, j int) {
	e.eps[i], e.eps[j] = e.eps[j], e.eps[i]
	e.keys[i], e.keys[j] = e.keys[j], e.keys[i]
}

func dedupeSorted(eps []model.Endpoint) []model.Endpoint {
	out := eps[:0]
	for i := range eps {
		if i > 0 && eps[i].Address == out[len(out)-1].Address {
			continue
		}
		out = append(out, eps[i])
	}
	return out
}

func pick(m map[string]string, keys []string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = make(map[string]string, 4)
			}
			out[k] = v
		}
	}
	return out
}

func servicePorts(svc *corev1.Service) []model.ServicePort {
	out := make([]model.ServicePort, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		sp := model.ServicePort{Name: p.Name, Port: p.Port, Protocol: string(p.Protocol)}
		if p.TargetPort.IntVal != 0 || p.TargetPort.StrVal != "" {
			sp.TargetPort = p.TargetPort.String()
		}
		if p.AppProtocol != nil {
			sp.AppProtocol = *p.AppProtocol
		}
		out = append(out, sp)
	}
	return out
}

func SlicePorts(ports []discoveryv1.EndpointPort) []model.EndpointPort {
	out := make([]model.EndpointPort, 0, len(ports))
	for _, p := range ports {
		ep := model.EndpointPort{}
		if p.Name != nil {
			ep.Name = *p.Name
		}
		if p.Port != nil {
			ep.Port = *p.Port
		}
		if p.Protocol != nil {
			ep.Protocol = string(*p.Protocol)
		}
		out = append(out, ep)
	}
	return out
}
