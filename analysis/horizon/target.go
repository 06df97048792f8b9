package horizon

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/model"
)

// SubsetClusterName is the Envoy cluster name istiod uses for a subset of a
// service port (model.BuildSubsetKey): outbound|PORT|SUBSET|HOST.
func SubsetClusterName(hostname, subset string, port int32) string {
	return "outbound|" + strconv.Itoa(int(port)) + "|" + subset + "|" + hostname
}

// configView is what the istiod of one config cluster reads: its mesh
// config and the Istio config of its cluster in the namespaces it reads.
type configView struct {
	cluster string // "" when the snapshot has no config cluster: all config
	mc      model.MeshConfig
	local   model.ClusterLocalHosts
	drs     drIndexes
	pas     []model.PeerAuthentication
	pasByNS map[string][]*model.PeerAuthentication
	// sidecars are the Sidecar resources by namespace, each list as
	// istiod orders it (sidecarFor); vss the VirtualServices.
	sidecars map[string][]*model.Sidecar
	vss      []model.VirtualService
	// ambient is the istiod's ambient view when it runs ambient
	// multi-network mode (its settings say so: see ownClusterOnly).
	ambient *ambient.View
}

// configCache holds a snapshot's configViews, built on first use.
type configCache struct {
	mu    sync.Mutex
	views map[string]*configView
}

// configClusterOf is the cluster whose istiod serves the proxy: its
// ConfigCluster, else the first context cluster (the first mesh config);
// "" when the snapshot knows none.
func configClusterOf(snap *model.Snapshot, proxy Proxy) string {
	if proxy.ConfigCluster != "" {
		return proxy.ConfigCluster
	}
	if len(snap.MeshConfigs) > 0 {
		return snap.MeshConfigs[0].Cluster
	}
	return ""
}

func (c *configCache) get(snap *model.Snapshot, cluster string) *configView {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.views[cluster]; v != nil {
		return v
	}
	v := &configView{cluster: cluster, mc: snap.MeshConfigFor(cluster)}
	v.local = v.mc.ClusterLocalHosts()
	ours := func(c, ns string) bool { return (cluster == "" || c == cluster) && v.mc.Discovered(c, ns) }
	var drs []model.DestinationRule
	for _, d := range snap.DestinationRules {
		if ours(d.Cluster, d.Namespace) {
			drs = append(drs, d)
		}
	}
	v.drs = indexDestinationRules(drs, v.mc)
	for _, a := range snap.PeerAuthentications {
		if ours(a.Cluster, a.Namespace) {
			v.pas = append(v.pas, a)
		}
	}
	v.indexPeerAuthentications()
	v.indexSidecars(snap.Sidecars, ours)
	for _, vs := range snap.VirtualServices {
		if ours(vs.Cluster, vs.Namespace) {
			v.vss = append(v.vss, vs)
		}
	}
	// Only an istiod in ambient multi-network mode filters sidecars'
	// endpoints by service scope (endpoint_builder.go
	// populateAmbientServiceInfo runs only with AMBIENT_ENABLE_MULTI_NETWORK).
	if cluster != "" && snap.SettingsFor(cluster).AmbientMultiNetwork() {
		// snap is already the control plane's view (analysis/plane): the
		// clusters it reads are its own and its remote secrets'.
		reads, _ := snap.ClustersReadBy(cluster)
		v.ambient = ambient.NewView(snap, cluster, reads)
	}
	if c.views == nil {
		c.views = map[string]*configView{}
	}
	c.views[cluster] = v
	return v
}

// source is one list of endpoints istiod merges for a service: a cluster's
// EndpointSlices, or a ServiceEntry's workloads.
type source struct {
	endpoints []model.Endpoint
	// hidden, when set, says why istiod does not read these endpoints
	// (their namespace is outside discoverySelectors).
	hidden string
	// workloads: a ServiceEntry's, whose addresses may be DNS names
	// (EndpointSlices of the kinds istiod reads hold IPs only).
	workloads bool
}

