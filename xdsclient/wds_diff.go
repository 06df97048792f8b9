package xdsclient

import (
	"slices"
)

// Address change kinds of a WDS push (the same words as endpoint changes).
const (
	AddressAdded   = EndpointAdded
	AddressRemoved = EndpointRemoved
	AddressChanged = EndpointChanged
)

// AddressChange is one Address resource that differs between two WDS
// states, with a summary of it (as it is now; as it was, when removed).
type AddressChange struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`   // workload or service
	Change string `json:"change"` // added, removed or changed
	// Fields names what changed (e.g. capacity, networkGateway, services).
	Fields []string `json:"fields,omitempty"`

	Network   string   `json:"network,omitempty"`
	Cluster   string   `json:"cluster,omitempty"`
	Addresses []string `json:"addresses,omitempty"`
	// Gateway is the workload's network gateway, ADDR:HBONEPORT.
	Gateway  string `json:"gateway,omitempty"`
	Capacity uint32 `json:"capacity,omitempty"`
	Status   string `json:"status,omitempty"`
	// Services are the service keys a workload backs.
	Services []string `json:"services,omitempty"`
}

func addressChange(a WDSAddress, change string, fields []string) AddressChange {
	c := AddressChange{Name: a.Name, Kind: a.Kind(), Change: change, Fields: fields}
	switch {
	case a.Workload != nil:
		w := a.Workload
		c.Network, c.Cluster, c.Addresses, c.Status = w.Network, w.ClusterID, w.Addresses, w.Status
		c.Gateway = w.NetworkGateway.String()
		c.Capacity = w.EffectiveCapacity()
		c.Services = make([]string, len(w.Services))
		for i, s := range w.Services {
			c.Services[i] = s.Service
		}
	case a.Service != nil:
		for _, na := range a.Service.Addresses {
			c.Addresses = append(c.Addresses, na.Network+"/"+na.Address)
		}
	}
	return c
}

// DiffWDSAddress names the fields in which two versions of one Address
// differ (nil when they are equal).
func DiffWDSAddress(old, cur WDSAddress) []string {
	switch {
	case old.Workload != nil && cur.Workload != nil:
		return diffWorkload(old.Workload, cur.Workload)
	case old.Service != nil && cur.Service != nil:
		return diffService(old.Service, cur.Service)
	case old.Workload == nil && cur.Workload == nil && old.Service == nil && cur.Service == nil:
		return nil
	}
	return []string{"kind"}
}

type fieldDiff []string

func (d *fieldDiff) check(name string, equal bool) {
	if !equal {
		*d = append(*d, name)
	}
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

func diffWorkload(a, b *WDSWorkload) []string {
	var d fieldDiff
	d.check("name", a.Name == b.Name && a.Namespace == b.Namespace)
	d.check("addresses", slices.Equal(a.Addresses, b.Addresses) && a.Hostname == b.Hostname)
	d.check("network", a.Network == b.Network)
	d.check("tunnelProtocol", a.TunnelProtocol == b.TunnelProtocol && a.NativeTunnel == b.NativeTunnel)
	d.check("identity", a.TrustDomain == b.TrustDomain && a.ServiceAccount == b.ServiceAccount)
	d.check("waypoint", sameGateway(a.Waypoint, b.Waypoint))
	d.check("networkGateway", sameGateway(a.NetworkGateway, b.NetworkGateway))
	d.check("node", a.Node == b.Node)
	d.check("canonical", a.CanonicalName == b.CanonicalName && a.CanonicalRevision == b.CanonicalRevision &&
		a.WorkloadType == b.WorkloadType && a.WorkloadName == b.WorkloadName)
	d.check("applicationTunnel", a.ApplicationTunnel == b.ApplicationTunnel)
	d.check("services", sameServicePorts(a.Services, b.Services))
	d.check("authorizationPolicies", slices.Equal(a.AuthorizationPolicies, b.AuthorizationPolicies))
	d.check("status", a.Status == b.Status)
	d.check("cluster", a.ClusterID == b.ClusterID)
	d.check("locality", sameLocality(a.Locality, b.Locality))
	d.check("networkMode", a.NetworkMode == b.NetworkMode)
	d.check("extensions", slices.Equal(a.Extensions, b.Extensions))
	d.check("capacity", a.EffectiveCapacity() == b.EffectiveCapacity())
	return d
}

func diffService(a, b *WDSService) []string {
	var d fieldDiff
	d.check("name", a.Name == b.Name && a.Namespace == b.Namespace && a.Hostname == b.Hostname)
	d.check("addresses", slices.Equal(a.Addresses, b.Addresses))
	d.check("ports", slices.Equal(a.Ports, b.Ports))
	d.check("subjectAltNames", slices.Equal(a.SubjectAltNames, b.SubjectAltNames))
	d.check("waypoint", sameGateway(a.Waypoint, b.Waypoint) && a.IngressUseWaypoint == b.IngressUseWaypoint)
	d.check("loadBalancing", a.LoadBalancing == b.LoadBalancing)
	d.check("ipFamilies", a.IPFamilies == b.IPFamilies)
	d.check("canonical", a.Canonical == b.Canonical)
	d.check("visibility", a.Visibility == b.Visibility)
	d.check("extensions", slices.Equal(a.Extensions, b.Extensions))
	return d
}

// wdsDiff is what one response changed.
type wdsDiff struct {
	added, removed, changed []string
	changes                 []AddressChange
}

// sort orders the names; the changes stay in the order of the push (the
// removals last), which is istiod's and cheap to keep.
func (d *wdsDiff) sort() {
	slices.Sort(d.added)
	slices.Sort(d.removed)
	slices.Sort(d.changed)
}
