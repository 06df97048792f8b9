package xdsclient

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// EncodeWDSAddress is the inverse of DecodeWDSAddress: the wire bytes of an
// istio.workload.Address holding a's workload or service, field by field as
// istiod's generated code writes them (ascending field numbers, oneofs last, default
// values left out). In-process control planes (tests, the benchmark) serve
// these bytes; a view that does not encode (an unparsable IP) is an error.
// A service's LoadBalancing, a rendered summary, is not written back.
func EncodeWDSAddress(a WDSAddress) ([]byte, error) {
	var b []byte
	var err error
	switch {
	case a.Workload != nil:
		var w []byte
		if w, err = appendWorkload(nil, a.Workload); err == nil {
			b = appendMessage(b, fAddressWorkload, w)
		}
	case a.Service != nil:
		var s []byte
		if s, err = appendService(nil, a.Service); err == nil {
			b = appendMessage(b, fAddressService, s)
		}
	}
	return b, err
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendMessage(b []byte, num protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBool(b []byte, num protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	return appendVarint(b, num, 1)
}

// enumNumber is the number of an enum name (0 for "" or an unknown name).
func enumNumber(names []string, name string) uint64 {
	if i := slices.Index(names, name); i > 0 {
		return uint64(i)
	}
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return n
	}
	return 0
}

func appendWorkload(b []byte, w *WDSWorkload) ([]byte, error) {
	b = appendString(b, fWlName, w.Name)
	b = appendString(b, fWlNamespace, w.Namespace)
	for _, a := range w.Addresses {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return nil, err
		}
		b = protowire.AppendTag(b, fWlAddresses, protowire.BytesType)
		b = protowire.AppendBytes(b, ip.AsSlice())
	}
	b = appendString(b, fWlNetwork, w.Network)
	b = appendVarint(b, fWlTunnelProtocol, uint64(w.TunnelProtocol))
	b = appendString(b, fWlTrustDomain, w.TrustDomain)
	b = appendString(b, fWlServiceAccount, w.ServiceAccount)
	var err error
	if b, err = appendGateway(b, fWlWaypoint, w.Waypoint); err != nil {
		return nil, err
	}
	b = appendString(b, fWlNode, w.Node)
	b = appendString(b, fWlCanonicalName, w.CanonicalName)
	b = appendString(b, fWlCanonicalRevision, w.CanonicalRevision)
	b = appendVarint(b, fWlWorkloadType, uint64(w.WorkloadType))
	b = appendString(b, fWlWorkloadName, w.WorkloadName)
	b = appendBool(b, fWlNativeTunnel, w.NativeTunnel)
	for _, p := range w.AuthorizationPolicies {
		b = protowire.AppendTag(b, fWlAuthzPolicies, protowire.BytesType)
		b = protowire.AppendString(b, p)
	}
	b = appendVarint(b, fWlStatus, uint64(w.Status))
	b = appendString(b, fWlClusterID, w.ClusterID)
	if b, err = appendGateway(b, fWlNetworkGateway, w.NetworkGateway); err != nil {
		return nil, err
	}
	b = appendString(b, fWlUID, w.UID)
	b = appendString(b, fWlHostname, w.Hostname)
	for _, sp := range w.Services {
		var entry, pl []byte
		entry = appendString(entry, 1, sp.Service)
		for _, p := range sp.Ports {
			pl = appendMessage(pl, 1, appendPort(nil, p))
		}
		entry = appendMessage(entry, 2, pl)
		b = appendMessage(b, fWlServices, entry)
	}
	if w.ApplicationTunnel != "" {
		proto, port, _ := strings.Cut(w.ApplicationTunnel, ":")
		var at []byte
		at = appendVarint(at, 1, enumNumber(appTunnels, proto))
		n, _ := strconv.ParseUint(port, 10, 32)
		at = appendVarint(at, 2, n)
		b = appendMessage(b, fWlAppTunnel, at)
	}
	if l := w.Locality; l != nil {
		var lb []byte
		lb = appendString(lb, 1, l.Region)
		lb = appendString(lb, 2, l.Zone)
		lb = appendString(lb, 3, l.SubZone)
		b = appendMessage(b, fWlLocality, lb)
	}
	b = appendVarint(b, fWlNetworkMode, uint64(w.NetworkMode))
	for _, e := range w.Extensions {
		b = appendMessage(b, fWlExtensions, appendString(nil, 1, e))
	}
	if w.CapacitySet {
		b = appendMessage(b, fWlCapacity, appendVarint(nil, 1, uint64(w.Capacity)))
	}
	return b, nil
}

func appendPort(b []byte, p WDSPort) []byte {
	b = appendVarint(b, 1, uint64(p.ServicePort))
	b = appendVarint(b, 2, uint64(p.TargetPort))
	return appendVarint(b, 3, enumNumber(appProtocols, p.AppProtocol))
}

func appendNetworkAddress(b []byte, num protowire.Number, network, addr string) ([]byte, error) {
	var m []byte
	m = appendString(m, 1, network)
	if addr != "" {
		var ip netip.Addr
		length := -1
		if p, err := netip.ParsePrefix(addr); err == nil {
			ip, length = p.Addr(), p.Bits()
		} else if ip, err = netip.ParseAddr(addr); err != nil {
			return nil, err
		}
		m = protowire.AppendTag(m, 2, protowire.BytesType)
		m = protowire.AppendBytes(m, ip.AsSlice())
		if length >= 0 {
			m = protowire.AppendTag(m, 3, protowire.VarintType)
			m = protowire.AppendVarint(m, uint64(length))
		}
	}
	return appendMessage(b, num, m), nil
}

func appendGateway(b []byte, num protowire.Number, g *WDSGateway) ([]byte, error) {
	if g == nil {
		return b, nil
	}
	// Go's protobuf writes a oneof after the plain fields: the port first.
	m := appendVarint(nil, 3, uint64(g.HBONEPort))
	if g.Hostname != "" {
		var h []byte
		h = appendString(h, 1, g.Namespace)
		h = appendString(h, 2, g.Hostname)
		m = appendMessage(m, 1, h)
	} else {
		var err error
		if m, err = appendNetworkAddress(m, 2, g.Network, g.Address); err != nil {
			return nil, err
		}
	}
	return appendMessage(b, num, m), nil
}

func appendService(b []byte, s *WDSService) ([]byte, error) {
	b = appendString(b, fSvcName, s.Name)
	b = appendString(b, fSvcNamespace, s.Namespace)
	b = appendString(b, fSvcHostname, s.Hostname)
	var err error
	for _, a := range s.Addresses {
		if b, err = appendNetworkAddress(b, fSvcAddresses, a.Network, a.Address); err != nil {
			return nil, err
		}
	}
	for _, p := range s.Ports {
		b = appendMessage(b, fSvcPorts, appendPort(nil, p))
	}
	for _, san := range s.SubjectAltNames {
		b = protowire.AppendTag(b, fSvcSANs, protowire.BytesType)
		b = protowire.AppendString(b, san)
	}
	if b, err = appendGateway(b, fSvcWaypoint, s.Waypoint); err != nil {
		return nil, err
	}
	b = appendVarint(b, fSvcIPFamilies, enumNumber(ipFamilies, s.IPFamilies))
	for _, e := range s.Extensions {
		b = appendMessage(b, fSvcExtensions, appendString(nil, 1, e))
	}
	b = appendBool(b, fSvcCanonical, s.Canonical)
	b = appendBool(b, fSvcIngressUseWaypoint, s.IngressUseWaypoint)
	b = appendVarint(b, fSvcVisibility, enumNumber(visibilities, s.Visibility))
	return b, nil
}
