package ambient

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// WorkloadKind says what a predicted workload is.
type WorkloadKind string

const (
	// KindPod is a pod of istiod's own network, sent as it is.
	KindPod WorkloadKind = "pod"
	// KindSplitHorizon stands for another network's pods of a global
	// service, behind that network's gateway.
	KindSplitHorizon WorkloadKind = "split-horizon"
	// KindGateway is a network gateway itself (View.GatewayWorkloads).
	KindGateway WorkloadKind = "gateway"
)

// DropReason says why pods backing a service are not sent for it.
type DropReason string

const (
	// DropNotGlobal: the service is not global in the pods' cluster, which
	// is not istiod's: istiod does not read it there.
	DropNotGlobal DropReason = "not-global"
	// DropLocalNotGlobal: the pods are in another network and their
	// cluster's service is global, but istiod's own cluster has the service
	// and it is not global there, so the merged service is not global and
	// nothing is merged across networks.
	DropLocalNotGlobal DropReason = "local-not-global"
	// DropNoGateway: the pods' network has no gateway istiod knows.
	DropNoGateway DropReason = "no-gateway"
)

// Workload is one workload istiod should send for a service.
type Workload struct {
	UID  string       `json:"uid"`
	Kind WorkloadKind `json:"kind"`
	// Cluster is the pod's cluster; for a split-horizon workload the
	// gateway's (istiod sets cluster_id so).
	Cluster   string                   `json:"cluster"`
	Network   string                   `json:"network"`
	Addresses []string                 `json:"addresses,omitempty"`
	Status    xdsclient.WorkloadStatus `json:"status"`
	// TunnelProtocol is HBONE for a pod istio-cni redirects (or one that
	// terminates HBONE itself) and for a split-horizon workload, else NONE.
	TunnelProtocol xdsclient.TunnelProtocol `json:"tunnelProtocol"`
	// Gateway is a split-horizon workload's network gateway, ADDR:PORT,
	// or NAMESPACE/NAME:PORT when the gateway's address is a DNS name
	// (istiod sends the name, unresolved; ztunnel finds the gateway
	// workload of that name and resolves it when it connects).
	Gateway string `json:"gateway,omitempty"`
	// Hostname is a gateway workload's DNS name: istiod sends it as the
	// workload's hostname, with no addresses.
	Hostname string `json:"hostname,omitempty"`
	// Capacity is a split-horizon workload's: the pods it stands for.
	Capacity uint32 `json:"capacity,omitempty"`
	// StandsFor lists the pods behind a split-horizon workload (UIDs).
	StandsFor []string `json:"standsFor,omitempty"`
	// Candidates are the UIDs istiod may use instead of UID when the
	// network has several gateways (it takes the first it finds:
	// istio/istio#59273); UID is one of them.
	Candidates []string `json:"candidates,omitempty"`
	// ServiceAccount is the pod's (split-horizon: none).
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// Why is a sentence: where it comes from.
	Why string `json:"why"`
}

// Dropped is a group of pods backing the service that istiod does not
// send for it.
type Dropped struct {
	// Clusters hold the pods (one cluster, or several of one network).
	Clusters []string   `json:"clusters"`
	Network  string     `json:"network"`
	Pods     []string   `json:"pods"`
	Reason   DropReason `json:"reason"`
	Why      string     `json:"why"`
}

// port is a service port as WDS carries it.
type port struct {
	ServicePort uint32 `json:"servicePort"`
	TargetPort  uint32 `json:"targetPort"`
}

// Prediction is what the istiod of one control plane should send every
// ztunnel about one service.
type Prediction struct {
	ControlPlane string `json:"controlPlane"`
	// Network is istiod's own network: the split horizon is drawn around
	// it, the same for every ztunnel of this istiod.
	Network string `json:"network"`
	// Service is the WDS key, "namespace/hostname".
	Service  string `json:"service"`
	Hostname string `json:"hostname"`
	// Sent says whether a Service resource is sent; Scope is the merged
	// service's (empty when not sent).
	Sent  bool  `json:"sent"`
	Scope Scope `json:"scope,omitempty"`
	// From is the cluster whose Service the resource is built from.
	From string `json:"from,omitempty"`
	// VIPs are "network/ip" of the Service resource, sorted.
	VIPs  []string `json:"vips,omitempty"`
	Ports []port   `json:"ports,omitempty"`
	// SubjectAltNames are the identities of the other networks' pods of a
	// global service (istiod adds them so ztunnel can verify the gateway's
	// peer), sorted.
	SubjectAltNames []string `json:"subjectAltNames,omitempty"`
	// Waypoint is the waypoint the Service resource carries: the one
	// istiod resolves in the cluster the resource is built from (nil: none).
	Waypoint *Waypoint `json:"waypoint,omitempty"`
	// WaypointUses are how each cluster istiod reads the service in names
	// and resolves its waypoint (only clusters where a waypoint is named).
	WaypointUses []waypointUse `json:"waypointUses,omitempty"`
	// Workloads, sorted by UID.
	Workloads []Workload `json:"workloads"`
	Dropped   []Dropped  `json:"dropped,omitempty"`
	// Notes are things to know: several gateways in a network, facts
	// meshscope could not read, parts istiod builds that are not modelled.
	Notes []string `json:"notes,omitempty"`
}