// target is what istiod's EDS builder works from for one cluster name and
// one proxy (NewEndpointBuilder, BuildClusterLoadAssignment): the service
// the proxy's namespace sees under the hostname, its port, the
// DestinationRule and subset, and the endpoints of every source.
type target struct {
	cfg       *configView
	namespace string // the namespace istiod uses for the hostname
	kube      bool   // a Kubernetes Service is the service (its ports win)
	entries   []*model.ServiceEntryHost
	// source says what the namespace's service merges: kube,
	// ServiceEntry or both.
	source       model.ServiceSource
	resolution   string
	portName     string
	clusterLocal bool
	rule         *mergedRule
	// lb is the rule's load-balancing policy for the port and subset
	// (outlier detection, locality and zone-aware settings).
	lb model.LBPolicy
	// trafficDistribution is the Kubernetes Service's preference for near
	// endpoints when it is the service ("": none).
	trafficDistribution string
	subset              string
	subsetLabels        map[string]string
	sources             []source
	// noEndpoints says, when set, why istiod sends no endpoints at all.
	noEndpoints string
}

// resolveTarget finds what istiod uses for hostname:port (and subset) for
// proxy. ok is false when the service or the port is unknown.
func resolveTarget(snap *model.Snapshot, ix *Index, svc *model.Service, subset string, port int32, proxy Proxy) (t target, ok bool) {
	var c candidates
	var entries []*model.ServiceEntryHost
	t.cfg, c, entries = candidatesOf(snap, ix, svc, proxy)
	t.subset = subset
	proxyNS := proxyNamespace(proxy)
	if !c.kubeFound && len(entries) == 0 {
		switch {
		case c.anyKube:
			t.noEndpoints = fmt.Sprintf("namespace %s is outside the mesh config's discoverySelectors in every cluster: istiod does not know %s and sends no endpoints", svc.Namespace, svc.Hostname)
			return t, true
		case len(svc.Clusters) == 0:
			return t, false // only ServiceEntries of other control planes
		}
		// Only EndpointSlices without a Service: predict from them.
		c.kubeNS, c.kubeFound = svc.Namespace, true
	}
	chosen, found, kubeFound, hiddenWhy := c.chooseNamespace(entries, t.cfg, svc, port, proxyNS, proxy.Labels, proxy.Router)
	if !found {
		t.noEndpoints = hiddenWhy + ": istiod sends no endpoints"
		return t, true
	}
	t.setSource(&c, entries, chosen, kubeFound)
	name, found := t.findPort(snap, svc, port)
	if !found {
		return t, false
	}
	t.portName = name
	t.clusterLocal = t.cfg.local.IsClusterLocal(svc.Hostname)
	t.rule = forProxy(t.cfg.drs.lookup(svc.Hostname, chosen, proxyNS), proxyNS, proxy.Labels)
	t.subsetLabels, _ = t.rule.subsetLabels(subset)
	if t.rule != nil {
		t.lb = t.rule.rule.LBFor(uint32(port), subset)
	}

	if t.resolution == "DNS" || t.resolution == "DNS_ROUND_ROBIN" {
		t.noEndpoints = fmt.Sprintf("%s has resolution %s (ServiceEntry %s/%s): Envoy resolves its hosts itself (a DNS cluster), and istiod sends no endpoints over EDS for it",
			svc.Hostname, t.resolution, t.entries[0].Namespace, t.entries[0].Name)
		return t, true
	}
	t.addSources(svc, c.clusters)
	return t, true
}

// candidates are where istiod may take a hostname from besides the
// ServiceEntries: the Kubernetes Service (its namespace, exportTo and
// traffic distribution, from the config cluster when it has one).
type candidates struct {
	clusters           []string
	kubeNS, kubeTD     string
	kubeExport         []string
	kubeFound, anyKube bool
}

// candidatesOf is what istiod chooses a proxy's service of svc from: the
// config view of the proxy's config cluster, the Kubernetes candidate, and
// the ServiceEntries of that config cluster declaring the hostname in
// namespaces istiod reads.
func candidatesOf(snap *model.Snapshot, ix *Index, svc *model.Service, proxy Proxy) (*configView, candidates, []*model.ServiceEntryHost) {
	cfg := ix.configs.get(snap, configClusterOf(snap, proxy))
	var entries []*model.ServiceEntryHost
	for _, e := range svc.ServiceEntries {
		if (cfg.cluster == "" || e.Cluster == cfg.cluster) && cfg.mc.Discovered(e.Cluster, e.Namespace) {
			entries = append(entries, e)
		}
	}
	return cfg, kubeCandidate(svc, cfg), entries
}

