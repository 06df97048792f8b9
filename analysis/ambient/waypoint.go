package ambient

import (
	"fmt"
	"net/netip"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Waypoint is the waypoint a service's traffic goes through, as istiod
// resolves it in one cluster and sends it in the Service resource.
type Waypoint struct {
	// Cluster holds the Gateway (istiod looks it up in the service's own
	// cluster only).
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Network is the network of Cluster: an IP address of the waypoint is
	// sent on it.
	Network string `json:"network"`
	// Address is what the Service resource carries; nil when the Gateway's
	// status has no Hostname or IPAddress address istiod can use.
	Address *xdsclient.WDSGateway `json:"address,omitempty"`
}

// Source is "namespace/name".
func (w *Waypoint) Source() string { return w.Namespace + "/" + w.Name }

// AddressString is the address sent, as xdsclient.WDSGateway.String
// writes it ("" for no waypoint or no address).
func (w *Waypoint) AddressString() string {
	if w == nil {
		return ""
	}
	return w.Address.String()
}

// waypointUse is how a service names its waypoint in one cluster and what
// istiod resolves there.
type waypointUse struct {
	Cluster string `json:"cluster"`
	// Named is the waypoint the labels ask for, "namespace/name" ("" when
	// none does).
	Named string `json:"named,omitempty"`
	// From says which labels name it: "service" or "namespace".
	From string `json:"from,omitempty"`
	// Waypoint is what istiod resolves (nil: no waypoint).
	Waypoint *Waypoint `json:"waypoint,omitempty"`
	// Error says why a named waypoint is not used ("" when it is, or none
	// is named).
	Error string `json:"error,omitempty"`
}

// Istiod's traffic types (constants.ServiceTraffic, AllTraffic).
const (
	trafficService = "service"
	trafficAll     = "all"
	waypointPort   = 15008
)

// waypointIn resolves the waypoint of a service in one cluster, with that
// cluster's Gateways and namespaces, as istiod builds the cluster's Service
// (services.go serviceServiceBuilder, waypoints.go fetchWaypointForService
// and fetchWaypointForTarget):
//   - a Service istiod deploys for a waypoint or an east-west gateway
//     (label gateway.istio.io/managed) has none;
//   - the Service's istio.io/use-waypoint names it ("none" opts out), in
//     the namespace of istio.io/use-waypoint-namespace or the Service's;
//     without the label, the namespace's labels do, in the same way;
//   - the named Gateway must be a waypoint of that cluster: a Gateway of any
//     class with a status address (GlobalWaypointsCollection,
//     gatewayToWaypointTransform), else istiod reports it not ready and
//     sends no waypoint;
//   - its HBONE listener on 15008 must admit routes from the Service's
//     namespace (makeAllowedRoutes, AllowsAttachmentFromNamespace: Same when
//     unset);
//   - its traffic type (istio.io/waypoint-for on the Gateway, else on its
//     GatewayClass, else service) must be service or all.
func (v *View) waypointIn(cluster string, svc *model.Service) waypointUse {
	u := waypointUse{Cluster: cluster}
	a := v.snap.AmbientFor(cluster)
	if a == nil {
		return u
	}
	sl := a.ServiceLabels[svc.Hostname]
	switch sl[model.LabelGatewayManaged] {
	case "istio.io-mesh-controller", "istio.io-eastwest-controller":
		return u
	}
	nsLabels := a.NamespaceLabels(svc.Namespace)
	named, none := useWaypoint(sl, svc.Namespace)
	u.From = "service"
	if none {
		return waypointUse{Cluster: cluster}
	}
	if named == "" {
		named, _ = useWaypoint(nsLabels, svc.Namespace)
		u.From = "namespace"
	}
	if named == "" {
		return waypointUse{Cluster: cluster}
	}
	u.Named = named
	var gw *model.K8sGateway
	for i := range a.Gateways {
		if g := &a.Gateways[i]; g.Source() == named && len(g.Addresses) > 0 {
			gw = g
		}
	}
	if gw == nil {
		u.Error = fmt.Sprintf("%s has no Gateway %s with a status address: istiod takes the waypoint as not ready and sends none", cluster, named)
		return u
	}
	if !allowsAttachment(*gw, svc.Namespace, nsLabels) {
		u.Error = fmt.Sprintf("waypoint %s in %s does not admit routes from namespace %s (allowedRoutes of its HBONE listener on %d)", named, cluster, svc.Namespace, waypointPort)
		return u
	}
	tt := gw.WaypointFor
	if tt == "" {
		tt = trafficService // the GatewayClass's label is not read: istio's own classes carry none
	}
	if tt != trafficService && tt != trafficAll {
		u.Error = fmt.Sprintf("waypoint %s in %s is for %s traffic (istio.io/waypoint-for), not service traffic", named, cluster, tt)
		return u
	}
	u.Waypoint = &Waypoint{Cluster: cluster, Namespace: gw.Namespace, Name: gw.Name, Network: v.networks[cluster],
		Address: waypointAddress(*gw, v.networks[cluster])}
	return u
}

// useWaypoint reads istio.io/use-waypoint(-namespace) (waypoints.go
// GetUseWaypoint): "namespace/name", or none when the value is "none".
func useWaypoint(l map[string]string, defaultNamespace string) (named string, none bool) {
	name, ok := l[model.LabelUseWaypoint]
	if !ok {
		return "", false
	}
	if name == "none" {
		return "", true
	}
	ns := defaultNamespace
	if o, ok := l[model.LabelUseWaypointNamespace]; ok {
		ns = o
	}
	return ns + "/" + name, false
}

// allowsAttachment applies the allowedRoutes of a waypoint's HBONE listener
// on 15008 (makeAllowedRoutes, makeWaypointSelector): From defaults to Same;
// a Gateway without that listener admits its own namespace only. An inbound
// binding annotation that picks another listener is not modelled.
func allowsAttachment(g model.K8sGateway, namespace string, nsLabels map[string]string) bool {
	from := "Same"
	var sel *metav1.LabelSelector
	for _, l := range g.Listeners {
		if l.Protocol == "HBONE" && l.Port == waypointPort {
			if l.AllowedFrom != "" {
				from = l.AllowedFrom
			}
			sel = l.AllowedSelector
			break
		}
	}
	switch from {
	case "All":
		return true
	case "Selector":
		s, err := metav1.LabelSelectorAsSelector(sel)
		return err == nil && s.Matches(labels.Set(nsLabels))
	}
	return g.Namespace == namespace
}

// waypointAddress is the address istiod sends for a waypoint
// (getGatewayAddress): the first Hostname status address, in the Gateway's
// namespace, else the first IPAddress one on the cluster's network; always
// port 15008. nil when there is neither.
func waypointAddress(g model.K8sGateway, network string) *xdsclient.WDSGateway {
	for _, a := range g.Addresses {
		if a.Type == model.AddressTypeHostname {
			return &xdsclient.WDSGateway{Namespace: g.Namespace, Hostname: a.Value, HBONEPort: waypointPort}
		}
	}
	for _, a := range g.Addresses {
		if a.Type != model.AddressTypeIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Value); err == nil {
			return &xdsclient.WDSGateway{Network: network, Address: ip.String(), HBONEPort: waypointPort}
		}
	}
	return nil
}