// ByUID maps every UID a sent workload may carry to the predicted workload
// it stands for: each workload's own UID and its candidates' (the
// attribution explain's table and the UI's ztunnel view share).
func (p Prediction) ByUID() map[string]Workload {
	out := make(map[string]Workload, len(p.Workloads))
	for _, pw := range p.Workloads {
		out[pw.UID] = pw
		for _, c := range pw.Candidates {
			out[c] = pw
		}
	}
	return out
}

// pod is one pod backing the service in one cluster, from its endpoints.
type pod struct {
	cluster, namespace, name string
	addresses                []string
	ready                    bool
	facts                    model.AmbientPod
	tunnel                   bool
}

func (p pod) uid() string { return p.cluster + "//Pod/" + p.namespace + "/" + p.name }

// Predict is what the istiod of v should send for the service with that
// hostname (see the package doc for the rules): the clusters' services it
// reads, merged into one Service (ports, waypoint, VIPs), then the
// workloads: its own network's pods one by one, other networks' behind
// their gateway.
func (v *View) Predict(hostname string) Prediction {
	svc := v.snap.Service(hostname)
	p := Prediction{ControlPlane: v.ControlPlane, Network: v.Network, Hostname: hostname, Workloads: []Workload{}}
	if svc == nil {
		p.Service = "/" + hostname
		p.Notes = append(p.Notes, "no cluster has this service")
		return p
	}
	p.Service = svc.Namespace + "/" + hostname
	read, localIdx := v.servicesRead(&p, svc)
	if len(read) == 0 {
		return finish(p)
	}
	// The merged Service (multicluster.go mergeServiceInfosWithCluster):
	// istiod's own cluster's is the base; not global, it stands alone.
	base := read[0]
	if localIdx >= 0 {
		base = read[localIdx]
	}
	p.Sent, p.Scope, p.From = true, base.scope, base.id
	p.Ports = servicePorts(base.sc)
	v.mergeService(&p, svc, read, base)
	v.addWorkloads(&p, svc, read)
	return finish(p)
}

// clusterSvc is one cluster's service as istiod reads it.
type clusterSvc struct {
	id    string
	sc    *model.ServiceInCluster
	scope Scope
}

// servicesRead are the clusters' services istiod reads: its own cluster's
// always, another's only when global there (services.go
// serviceServiceBuilder); never an ExternalName service. localIdx is
// istiod's own cluster's among them (-1: none).
func (v *View) servicesRead(p *Prediction, svc *model.Service) (read []clusterSvc, localIdx int) {
	localIdx = -1
	for _, id := range v.Clusters {
		sc := svc.Clusters[id]
		if sc == nil || sc.NoService || sc.Type == "ExternalName" {
			continue
		}
		if a := v.snap.AmbientFor(id); a == nil || a.Namespaces == nil {
			p.Notes = append(p.Notes, fmt.Sprintf("the namespace labels of %s are unknown: its services are taken as not global", id))
		}
		cs := clusterSvc{id: id, sc: sc, scope: v.scopeIn(id, svc.Namespace, svc.Hostname)}
		if id != v.cluster && cs.scope != Global {
			p.Dropped = append(p.Dropped, v.dropGroup(id, svc, DropNotGlobal,
				fmt.Sprintf("%s is not global in %s: istiod reads only global services from other clusters", svc.Hostname, id)))
			continue
		}
		if id == v.cluster {
			localIdx = len(read)
		}
		read = append(read, cs)
	}
	return read, localIdx
}