// proxyNamespace is the proxy's namespace ("default" when it has none, as
// istiod's model gives a node without NAMESPACE).
func proxyNamespace(proxy Proxy) string {
	if proxy.Namespace == "" {
		return "default"
	}
	return proxy.Namespace
}

func kubeCandidate(svc *model.Service, cfg *configView) candidates {
	cc, mc := cfg.cluster, cfg.mc
	c := candidates{clusters: sortedClusters(svc)}
	for _, cid := range c.clusters {
		sic := svc.Clusters[cid]
		if sic.NoService {
			continue
		}
		c.anyKube = true
		if !mc.Discovered(cid, svc.Namespace) {
			continue
		}
		if !c.kubeFound || cid == cc {
			c.kubeNS, c.kubeExport, c.kubeFound, c.kubeTD = svc.Namespace, sic.ExportTo, true, sic.TrafficDistribution
		}
	}
	return c
}

// chooseNamespace picks the namespace istiod takes the hostname from for
// a proxy in proxyNS: the proxy's own when it has the hostname, else a
// Kubernetes Service's, else the first ServiceEntry exported to the proxy
// explicitly, else the first public one (sidecar scope's selectServices
// with PILOT_UNIFIED_SIDECAR_SCOPE, over servicesExportedToNamespace),
// among those exported to the proxy and imported by its Sidecar (a router
// has none: DefaultSidecarScopeForGateway). found is
// false when none is left, hiddenWhy the sentence saying why; kubeFound
// says whether the Kubernetes Service is still a candidate.
func (c *candidates) chooseNamespace(entries []*model.ServiceEntryHost, cfg *configView, svc *model.Service, port int32, proxyNS string, proxyLabels map[string]string, router bool) (chosen string, found, kubeFound bool, hiddenWhy string) {
	mc := cfg.mc
	visible := func(exportTo []string, ns string) bool {
		return visible(exportTo, mc.DefaultServiceExportTo, ns, proxyNS)
	}
	kubeFound, kubeNS := c.kubeFound, c.kubeNS
	if kubeFound && !visible(c.kubeExport, kubeNS) {
		hiddenWhy = exportSentence(svc.Hostname, kubeNS, orDefault(c.kubeExport, mc.DefaultServiceExportTo), proxyNS)
		kubeFound = false
	}
	var seen []*model.ServiceEntryHost
	for _, e := range entries {
		if visible(e.ExportTo, e.Namespace) {
			seen = append(seen, e)
		} else if hiddenWhy == "" {
			hiddenWhy = exportSentence(svc.Hostname, e.Namespace, orDefault(e.ExportTo, mc.DefaultServiceExportTo), proxyNS)
		}
	}
	// The proxy's Sidecar resource imports only the services its egress
	// hosts name (sidecar.go).
	if sc := cfg.sidecarFor(proxyNS, proxyLabels); sc != nil && !router {
		// A VirtualService the Sidecar selects imports its destinations
		// too, from the proxy's namespace, else a Kubernetes Service's,
		// else the oldest ServiceEntry's (pickBestVisibleNamespace).
		vsNS := ""
		if sc.vsImports(cfg, svc.Hostname, port, proxyNS) {
			switch {
			case kubeFound && kubeNS == proxyNS, slices.ContainsFunc(seen, func(e *model.ServiceEntryHost) bool { return e.Namespace == proxyNS }):
				vsNS = proxyNS
			case kubeFound:
				vsNS = kubeNS
			case len(seen) > 0:
				vsNS = seen[0].Namespace // oldest first
			}
		}
		if kubeFound && !sc.imports(kubeNS, svc.Hostname, port, proxyNS) && vsNS != kubeNS {
			hiddenWhy, kubeFound = sc.sentence(svc.Hostname, kubeNS, port), false
		}
		seen = slices.DeleteFunc(seen, func(e *model.ServiceEntryHost) bool {
			if sc.imports(e.Namespace, svc.Hostname, port, proxyNS) || e.Namespace == vsNS {
				return false
			}
			if hiddenWhy == "" {
				hiddenWhy = sc.sentence(svc.Hostname, e.Namespace, port)
			}
			return true
		})
	}
	switch {
	case kubeFound && kubeNS == proxyNS:
		return kubeNS, true, kubeFound, hiddenWhy
	case slices.ContainsFunc(seen, func(e *model.ServiceEntryHost) bool { return e.Namespace == proxyNS }):
		return proxyNS, true, kubeFound, hiddenWhy
	case kubeFound:
		return kubeNS, true, kubeFound, hiddenWhy
	case len(seen) > 0:
		return firstExported(seen, mc.DefaultServiceExportTo).Namespace, true, kubeFound, hiddenWhy
	}
	return "", false, kubeFound, hiddenWhy
}