// waypointProblems reports a service whose waypoint istiod's ztunnels do
// not use as its labels ask. The Service resource carries the waypoint
// istiod resolves in the cluster the resource is built from, its own
// (mergeServiceInfosWithCluster), with that cluster's Gateways only
// (GlobalWaypointsCollection). So:
//   - waypoint-cross-network (error): the waypoint the service names
//     exists in another network's cluster (where the global service resolves
//     it) but not in istiod's own: its ztunnels get the Service without a
//     waypoint and send the traffic straight to the pods, across the
//     east-west gateway too, never through the waypoint and its policies;
//     or (warning) the resource comes from another network's cluster and
//     carries a waypoint there, which its ztunnels must reach across
//     networks;
//   - waypoint-unresolved (warning): the service names a waypoint that no
//     cluster istiod reads it in can resolve: no waypoint is sent.
func (v *View) waypointProblems(svc *model.Service, p Prediction) []model.Problem {
	if !p.Sent || len(p.WaypointUses) == 0 {
		return nil
	}
	prob := func(sev model.Severity, kind model.ProblemKind, cluster, network, format string, a ...any) []model.Problem {
		return []model.Problem{{Severity: sev, Kind: kind, ControlPlane: v.ControlPlane, Cluster: cluster, Network: network, Service: svc.Hostname,
			Sentence: fmt.Sprintf(format, a...)}}
	}
	if w := p.Waypoint; w != nil {
		if w.Network == v.Network {
			return nil
		}
		return prob("warning", model.ProblemWaypointCrossNetwork, w.Cluster, w.Network,
			"ztunnels of %s's istiod (network %s) get %s with waypoint %s of %s on network %s (%s), because %s has no %s of its own and the Service resource comes from %s: they must reach the waypoint across networks; deploy the service (and its waypoint) in %s too",
			v.ControlPlane, orNone(v.Network), svc.Hostname, w.Source(), w.Cluster, orNone(w.Network), orText(w.AddressString(), "no address"),
			v.ControlPlane, svc.Hostname, p.From, v.ControlPlane)
	}
	var base *waypointUse
	for i := range p.WaypointUses {
		if p.WaypointUses[i].Cluster == p.From {
			base = &p.WaypointUses[i]
		}
	}
	for _, u := range p.WaypointUses {
		if w := u.Waypoint; w != nil && w.Network != v.Network {
			why := fmt.Sprintf("the Service in %s names no waypoint", p.From)
			if base != nil {
				why = base.Error
			}
			return prob("error", model.ProblemWaypointCrossNetwork, u.Cluster, w.Network,
				"%s uses waypoint %s in %s (network %s) but ztunnels of %s's istiod (network %s) get the Service from %s without a waypoint (%s), so they send its traffic straight to the pods, through the east-west gateway to network %s too, never through the waypoint or its policies; deploy the waypoint in %s as well and label the Service there alike, or remove the label",
				svc.Hostname, u.Named, u.Cluster, orNone(w.Network), v.ControlPlane, orNone(v.Network), p.From, why, orNone(w.Network), p.From)
		}
	}
	if base == nil || base.Error == "" {
		return nil
	}
	return prob("warning", model.ProblemWaypointUnresolved, p.From, v.networks[p.From],
		"%s names waypoint %s (label %s on the %s) but ztunnels of %s's istiod get it without a waypoint: %s; deploy the waypoint or fix the label",
		svc.Hostname, base.Named, model.LabelUseWaypoint, base.From, v.ControlPlane, base.Error)
}