// mergeService gives the merged Service its waypoint and VIPs: each
// cluster's Service is built with that cluster's waypoints, and the merged
// one keeps its base's (mergeServiceInfosWithCluster); a global service
// has every cluster's VIPs.
func (v *View) mergeService(p *Prediction, svc *model.Service, read []clusterSvc, base clusterSvc) {
	for _, cs := range read {
		u := v.waypointIn(cs.id, svc)
		if u.Named == "" {
			continue
		}
		p.WaypointUses = append(p.WaypointUses, u)
		if cs.id != base.id {
			continue
		}
		p.Waypoint = u.Waypoint
		if u.Error != "" {
			p.Notes = append(p.Notes, "no waypoint sent: "+u.Error)
		}
	}
	merged := read
	if base.scope != Global {
		merged = []clusterSvc{base}
	}
	for _, cs := range merged {
		if ip := cs.sc.ClusterIP; ip != "" && ip != "None" {
			p.VIPs = append(p.VIPs, v.networks[cs.id]+"/"+ip)
		}
	}
	slices.Sort(p.VIPs)
	p.VIPs = slices.Compact(p.VIPs)
}

// addWorkloads adds the service's workloads: pods of istiod's network one
// by one (the networkLocalWorkloads collection of buildGlobalCollections
// in multicluster.go), pods of other networks behind their network's
// gateway when the service is global (with their identities as subject
// alt names), else dropped.
func (v *View) addWorkloads(p *Prediction, svc *model.Service, read []clusterSvc) {
	hostname := svc.Hostname
	sans := map[string]bool{}
	remote := map[string][]pod{} // network → pods of other networks, in cluster order
	var remoteOrder []string
	for _, cs := range read {
		net := v.networks[cs.id]
		for _, pd := range v.pods(cs.id, svc.Namespace, cs.sc) {
			if net == v.Network {
				p.Workloads = append(p.Workloads, v.podWorkload(pd, net, hostname))
				continue
			}
			if _, ok := remote[net]; !ok {
				remoteOrder = append(remoteOrder, net)
			}
			remote[net] = append(remote[net], pd)
			if p.Scope == Global {
				sans[spiffe(v.mesh.TrustDomain, pd.namespace, pd.facts.ServiceAccount)] = true
			}
		}
	}
	for _, net := range remoteOrder {
		pods := remote[net]
		if p.Scope != Global {
			p.Dropped = append(p.Dropped, dropped(pods, net, DropLocalNotGlobal,
				fmt.Sprintf("%s is not global in %s, istiod's own cluster: pods of other networks are not merged behind a gateway", hostname, v.ControlPlane)))
			continue
		}
		w, note, ok := v.splitHorizon(net, p.Service, pods)
		if note != "" {
			p.Notes = append(p.Notes, note)
		}
		if !ok {
			p.Dropped = append(p.Dropped, dropped(pods, net, DropNoGateway,
				fmt.Sprintf("network %s has no east-west gateway istiod knows (a Gateway of class istio-east-west with an HBONE listener and an address): istiod logs \"No network gateway found for network %s\"", orNone(net), orNone(net))))
			continue
		}
		p.Workloads = append(p.Workloads, w)
	}
	if p.Scope == Global {
		for s := range sans {
			p.SubjectAltNames = append(p.SubjectAltNames, s)
		}
		slices.Sort(p.SubjectAltNames)
	}
}

func finish(p Prediction) Prediction {
	slices.SortFunc(p.Workloads, func(a, b Workload) int { return strings.Compare(a.UID, b.UID) })
	return p
}

// pods lists the pods backing a service in one cluster, from its
// endpoints: an EndpointSlice names the pods the Service selects, as the
// selector istiod applies would (workloads.go podWorkloadBuilder). Pods
// not (or no longer) in the cache are left out, as istiod builds workloads
// from pods.
func (v *View) pods(cluster, namespace string, sc *model.ServiceInCluster) []pod {
	a := v.snap.AmbientFor(cluster)
	var out []pod
	idx := map[string]int{}
	for _, ep := range sc.Endpoints {
		if ep.Pod == "" || ep.PodMissing {
			continue
		}
		if i, ok := idx[ep.Pod]; ok {
			if !slices.Contains(out[i].addresses, ep.Address) {
				out[i].addresses = append(out[i].addresses, ep.Address)
			}
			continue
		}
		pd := pod{cluster: cluster, namespace: namespace, name: ep.Pod, addresses: []string{ep.Address},
			ready: ep.Ready && !ep.Terminating, facts: a.Pod(namespace, ep.Pod), tunnel: supportsHTTPTunnel(ep.Labels)}
		idx[ep.Pod] = len(out)
		out = append(out, pd)
	}
	slices.SortFunc(out, func(a, b pod) int { return strings.Compare(a.name, b.name) })
	return out
}

// supportsHTTPTunnel reads networking.istio.io/tunnel, a comma-separated
// list (model.SupportsTunnel).
func supportsHTTPTunnel(labels map[string]string) bool {
	return slices.Contains(strings.Split(labels[model.LabelTunnel], ","), "http")
}

