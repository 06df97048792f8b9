package xdsclient

import (
	"fmt"
	"slices"
	"strings"
)

// Address change kinds of a WDS push (the same words as endpoint changes).
const (
	AddressAdded   = EndpointAdded
	AddressRemoved = EndpointRemoved
	AddressChanged = EndpointChanged
)

// AddressChange is one Address resource that differs between two WDS
// states, with the view itself (as it is now; as it was, when removed),
// shared with the client's state: read only.
type AddressChange struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`   // workload or service
	Change string `json:"change"` // added, removed or changed
	// Fields names what changed (e.g. capacity, networkGateway, services).
	Fields   []string     `json:"fields,omitempty"`
	Workload *WDSWorkload `json:"workload,omitempty"`
	Service  *WDSService  `json:"service,omitempty"`
}

// Summary is the change in one line: the resource's kind and name, what
// matters of it (a workload's network, where it is reached, capacity,
// tunnel and status; a service's VIPs), and the fields that changed.
func (a AddressChange) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", a.Kind, a.Name)
	switch {
	case a.Workload != nil:
		w := a.Workload
		where := strings.Join(w.Addresses, ",")
		if w.NetworkGateway != nil {
			where = "via " + w.NetworkGateway.String()
		}
		fmt.Fprintf(&b, "  (%s %s cap %d %s %s)", orDash(w.Network), orDash(where), w.EffectiveCapacity(), w.TunnelProtocol, w.Status)
	case a.Service != nil:
		vips := make([]string, 0, len(a.Service.Addresses))
		for _, v := range a.Service.Addresses {
			vips = append(vips, v.Network+"/"+v.Address)
		}
		fmt.Fprintf(&b, "  (vips %s)", orDash(strings.Join(vips, ",")))
	}
	if len(a.Fields) > 0 {
		fmt.Fprintf(&b, "  changed: %s", strings.Join(a.Fields, ","))
	}
	return b.String()
}

// Hostnames are the services a change concerns: a service's own, or those
// a workload backs.
func (a AddressChange) Hostnames() []string {
	switch {
	case a.Service != nil:
		return []string{a.Service.Hostname}
	case a.Workload != nil:
		out := make([]string, 0, len(a.Workload.Services))
		for _, s := range a.Workload.Services {
			_, host, _ := strings.Cut(s.Service, "/")
			out = append(out, host)
		}
		return out
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func addressChange(a WDSAddress, change string, fields []string) AddressChange {
	return AddressChange{Name: a.Name, Kind: a.kind(), Change: change, Fields: fields, Workload: a.Workload, Service: a.Service}
}

// diffWDSAddress names the fields in which two versions of one Address
// differ (nil when they are equal).
func diffWDSAddress(old, cur WDSAddress) []string {
	k, m := diffAddress(old, cur)
	return m.names(k)
}

// addressKind indexes fieldNames: what a fieldMask's bits name.
type addressKind int

const (
	kindWorkload addressKind = iota
	kindService
	kindChanged // a workload became a service or the reverse
)

var fieldNames = [...][]string{
	kindWorkload: {"name", "addresses", "network", "tunnelProtocol", "identity", "waypoint", "networkGateway", "node", "canonical",
		"applicationTunnel", "services", "authorizationPolicies", "status", "cluster", "locality", "networkMode", "extensions", "capacity"},
	kindService: {"name", "addresses", "ports", "subjectAltNames", "waypoint", "loadBalancing", "ipFamilies", "canonical", "visibility", "extensions"},
	kindChanged: {"kind"},
}

// fieldMask has one bit per field of fieldNames[kind] that differs.
type fieldMask uint32

func (m fieldMask) names(k addressKind) []string {
	if m == 0 {
		return nil
	}
	var out []string
	for i, n := range fieldNames[k] {
		if m&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// fieldDiff collects the bits, in fieldNames order.
type fieldDiff struct {
	m fieldMask
	i int
}

func (d *fieldDiff) check(equal bool) {
	if !equal {
		d.m |= 1 << d.i
	}
	d.i++
}

func diffAddress(old, cur WDSAddress) (addressKind, fieldMask) {
	switch {
	case old.Workload != nil && cur.Workload != nil:
		return kindWorkload, diffWorkload(old.Workload, cur.Workload)
	case old.Service != nil && cur.Service != nil:
		return kindService, diffService(old.Service, cur.Service)
	case old.Workload == nil && cur.Workload == nil && old.Service == nil && cur.Service == nil:
		return kindWorkload, 0
	}
	return kindChanged, 1
}

// fieldNamer shares one names slice per combination of changed fields
// between the changes of a client (a push that changes every workload's
// health would otherwise build as many identical slices).
type fieldNamer map[uint64][]string

func (f fieldNamer) names(k addressKind, m fieldMask) []string {
	key := uint64(k)<<32 | uint64(m)
	if n, ok := f[key]; ok {
		return n
	}
	n := m.names(k)
	f[key] = n
	return n
}

func sameGateway(a, b *WDSGateway) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameLocality(a, b *Locality) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameServicePorts(a, b []WDSServicePorts) bool {
	return slices.EqualFunc(a, b, func(x, y WDSServicePorts) bool {
		return x.Service == y.Service && slices.Equal(x.Ports, y.Ports)
	})
}

// diffWorkload checks the fields in the order of fieldNames[kindWorkload].
func diffWorkload(a, b *WDSWorkload) fieldMask {
	var d fieldDiff
	d.check(a.Name == b.Name && a.Namespace == b.Namespace)
	d.check(slices.Equal(a.Addresses, b.Addresses) && a.Hostname == b.Hostname)
	d.check(a.Network == b.Network)
	d.check(a.TunnelProtocol == b.TunnelProtocol && a.NativeTunnel == b.NativeTunnel)
	d.check(a.TrustDomain == b.TrustDomain && a.ServiceAccount == b.ServiceAccount)
	d.check(sameGateway(a.Waypoint, b.Waypoint))
	d.check(sameGateway(a.NetworkGateway, b.NetworkGateway))
	d.check(a.Node == b.Node)
	d.check(a.CanonicalName == b.CanonicalName && a.CanonicalRevision == b.CanonicalRevision &&
		a.WorkloadType == b.WorkloadType && a.WorkloadName == b.WorkloadName)
	d.check(a.ApplicationTunnel == b.ApplicationTunnel)
	d.check(sameServicePorts(a.Services, b.Services))
	d.check(slices.Equal(a.AuthorizationPolicies, b.AuthorizationPolicies))
	d.check(a.Status == b.Status)
	d.check(a.ClusterID == b.ClusterID)
	d.check(sameLocality(a.Locality, b.Locality))
	d.check(a.NetworkMode == b.NetworkMode)
	d.check(slices.Equal(a.Extensions, b.Extensions))
	d.check(a.EffectiveCapacity() == b.EffectiveCapacity())
	return d.m
}

// diffService checks the fields in the order of fieldNames[kindService].
func diffService(a, b *WDSService) fieldMask {
	var d fieldDiff
	d.check(a.Name == b.Name && a.Namespace == b.Namespace && a.Hostname == b.Hostname)
	d.check(slices.Equal(a.Addresses, b.Addresses))
	d.check(slices.Equal(a.Ports, b.Ports))
	d.check(slices.Equal(a.SubjectAltNames, b.SubjectAltNames))
	d.check(sameGateway(a.Waypoint, b.Waypoint) && a.IngressUseWaypoint == b.IngressUseWaypoint)
	d.check(a.LoadBalancing == b.LoadBalancing)
	d.check(a.IPFamilies == b.IPFamilies)
	d.check(a.Canonical == b.Canonical)
	d.check(a.Visibility == b.Visibility)
	d.check(slices.Equal(a.Extensions, b.Extensions))
	return d.m
}

// wdsDiff is what one response changed, in the order of the response
// (istiod's), removals last: sorting ten thousand names per push would cost
// more than the rest of the diff.
type wdsDiff struct {
	added, removed, changed []string
	changes                 []AddressChange
}
