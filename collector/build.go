package collector

import (
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// clusterPart is what one cluster contributes to a snapshot. It is rebuilt
// only when that cluster's caches changed (or its ID, or meshNetworks), so a
// burst of events in one cluster does not rebuild the others.
type clusterPart struct {
	id, mnKey   string
	network     string // system namespace label
	ambient     *AmbientCluster
	services    map[string]*ServiceInCluster
	serviceMeta map[string][3]string // hostname → namespace, name, ""
	gateways    []Gateway
	networks    map[string]bool // networks of its endpoints
	counts      Counts
	// What the ServiceEntries' workloadSelectors pick among its pods (for
	// the selectors of key selKey), and its namespaces' labels.
	selKey   string
	selected [][]Endpoint
	nsLabels map[string]map[string]string
}

// importantServiceLabels are the Service labels that make it a gateway.
var importantServiceLabels = []string{LabelNetwork, LabelGatewayPort, "istio"}

// cacheView is the read side of one cluster's informer caches; tests and
// the benchmark build parts from plain objects through it.
type cacheView struct {
	services   []*corev1.Service
	slices     []*cachedSlice
	pod        func(key string) *cachedPod
	pods       func() []*cachedPod
	namespaces func() []*corev1.Namespace
	node       func(name string) *cachedNode
	nodes      func() []*cachedNode // nil when nodes are not watched
	systemNS   *corev1.Namespace
	gateways   []*cachedGateway
	gatewayAPI bool
	podCount   int
	nodeCount  int
	secretsLen int
}

func (w *watcher) view(systemNamespace string) cacheView {
	v := cacheView{}
	for _, o := range w.services.inf.GetStore().List() {
		if s, ok := o.(*corev1.Service); ok {
			v.services = append(v.services, s)
		}
	}
	for _, o := range w.slices.inf.GetStore().List() {
		if s, ok := o.(*cachedSlice); ok {
			v.slices = append(v.slices, s)
		}
	}
	podStore := w.pods.inf.GetStore()
	v.pod = func(key string) *cachedPod {
		o, ok, _ := podStore.GetByKey(key)
		if !ok {
			return nil
		}
		p, _ := o.(*cachedPod)
		return p
	}
	v.podCount = len(podStore.ListKeys())
	v.pods = func() []*cachedPod {
		var out []*cachedPod
		for _, o := range podStore.List() {
			if p, ok := o.(*cachedPod); ok {
				out = append(out, p)
			}
		}
		return out
	}
	nsStore := w.namespaces.inf.GetStore()
	v.namespaces = func() []*corev1.Namespace {
		var out []*corev1.Namespace
		for _, o := range nsStore.List() {
			if n, ok := o.(*corev1.Namespace); ok {
				out = append(out, n)
			}
		}
		return out
	}
	if w.gateways != nil {
		for _, o := range w.gateways.inf.GetStore().List() {
			if g, ok := o.(*cachedGateway); ok {
				v.gateways = append(v.gateways, g)
			}
		}
		v.gatewayAPI = w.gatewayAPI.Load()
	}
	if w.nodes != nil {
		ns := w.nodes.inf.GetStore()
		v.node = func(name string) *cachedNode {
			o, ok, _ := ns.GetByKey(name)
			if !ok {
				return nil
			}
			n, _ := o.(*cachedNode)
			return n
		}
		v.nodeCount = len(ns.ListKeys())
		v.nodes = func() []*cachedNode {
			var out []*cachedNode
			for _, o := range ns.List() {
				if n, ok := o.(*cachedNode); ok {
					out = append(out, n)
				}
			}
			return out
		}
	}
	if o, ok, _ := nsStore.GetByKey(systemNamespace); ok {
		v.systemNS, _ = o.(*corev1.Namespace)
	}
	if w.secrets != nil {
		v.secretsLen = len(w.secrets.inf.GetStore().ListKeys())
	}
	return v
}

// meshNetworksRaw returns the meshNetworks text of the mesh ConfigMap
// ("istio", or "istio-<revision>"), if any.
func (w *watcher) meshNetworksRaw(ns string) string {
	text, _ := w.meshConfigMapKey(ns, meshNetworksKey)
	return text
}

// meshConfigMapKey returns one key of the mesh ConfigMap, and whether the
// ConfigMap exists.
func (w *watcher) meshConfigMapKey(ns, key string) (string, bool) {
	o, ok, _ := w.configMaps.inf.GetStore().GetByKey(ns + "/" + MeshConfigMapName(w.opts.Revision))
	if !ok {
		return "", false
	}
	cm, _ := o.(*corev1.ConfigMap)
	if cm == nil {
		return "", false
	}
	return cm.Data[key], true
}

// buildPart turns one cluster's caches into its share of a snapshot.
func buildPart(v cacheView, id, domain string, ix *meshNetworkIndex) *clusterPart {
	p := &clusterPart{
		id:          id,
		services:    make(map[string]*ServiceInCluster, len(v.services)),
		serviceMeta: make(map[string][3]string, len(v.services)),
		networks:    map[string]bool{},
	}
	if ix != nil {
		p.mnKey = ix.key
	}
	if v.systemNS != nil {
		p.network = v.systemNS.Labels[LabelNetwork]
	}
	p.counts = Counts{Services: len(v.services), EndpointSlices: len(v.slices), Pods: v.podCount, Nodes: v.nodeCount, RemoteSecrets: v.secretsLen}
	serviceLabels := make(map[string]map[string]string, len(v.services))

	for _, svc := range v.services {
		h := svc.Name + "." + svc.Namespace + ".svc." + domain
		sc := &ServiceInCluster{
			Cluster:   id,
			Type:      string(svc.Spec.Type),
			ClusterIP: svc.Spec.ClusterIP,
			Ports:     servicePorts(svc),
			Labels:    pick(svc.Labels, importantServiceLabels),
			ExportTo:  exportToAnnotation(svc.Annotations),
		}
		serviceShape(sc, svc)
		p.services[h] = sc
		p.serviceMeta[h] = [3]string{svc.Namespace, svc.Name}
		serviceLabels[h] = svc.Labels
		p.gateways = append(p.gateways, serviceGateways(svc, id, h, ix, v.nodes)...)
	}

	// Per-pod facts are shared by every service the pod backs.
	type podInfo struct {
		labels   map[string]string
		tlsMode  string
		netLabel string
		node     string
		locality string
		missing  bool
	}
	pods := make(map[string]*podInfo, v.podCount)
	// Slices istiod reads (it ignores FQDN slices and slices of no
	// Service), with each hostname's endpoint count, so every service's
	// endpoints are allocated once at their final size.
	hostOf := make([]string, len(v.slices))
	total := map[string]int{}
	for i, sl := range v.slices {
		if sl.service == "" || sl.addressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		hostOf[i] = sl.service + "." + sl.namespace + ".svc." + domain
		for _, ep := range sl.endpoints {
			total[hostOf[i]] += len(ep.addresses)
		}
	}
	slicesOf := map[string]int{} // hostname → slices seen; >1 needs de-duplication
	for i, sl := range v.slices {
		h := hostOf[i]
		if h == "" {
			continue
		}
		sc := p.services[h]
		if sc == nil {
			sc = &ServiceInCluster{Cluster: id, NoService: true}
			p.services[h] = sc
			p.serviceMeta[h] = [3]string{sl.namespace, sl.service}
		}
		if sc.Endpoints == nil {
			sc.Endpoints = make([]Endpoint, 0, total[h])
		}
		slicesOf[h]++
		for j := range sl.endpoints {
			ep := &sl.endpoints[j]
			var pi *podInfo
			if ep.pod != "" {
				ns := ep.podNamespace
				if ns == "" {
					ns = sl.namespace
				}
				key := ns + "/" + ep.pod
				pi = pods[key]
				if pi == nil {
					pi = &podInfo{}
					if pod := v.pod(key); pod != nil {
						pi.labels = pod.Labels // interned by the pod cache
						pi.tlsMode = pod.Labels[LabelTLSMode]
						pi.netLabel = pod.Labels[LabelNetwork]
						pi.node = pod.NodeName
						pi.locality = v.podLocality(pod.Labels, pod.NodeName)
					} else {
						pi.missing = true
					}
					pods[key] = pi
				}
			}
			node := ep.node
			for _, addr := range ep.addresses {
				e := Endpoint{
					Cluster:     id,
					Address:     addr,
					Ports:       sl.ports,
					Ready:       ep.conditions.ready(),
					Serving:     ep.conditions.serving(),
					Terminating: ep.conditions.terminating(),
				}
				netLabel := ""
				if pi != nil {
					e.Labels, e.TLSMode, netLabel, e.Locality = pi.labels, pi.tlsMode, pi.netLabel, pi.locality
					if node == "" {
						node = pi.node
					}
					e.Pod = ep.pod
					e.PodMissing = pi.missing
				}
				e.Node = node
				e.Network, e.NetworkFrom = resolveNetwork(netLabel, p.network, ix, id, addr)
				if e.Network != "" {
					p.networks[e.Network] = true
				}
				sc.Endpoints = append(sc.Endpoints, e)
			}
		}
	}
	for h, sc := range p.services {
		sortEndpoints(sc.Endpoints)
		if slicesOf[h] > 1 {
			// Slices of one service can overlap while the endpoint
			// controller moves endpoints between them: keep one per address.
			sc.Endpoints = dedupeSorted(sc.Endpoints)
		}
		p.counts.Endpoints += len(sc.Endpoints)
	}
	p.ambient = buildAmbient(v, id, serviceLabels)
	return p
}

// sortEndpoints orders endpoints by IP (numerically), parsing each address
// once rather than in every comparison.
func sortEndpoints(eps []Endpoint) {
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
	eps  []Endpoint
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

func dedupeSorted(eps []Endpoint) []Endpoint {
	out := eps[:0]
	for i := range eps {
		if i > 0 && eps[i].Address == out[len(out)-1].Address {
			continue
		}
		out = append(out, eps[i])
	}
	return out
}

// internLabels returns a pod's labels, sharing one map between all pods
// with the same labels (the replicas of a deployment): fewer allocations
// while building, less heap in every snapshot.
func internLabels(sets map[string]map[string]string, labels map[string]string) map[string]string {
	if len(labels) == 0 {
		return nil
	}
	var kbuf [32]string
	keys := append(kbuf[:0], slices.Collect(maps.Keys(labels))...)
	slices.Sort(keys)
	var buf [512]byte
	b := buf[:0]
	for _, k := range keys {
		b = append(b, k...)
		b = append(b, 0)
		b = append(b, labels[k]...)
		b = append(b, 0)
	}
	if m, ok := sets[string(b)]; ok { // no allocation for the lookup
		return m
	}
	m := maps.Clone(labels)
	sets[string(b)] = m
	return m
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

func servicePorts(svc *corev1.Service) []ServicePort {
	out := make([]ServicePort, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		sp := ServicePort{Name: p.Name, Port: p.Port, Protocol: string(p.Protocol)}
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

func slicePorts(ports []discoveryv1.EndpointPort) []EndpointPort {
	out := make([]EndpointPort, 0, len(ports))
	for _, p := range ports {
		ep := EndpointPort{}
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

// build assembles a snapshot from every cluster's (cached or rebuilt) part.
func (r *Registry) build(version uint64) *Snapshot {
	type item struct {
		e   entry // copy of the registry's record
		ptr *entry
		w   *watcher
	}
	var swapsDone []*entry
	defer func() {
		if len(swapsDone) == 0 {
			return
		}
		r.mu.Lock()
		for _, e := range swapsDone {
			e.swap = nil
		}
		r.mu.Unlock()
	}()
	r.mu.Lock()
	items := make([]item, 0, len(r.entries))
	for _, e := range r.entries {
		it := item{e: *e, ptr: e, w: e.w}
		it.e.sources = append([]SourceRef(nil), e.sources...)
		it.e.warnings = append([]string(nil), e.warnings...)
		items = append(items, it)
	}
	r.mu.Unlock()

	// meshNetworks: the ConfigMaps of all clusters, merged in cluster
	// order (first definition of a network wins).
	merged := &MeshNetworks{Networks: map[string]MeshNetwork{}}
	var keyParts []string
	var mnWarnings = map[string][]string{}
	for _, it := range items {
		if it.w == nil {
			continue
		}
		raw := it.w.meshNetworksRaw(r.opts.SystemNamespace)
		if raw == "" {
			continue
		}
		keyParts = append(keyParts, it.e.id+"\x00"+raw)
		mn, err := ParseMeshNetworks(raw)
		if err != nil {
			mnWarnings[it.e.key] = append(mnWarnings[it.e.key], "meshNetworks in ConfigMap istio does not parse: "+oneLine(err.Error()))
			continue
		}
		for name, n := range mn.Networks {
			if _, ok := merged.Networks[name]; !ok {
				merged.Networks[name] = n
			}
		}
	}
	ix := newMeshNetworkIndex(merged, strings.Join(keyParts, "\x01"))

	// Istio config: ServiceEntries from the config (context) clusters,
	// WorkloadEntries from every cluster; the ServiceEntries' selectors
	// go to every cluster's pods.
	var ses []ServiceEntry
	var wes []WorkloadEntry
	for _, it := range items {
		if it.w == nil || it.e.removed {
			continue
		}
		if it.e.fromContext {
			ses = append(ses, it.w.serviceEntries(it.e.id)...)
		}
		wes = append(wes, it.w.workloadEntries(it.e.id)...)
	}
	sel := selectorsOf(ses)
	selected := map[string][][]Endpoint{}
	nsLabels := map[string]map[string]map[string]string{}

	s := &Snapshot{Version: version, Time: time.Now(), SystemNamespace: r.opts.SystemNamespace}
	services := map[string]*Service{}
	netClusters := map[string]map[string]bool{}
	addNet := func(n, c string) {
		if netClusters[n] == nil {
			netClusters[n] = map[string]bool{}
		}
		if c != "" {
			netClusters[n][c] = true
		}
	}
	for _, it := range items {
		e := it.e
		c := Cluster{ID: e.id, IDFrom: e.idFrom, Source: e.source, Sources: e.sources, Server: e.server, Warnings: e.warnings}
		if len(c.Sources) <= 1 {
			c.Sources = nil
		}
		c.Warnings = append(c.Warnings, mnWarnings[e.key]...)
		switch {
		case e.removed:
			c.State = StateRemoved
		case e.fixed.Kind != "":
			c.State, c.ErrorKind, c.Reason = StateError, e.fixed.Kind, e.fixed.Reason
		case it.w == nil:
			c.State = StateConnecting
		default:
			it.w.status(&c)
		}
		if it.w != nil && !e.removed {
			w := it.w
			part := w.part.Load()
			if w.dirty.Swap(false) || part == nil || part.id != e.id || part.mnKey != ix.key || part.selKey != sel.key {
				v := w.view(r.opts.SystemNamespace)
				part = buildPart(v, e.id, r.opts.DomainSuffix, ix)
				part.selKey, part.selected = sel.key, selectPods(v, e.id, part.network, ix, sel)
				part.nsLabels = namespaceLabels(v)
				w.part.Store(part)
			}
			part, done := e.swap.part(w, e.id, part)
			if done {
				swapsDone = append(swapsDone, it.ptr)
			}
			c.Network = part.network
			c.Counts = part.counts
			w.controlPlaneFacts(&c, r.opts.SystemNamespace)
			if part.selKey == sel.key {
				selected[e.id] = part.selected
			}
			nsLabels[e.id] = part.nsLabels
			if part.ambient != nil {
				s.Ambient = append(s.Ambient, *part.ambient)
			}
			if part.network != "" {
				addNet(part.network, e.id)
			}
			for n := range part.networks {
				addNet(n, e.id)
			}
			s.Gateways = append(s.Gateways, part.gateways...)
			drs, pas := it.w.policies(e.id)
			s.DestinationRules = append(s.DestinationRules, drs...)
			s.PeerAuthentications = append(s.PeerAuthentications, pas...)
			for h, sc := range part.services {
				svc := services[h]
				if svc == nil {
					m := part.serviceMeta[h]
					svc = &Service{Hostname: h, Namespace: m[0], Name: m[1], Clusters: map[string]*ServiceInCluster{}}
					services[h] = svc
				}
				if _, dup := svc.Clusters[e.id]; !dup {
					svc.Clusters[e.id] = sc
				}
			}
		}
		if e.fromContext && !e.removed {
			s.MeshConfigs = append(s.MeshConfigs, r.meshConfigOf(e.id, it.w))
		}
		s.Clusters = append(s.Clusters, c)
	}
	attachServiceEntries(services, ses, wes, selected)
	s.ServiceEntries, s.WorkloadEntries = ses, wes
	for i := range s.MeshConfigs {
		s.MeshConfigs[i].DiscoveryNamespaces = discoveryNamespaces(s.MeshConfigs[i], nsLabels)
	}
	s.Gateways = append(s.Gateways, staticGateways(merged)...)
	sort.SliceStable(s.Gateways, func(i, j int) bool {
		a, b := s.Gateways[i], s.Gateways[j]
		if a.Network != b.Network {
			return a.Network < b.Network
		}
		if a.Cluster != b.Cluster {
			return a.Cluster < b.Cluster
		}
		return a.Address < b.Address
	})

	s.Services = make([]*Service, 0, len(services))
	for _, svc := range services {
		svc.Ports = mergePorts(svc)
		svc.Source = serviceSource(svc)
		s.Services = append(s.Services, svc)
	}
	sort.Slice(s.Services, func(i, j int) bool { return s.Services[i].Hostname < s.Services[j].Hostname })

	gwCount := map[string]int{}
	for _, g := range s.Gateways {
		gwCount[g.Network]++
		addNet(g.Network, g.Cluster)
	}
	for name := range merged.Networks {
		addNet(name, "")
	}
	names := make([]string, 0, len(netClusters))
	for n := range netClusters {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		nw := Network{Name: n, Gateways: gwCount[n]}
		for c := range netClusters[n] {
			nw.Clusters = append(nw.Clusters, c)
		}
		sort.Strings(nw.Clusters)
		for _, ep := range merged.Networks[n].Endpoints {
			if ep.FromRegistry != "" {
				nw.FromRegistry = append(nw.FromRegistry, ep.FromRegistry)
			}
			if ep.FromCIDR != "" {
				nw.FromCIDR = append(nw.FromCIDR, ep.FromCIDR)
			}
		}
		s.Networks = append(s.Networks, nw)
	}
	return s
}

// mergePorts is the union of the clusters' ports by number, the first
// cluster (by ID) defining each, then the ServiceEntries' (oldest first).
func mergePorts(svc *Service) []ServicePort {
	ids := make([]string, 0, len(svc.Clusters))
	for id := range svc.Clusters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) == 1 && len(svc.ServiceEntries) == 0 {
		return svc.Clusters[ids[0]].Ports
	}
	var out []ServicePort
	seen := map[int32]bool{}
	add := func(ps []ServicePort) {
		for _, p := range ps {
			if !seen[p.Port] {
				seen[p.Port] = true
				out = append(out, p)
			}
		}
	}
	for _, id := range ids {
		add(svc.Clusters[id].Ports)
	}
	for _, se := range svc.ServiceEntries {
		add(se.Ports)
	}
	return out
}