// setSource records the chosen namespace and what istiod builds the
// service from there: the Kubernetes Service (when it is a candidate in
// that namespace) and every ServiceEntry of the namespace, which adds its
// workloads.
func (t *target) setSource(c *candidates, entries []*model.ServiceEntryHost, chosen string, kubeFound bool) {
	t.namespace = chosen
	t.kube = kubeFound && c.kubeNS == chosen
	if t.kube {
		t.trafficDistribution = c.kubeTD
	}
	for _, e := range entries {
		if e.Namespace == chosen {
			t.entries = append(t.entries, e)
		}
	}
	switch {
	case t.kube && len(t.entries) > 0:
		t.source = model.SourceBoth
	case t.kube:
		t.source = model.SourceKube
	default:
		t.source = model.SourceServiceEntry
		t.resolution = t.entries[0].Resolution // the oldest's service
	}
}

// findPort finds the port, by number, of the service: the Kubernetes
// Service's, else the ServiceEntries' (oldest first).
func (t *target) findPort(snap *model.Snapshot, svc *model.Service, port int32) (string, bool) {
	var ports []model.ServicePort
	if t.kube {
		ports = registryPorts(snap, svc, t.cfg.cluster)
	} else {
		for _, e := range t.entries {
			ports = append(ports, e.Ports...)
		}
	}
	for _, p := range ports {
		if p.Port == port {
			return p.Name, true
		}
	}
	return "", false
}

// addSources lists where the endpoints come from: each cluster's part of
// the Kubernetes Service (hidden where the mesh config's
// discoverySelectors leave its namespace out), then each ServiceEntry.
func (t *target) addSources(svc *model.Service, clusters []string) {
	mc := t.cfg.mc
	t.sources = make([]source, 0, len(clusters)+len(t.entries))
	if t.kube {
		for _, cid := range clusters {
			src := source{endpoints: svc.Clusters[cid].Endpoints}
			if !mc.Discovered(cid, svc.Namespace) {
				src.hidden = fmt.Sprintf("namespace %s of %s is outside the mesh config's discoverySelectors: istiod does not read it", svc.Namespace, cid)
			}
			t.sources = append(t.sources, src)
		}
	}
	for _, e := range t.entries {
		t.sources = append(t.sources, source{endpoints: e.Endpoints, workloads: true})
	}
}

// registryPorts are the ports of the Kubernetes Service istiod uses for a
// hostname held by several clusters: the first registry's (aggregate
// Controller.Services keeps the first cluster's service and mergeService
// adds only the others' VIPs). The config cluster's registry comes first,
// then the remote clusters in the order their secrets were added — the
// snapshot's cluster order. A port only another cluster's Service has gets
// no cluster, and endpoints whose port name differs from the first
// Service's are not sent (doctor: inconsistent-service).
func registryPorts(snap *model.Snapshot, svc *model.Service, configCluster string) []model.ServicePort {
	if sic := svc.Clusters[configCluster]; sic != nil && !sic.NoService {
		return sic.Ports
	}
	for _, c := range snap.Clusters {
		if sic := svc.Clusters[c.ID]; sic != nil && !sic.NoService {
			return sic.Ports
		}
	}
	return svc.Ports
}

// exclude mirrors the filters of istiod's EDS builder that come before the
// split-horizon rules and that meshscope models beyond a plain pod: the
// namespace istiod does not read, an address that is not an IP (a DNS
// name of a ServiceEntry endpoint), and the subset's labels. It returns the
// reason and sentence of a drop, or "".
func (t *target) exclude(src *source, ep *model.Endpoint) (DropReason, string) {
	if src.hidden != "" {
		return DropNotDiscovered, src.hidden
	}
	if src.workloads && ep.Address != "" {
		if _, err := netip.ParseAddr(ep.Address); err != nil {
			return DropNotIP, fmt.Sprintf("%s is not an IP address: istiod sends only IP endpoints over EDS", ep.Address)
		}
	}
	if len(t.subsetLabels) > 0 && !model.SelectsEndpoint(t.subsetLabels, ep) {
		return DropSubset, fmt.Sprintf("not in subset %s (%s)", t.subset, labelList(t.subsetLabels))
	}
	return "", ""
}