// podWorkload is a pod's workload (workloads.go podWorkloadBuilder and
// setTunnelProtocol): unhealthy unless ready, HBONE when istio-cni
// redirects it or it terminates HBONE itself.
func (v *View) podWorkload(pd pod, net, hostname string) Workload {
	w := Workload{UID: pd.uid(), Kind: KindPod, Cluster: pd.cluster, Network: net, Addresses: pd.addresses,
		Status: xdsclient.Healthy, TunnelProtocol: xdsclient.TunnelNone, ServiceAccount: pd.facts.ServiceAccount}
	if !pd.ready {
		w.Status = xdsclient.Unhealthy
	}
	if pd.facts.Redirected || pd.tunnel {
		w.TunnelProtocol = xdsclient.TunnelHBONE
	}
	where := "istiod's own cluster"
	if pd.cluster != v.cluster {
		where = pd.cluster + ", on istiod's network " + orNone(net)
	}
	w.Why = fmt.Sprintf("pod %s/%s in %s backs %s: sent as it is", pd.namespace, pd.name, where, hostname)
	return w
}

// splitHorizon merges one other network's pods of a global service into the
// workload istiod builds for them (the coalescedWorkloads collection of
// buildGlobalCollections and createSplitHorizonWorkload, multicluster.go): behind the network's first gateway, on its
// HBONE port or 15008, capacity one per pod. note flags several gateways.
func (v *View) splitHorizon(net, serviceKey string, pods []pod) (w Workload, note string, ok bool) {
	gws := v.gatewaysFor(net)
	if len(gws) == 0 {
		return w, "", false
	}
	uid := func(g networkGateway) string {
		return net + "/SplitHorizonWorkload/" + g.key() + "/" + serviceKey
	}
	g := gws[0]
	port := g.HBONEPort
	if port == 0 {
		port = defaultHBONEPort
	}
	w = Workload{UID: uid(g), Kind: KindSplitHorizon, Cluster: g.Cluster, Network: net, Status: xdsclient.Healthy, TunnelProtocol: xdsclient.TunnelHBONE,
		Gateway: g.wdsAddress(port).String(), Capacity: uint32(len(pods))}
	clusters := map[string]bool{}
	for _, pd := range pods {
		w.StandsFor = append(w.StandsFor, pd.uid())
		clusters[pd.cluster] = true
	}
	w.Why = fmt.Sprintf("%d pod(s) of network %s merged behind its gateway %s (%s in %s), capacity %d",
		len(pods), orNone(net), w.Gateway, g.Source, g.Cluster, w.Capacity)
	if g.Hostname {
		w.Why += fmt.Sprintf("; %s is a DNS name, sent unresolved: ztunnel resolves it when it connects", g.Address)
	}
	if len(gws) > 1 {
		var addrs []string
		for _, o := range gws {
			w.Candidates = append(w.Candidates, uid(o))
			addrs = append(addrs, o.Source+" "+o.Address)
		}
		note = fmt.Sprintf("network %s has %d gateways (%s): istiod uses the first it finds, in no fixed order (istio/istio#59273), so its split-horizon workloads may point at any of them",
			orNone(net), len(gws), strings.Join(addrs, ", "))
	}
	return w, note, true
}

// dropGroup drops the pods of one cluster's service (named even when it
// has none).
func (v *View) dropGroup(cluster string, svc *model.Service, reason DropReason, why string) Dropped {
	d := dropped(v.pods(cluster, svc.Namespace, svc.Clusters[cluster]), v.networks[cluster], reason, why)
	d.Clusters = []string{cluster}
	return d
}

// dropped is a group of pods of one network not sent, with the clusters
// they are in.
func dropped(pods []pod, net string, reason DropReason, why string) Dropped {
	d := Dropped{Network: net, Reason: reason, Why: why, Pods: []string{}}
	var clusters []string
	for _, pd := range pods {
		d.Pods = append(d.Pods, pd.uid())
		clusters = append(clusters, pd.cluster)
	}
	slices.Sort(clusters)
	d.Clusters = slices.Compact(clusters)
	return d
}

func servicePorts(sc *model.ServiceInCluster) []port {
	out := make([]port, 0, len(sc.Ports))
	for _, sp := range sc.Ports {
		// A named target port is 0 in WDS (resolved per pod).
		tp, _ := strconv.ParseUint(sp.TargetPort, 10, 32)
		out = append(out, port{ServicePort: uint32(sp.Port), TargetPort: uint32(tp)})
	}
	return out
}

// spiffe is spiffe.MustGenSpiffeURI's identity of a service account.
func spiffe(trustDomain, ns, sa string) string {
	if trustDomain == "" {
		trustDomain = model.DefaultTrustDomain
	}
	return "spiffe://" + trustDomain + "/ns/" + ns + "/sa/" + sa
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