// visible mirrors istiod's IsServiceVisible (with initServiceRegistry's
// rule for "~"): whether a service of namespace ns with exportTo (or the
// mesh's defaultServiceExportTo when it has none) is visible to a proxy in
// proxyNS.
func visible(exportTo, defaults []string, ns, proxyNS string) bool {
	set := orDefault(exportTo, defaults)
	switch {
	case slices.Contains(set, "*"):
		return true
	case slices.Contains(set, "~"):
		return false
	case slices.Contains(set, ".") && ns == proxyNS:
		return true
	}
	return slices.Contains(set, proxyNS)
}

// firstExported is the ServiceEntry a proxy sees first among several of
// other namespaces: those exported to it by name first, then public ones,
// oldest first within each (servicesExportedToNamespace).
func firstExported(seen []*model.ServiceEntryHost, defaults []string) *model.ServiceEntryHost {
	for _, e := range seen {
		if !slices.Contains(orDefault(e.ExportTo, defaults), "*") {
			return e
		}
	}
	return seen[0]
}

func orDefault(l, def []string) []string {
	if len(l) == 0 {
		if len(def) == 0 {
			return []string{"*"}
		}
		return def
	}
	return l
}

func exportSentence(host, ns string, exportTo []string, proxyNS string) string {
	return fmt.Sprintf("%s (namespace %s) is exported to %s only: a proxy in namespace %s does not see it", host, ns, strings.Join(exportTo, ","), proxyNS)
}

func labelList(m map[string]string) string {
	l := make([]string, 0, len(m))
	for k, v := range m {
		l = append(l, k+"="+v)
	}
	sort.Strings(l)
	return strings.Join(l, ",")
}

// epWeight is an endpoint's load-balancing weight before scaling
// (IstioEndpoint.GetLoadBalancingWeight: a WorkloadEntry's weight, else 1).
func epWeight(ep model.Endpoint) uint32 {
	if ep.Weight > 0 {
		return ep.Weight
	}
	return 1
}

// noAddress is the drop of a workload without address that would be sent
// directly: istiod keeps a direct endpoint only when it has an address
// (EndpointsByNetworkFilter); only a gateway can stand for it.
// ownClusterOnly mirrors filterIstioEndpoint in ambient multi-network mode
// (the istiod's PILOT_ENABLE_AMBIENT and AMBIENT_ENABLE_MULTI_NETWORK):
// when the service istiod merges for the hostname (its ambient ServiceInfo)
// is not global, a sidecar gets only the endpoints of its own cluster. A
// ServiceEntry or a hostname istiod holds no Service for is left alone.
func (t *target) ownClusterOnly(hostname string) bool {
	if t.cfg.ambient == nil || !t.kube {
		return false
	}
	scope, ok := t.cfg.ambient.ServiceScope(hostname)
	return ok && scope != ambient.Global
}

func noAddress(ref Ref) Dropped {
	return Dropped{Ref: ref, Reason: DropNoAddress,
		Why: "the workload has no address and no gateway stands for it here: istiod sends only endpoints with an address"}
}

// healthOf is the EDS health istiod gives an endpoint: a pod's from its
// readiness (HEALTHY or UNHEALTHY); a WorkloadEntry's or inline endpoint's
// none (convertWorkloadEntryToWorkloadInstance sets no health status, which
// Envoy reads as UNKNOWN).
func healthOf(ep model.Endpoint) Health {
	switch {
	case ep.Workload != "":
		return Unknown
	case !ep.Ready:
		return Unhealthy
	}
	return Healthy
}

// directSources gives a lookup of the real endpoint a direct entry of the
// prediction is sent for (by cluster and address among the target's
// sources), indexed on first use.
func (t *target) directSources() func(e *Endpoint) *model.Endpoint {
	var m map[[2]string]*model.Endpoint
	return func(e *Endpoint) *model.Endpoint {
		if m == nil {
			m = map[[2]string]*model.Endpoint{}
			for si := range t.sources {
				eps := t.sources[si].endpoints
				for i := range eps {
					k := [2]string{eps[i].Cluster, eps[i].Address}
					if _, dup := m[k]; !dup {
						m[k] = &eps[i]
					}
				}
			}
		}
		return m[[2]string{e.Cluster, e.Address}]
	}
}
