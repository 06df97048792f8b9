package xdsclient

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// The workload API is decoded straight from the wire with protowire and the
// field numbers of istio's pkg/workloadapi/workload.proto: meshscope cannot
// depend on istio.io/istio (its module needs replace directives), and the
// schema is small and stable. Unknown fields are skipped, as a generated
// decoder would; a malformed message is an error (and a NACK).

// Field numbers of workload.proto.
const (
	fAddressWorkload = 1
	fAddressService  = 2

	fSvcName               = 1
	fSvcNamespace          = 2
	fSvcHostname           = 3
	fSvcAddresses          = 4
	fSvcPorts              = 5
	fSvcSANs               = 6
	fSvcWaypoint           = 7
	fSvcLoadBalancing      = 8
	fSvcIPFamilies         = 9
	fSvcExtensions         = 10
	fSvcCanonical          = 11
	fSvcIngressUseWaypoint = 12
	fSvcVisibility         = 14

	fWlName              = 1
	fWlNamespace         = 2
	fWlAddresses         = 3
	fWlNetwork           = 4
	fWlTunnelProtocol    = 5
	fWlTrustDomain       = 6
	fWlServiceAccount    = 7
	fWlWaypoint          = 8
	fWlNode              = 9
	fWlCanonicalName     = 10
	fWlCanonicalRevision = 11
	fWlWorkloadType      = 12
	fWlWorkloadName      = 13
	fWlNativeTunnel      = 14
	fWlAuthzPolicies     = 16
	fWlStatus            = 17
	fWlClusterID         = 18
	fWlNetworkGateway    = 19
	fWlUID               = 20
	fWlHostname          = 21
	fWlServices          = 22
	fWlAppTunnel         = 23
	fWlLocality          = 24
	fWlNetworkMode       = 25
	fWlExtensions        = 26
	fWlCapacity          = 27
)

// Enum names of workload.proto, by number.
var (
	tunnelProtocols = []string{"NONE", "HBONE", "LEGACY_ISTIO_MTLS"}
	workloadStatus  = []string{"HEALTHY", "UNHEALTHY"}
	workloadTypes   = []string{"DEPLOYMENT", "CRONJOB", "POD", "JOB"}
	networkModes    = []string{"STANDARD", "HOST_NETWORK"}
	appProtocols    = []string{"UNKNOWN", "HTTP11", "HTTP2", "GRPC", "TCP", "TLS"}
	ipFamilies      = []string{"AUTOMATIC", "IPV4_ONLY", "IPV6_ONLY", "DUAL"}
	visibilities    = []string{"PUBLIC", "NAMESPACE"}
	lbScopes        = []string{"UNSPECIFIED_SCOPE", "REGION", "ZONE", "SUBZONE", "NODE", "CLUSTER", "NETWORK"}
	lbModes         = []string{"UNSPECIFIED_MODE", "STRICT", "FAILOVER", "PASSTHROUGH"}
	lbHealth        = []string{"ONLY_HEALTHY", "ALLOW_ALL"}
	appTunnels      = []string{"NONE", "PROXY"}
)

func enumName(names []string, v uint64) string {
	if v < uint64(len(names)) {
		return names[v]
	}
	return strconv.FormatUint(v, 10) // a value newer than this schema
}

// DecodeWDSAddress decodes the bytes of an istio.workload.Address (the
// value of the Any istiod sends) named name.
func DecodeWDSAddress(name string, b []byte) (WDSAddress, error) {
	return (*wdsDecoder)(nil).address(name, b)
}

// wdsDecoder shares the strings that repeat across workloads (namespaces,
// networks, clusters, nodes, service keys, ...) between the views of one
// client, and carves views, small slices and addresses' text from shared
// chunks: a 10,000-workload push makes a few hundred allocations, not a
// hundred thousand. A nil decoder shares nothing.
type wdsDecoder struct {
	strs  map[string]string
	ports map[string][]WDSPort // a PortList's bytes → its ports
	// last holds the latest value of each kind of string: consecutive
	// workloads (pods of one deployment, istiod sends them in order)
	// mostly repeat it, and a comparison is cheaper than a map lookup.
	last [slots]string
	// lastPorts is the latest port list decoded, by its bytes.
	lastPortsKey string
	lastPorts    []WDSPort
	// Views and their small slices are carved from shared chunks (one
	// allocation per chunk, not per workload), gathered first in scratch
	// buffers reused from one workload to the next.
	workloads slab[WDSWorkload]
	strings   slab[string]
	services  slab[WDSServicePorts]
	addrs     []string
	svcs      []WDSServicePorts
	text      []byte // addresses' text, appended only
}

// slab hands out views and small slices carved from chunks of slabChunk
// elements. A chunk stays allocated while any view carved from it is held,
// which bounds the cost to one chunk per held view at worst; in exchange a
// push of thousands of workloads makes a few dozen allocations instead of
// thousands (and the garbage collector has as many fewer objects to trace).
type slab[T any] struct{ free []T }

const slabChunk = 128

// clone returns a copy of src carved from the slab (nil when empty).
func (s *slab[T]) clone(src []T) []T {
	n := len(src)
	if n == 0 {
		return nil
	}
	if n > slabChunk/4 {
		return slices.Clone(src)
	}
	if len(s.free) < n {
		s.free = make([]T, slabChunk)
	}
	out := s.free[:n:n] // a full slice: an append copies, never overwrites a neighbour
	s.free = s.free[n:]
	copy(out, src)
	return out
}

// one returns a pointer to a copy of v carved from the slab.
func (s *slab[T]) one(v T) *T {
	p := s.next()
	*p = v
	return p
}

// next returns a pointer to a zero element carved from the slab.
func (s *slab[T]) next() *T {
	if len(s.free) == 0 {
		s.free = make([]T, slabChunk)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// Slots of wdsDecoder.last: a workload's field numbers, then others.
const (
	slotServiceNamespace = fWlCapacity + 1 + iota
	slotNetworkAddress
	slotServiceKey
	slots
)

// wdsInternLimit bounds the table: past it, it starts afresh (values that
// left the mesh are never removed one by one).
const wdsInternLimit = 50_000

func newWDSDecoder() *wdsDecoder {
	return &wdsDecoder{strs: map[string]string{}, ports: map[string][]WDSPort{}}
}

// shared returns v as a string, the shared copy when there is one; slot
// says which kind of string it is.
func (d *wdsDecoder) shared(slot int, v []byte) string {
	if d == nil || len(v) == 0 {
		return string(v)
	}
	if d.last[slot] == string(v) {
		return d.last[slot]
	}
	s, ok := d.strs[string(v)] // no allocation for the lookup
	if !ok {
		if len(d.strs) >= wdsInternLimit {
			clear(d.strs)
		}
		s = string(v)
		d.strs[s] = s
	}
	d.last[slot] = s
	return s
}

// named returns v as a string, reusing the resource name when v is it or
// ends it (a workload's UID is its resource name, and a pod's name ends its
// UID, CLUSTER//Pod/NS/NAME): no copy.
func named(v []byte, name string) string {
	if n := len(name) - len(v); n >= 0 && name[n:] == string(v) {
		return name[n:]
	}
	return string(v)
}

func (d *wdsDecoder) address(name string, b []byte) (WDSAddress, error) {
	a := WDSAddress{Name: name}
	err := fields(b, ldAddress, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case fAddressWorkload:
			// Decoded in place, into its slot of the slab: a 400-byte view
			// is not copied (and not write-barriered) once more.
			var w *WDSWorkload
			if d != nil {
				w = d.workloads.next()
			} else {
				w = &WDSWorkload{}
			}
			if err := d.workload(name, v, w); err != nil {
				return fmt.Errorf("workload: %w", err)
			}
			a.Workload, a.Service = w, nil
		case fAddressService:
			s, err := d.service(v)
			if err != nil {
				return fmt.Errorf("service: %w", err)
			}
			a.Service, a.Workload = &s, nil
		}
		return nil
	})
	if err != nil {
		return a, fmt.Errorf("address %s: %w", name, err)
	}
	if a.Workload == nil && a.Service == nil {
		return a, fmt.Errorf("address %s holds neither a workload nor a service", name)
	}
	return a, nil
}

// workload decodes a Workload into w, which must be zero.
func (d *wdsDecoder) workload(name string, b []byte, w *WDSWorkload) error {
	if d != nil {
		d.addrs, d.svcs = d.addrs[:0], d.svcs[:0]
	}
	err := fields(b, ldWorkload, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		var err error
		switch num {
		case fWlUID:
			w.UID = named(v, name)
		case fWlName:
			w.Name = named(v, name)
		case fWlNamespace:
			w.Namespace = d.shared(fWlNamespace, v)
		case fWlAddresses:
			var ip string
			if ip, err = d.ip(v); err == nil {
				if d != nil {
					d.addrs = append(d.addrs, ip)
				} else {
					w.Addresses = append(w.Addresses, ip)
				}
			}
		case fWlHostname:
			w.Hostname = string(v)
		case fWlNetwork:
			w.Network = d.shared(fWlNetwork, v)
		case fWlTunnelProtocol:
			w.TunnelProtocol = TunnelProtocol(n)
		case fWlTrustDomain:
			w.TrustDomain = d.shared(fWlTrustDomain, v)
		case fWlServiceAccount:
			w.ServiceAccount = d.shared(fWlServiceAccount, v)
		case fWlWaypoint:
			w.Waypoint, err = d.gateway(v)
		case fWlNetworkGateway:
			w.NetworkGateway, err = d.gateway(v)
		case fWlNode:
			w.Node = d.shared(fWlNode, v)
		case fWlCanonicalName:
			w.CanonicalName = d.shared(fWlCanonicalName, v)
		case fWlCanonicalRevision:
			w.CanonicalRevision = d.shared(fWlCanonicalRevision, v)
		case fWlWorkloadType:
			w.WorkloadType = WorkloadType(n)
		case fWlWorkloadName:
			w.WorkloadName = d.shared(fWlWorkloadName, v)
		case fWlNativeTunnel:
			w.NativeTunnel = n != 0
		case fWlAppTunnel:
			w.ApplicationTunnel, err = decodeAppTunnel(v)
		case fWlServices:
			var sp WDSServicePorts
			if sp, err = d.serviceEntry(v); err == nil {
				if d != nil {
					d.svcs = append(d.svcs, sp)
				} else {
					w.Services = append(w.Services, sp)
				}
			}
		case fWlAuthzPolicies:
			w.AuthorizationPolicies = append(w.AuthorizationPolicies, d.shared(fWlAuthzPolicies, v))
		case fWlStatus:
			w.Status = WorkloadStatus(n)
		case fWlClusterID:
			w.ClusterID = d.shared(fWlClusterID, v)
		case fWlLocality:
			var l Locality
			if l, err = decodeLocality(v); err == nil {
				w.Locality = &l
			}
		case fWlNetworkMode:
			w.NetworkMode = networkMode(n)
		case fWlExtensions:
			var name string
			if name, err = decodeExtensionName(v); err == nil {
				w.Extensions = append(w.Extensions, name)
			}
		case fWlCapacity:
			w.CapacitySet = true
			w.Capacity, err = decodeUInt32Value(v)
		}
		return err
	})
	if err != nil {
		return err
	}
	if d != nil {
		w.Addresses, w.Services = d.strings.clone(d.addrs), d.services.clone(d.svcs)
	}
	// A map has no order on the wire: sort, so equal workloads compare equal.
	if !slices.IsSortedFunc(w.Services, cmpServicePorts) {
		slices.SortFunc(w.Services, cmpServicePorts)
	}
	return nil
}

func cmpServicePorts(a, b WDSServicePorts) int { return strings.Compare(a.Service, b.Service) }

func (d *wdsDecoder) service(b []byte) (WDSService, error) {
	var s WDSService
	err := fields(b, ldService, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		var err error
		switch num {
		case fSvcName:
			s.Name = string(v)
		case fSvcNamespace:
			s.Namespace = d.shared(slotServiceNamespace, v)
		case fSvcHostname:
			s.Hostname = string(v)
		case fSvcAddresses:
			var na WDSNetworkAddress
			if na, err = d.networkAddress(v); err == nil {
				s.Addresses = append(s.Addresses, na)
			}
		case fSvcPorts:
			var p WDSPort
			if p, err = decodePort(v); err == nil {
				s.Ports = append(s.Ports, p)
			}
		case fSvcSANs:
			s.SubjectAltNames = append(s.SubjectAltNames, string(v))
		case fSvcWaypoint:
			s.Waypoint, err = d.gateway(v)
		case fSvcLoadBalancing:
			s.LoadBalancing, err = decodeLoadBalancing(v)
		case fSvcIPFamilies:
			s.IPFamilies = enumName(ipFamilies, n)
		case fSvcExtensions:
			var name string
			if name, err = decodeExtensionName(v); err == nil {
				s.Extensions = append(s.Extensions, name)
			}
		case fSvcCanonical:
			s.Canonical = n != 0
		case fSvcIngressUseWaypoint:
			s.IngressUseWaypoint = n != 0
		case fSvcVisibility:
			s.Visibility = enumName(visibilities, n)
		}
		return err
	})
	slices.Sort(s.SubjectAltNames)
	return s, err
}

// gateway reads a GatewayAddress: oneof hostname (1) / address (2),
// hbone_mtls_port (3).
func (d *wdsDecoder) gateway(b []byte) (*WDSGateway, error) {
	g := &WDSGateway{}
	err := fields(b, ld12, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1:
			g.Network, g.Address = "", ""
			return fields(v, ld12, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
				switch num {
				case 1:
					g.Namespace = string(v)
				case 2:
					g.Hostname = string(v)
				}
				return nil
			})
		case 2:
			na, err := d.networkAddress(v)
			g.Network, g.Address, g.Namespace, g.Hostname = na.Network, na.Address, "", ""
			return err
		case 3:
			g.HBONEPort = uint32(n)
		}
		return nil
	})
	return g, err
}

// networkAddress reads network (1), address bytes (2) and the
// optional CIDR prefix length (3).
func (d *wdsDecoder) networkAddress(b []byte) (WDSNetworkAddress, error) {
	var na WDSNetworkAddress
	var raw []byte
	length, hasLength := uint64(0), false
	err := fields(b, ld12, func(num protowire.Number, _ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1:
			na.Network = d.shared(slotNetworkAddress, v)
		case 2:
			raw = v
		case 3:
			length, hasLength = n, true
		}
		return nil
	})
	if err != nil || len(raw) == 0 {
		return na, err // no address: a gateway given by hostname elsewhere
	}
	ip, ok := netip.AddrFromSlice(raw)
	if !ok {
		return na, fmt.Errorf("network address of %d bytes is not an IP", len(raw))
	}
	na.Address = ip.String()
	if hasLength && int(length) != ip.BitLen() {
		p, err := ip.Prefix(int(length))
		if err != nil {
			return na, fmt.Errorf("network address %s/%d: %w", ip, length, err)
		}
		na.Address = p.String()
	}
	return na, nil
}

// ip is ipString writing the text into a shared chunk of bytes (never
// changed once written) rather than one allocation per address.
func (d *wdsDecoder) ip(b []byte) (string, error) {
	if d == nil {
		return ipString(b)
	}
	ip, ok := netip.AddrFromSlice(b)
	if !ok {
		return "", fmt.Errorf("address of %d bytes is not an IP", len(b))
	}
	const maxText = len("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255%") + 16
	if cap(d.text)-len(d.text) < maxText+len(ip.Zone()) {
		d.text = make([]byte, 0, 4096)
	}
	start := len(d.text)
	d.text = ip.AppendTo(d.text)
	return unsafe.String(&d.text[start], len(d.text)-start), nil
}

func ipString(b []byte) (string, error) {
	ip, ok := netip.AddrFromSlice(b)
	if !ok {
		return "", fmt.Errorf("address of %d bytes is not an IP", len(b))
	}
	return ip.String(), nil
}

// serviceEntry reads one entry of the services map: key (1) and PortList
// (2) with repeated Port (1). The backends of one service share one
// decoded port list.
func (d *wdsDecoder) serviceEntry(b []byte) (WDSServicePorts, error) {
	var sp WDSServicePorts
	err := fields(b, ld12, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 1:
			sp.Service = d.shared(slotServiceKey, v)
		case 2:
			if d != nil {
				if d.lastPortsKey == string(v) {
					sp.Ports = d.lastPorts
					return nil
				}
				if ports, ok := d.ports[string(v)]; ok {
					sp.Ports, d.lastPortsKey, d.lastPorts = ports, string(v), ports
					return nil
				}
			}
			var ports []WDSPort
			err := fields(v, ld1, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
				if num != 1 {
					return nil
				}
				p, err := decodePort(v)
				ports = append(ports, p)
				return err
			})
			if err == nil && d != nil {
				if len(d.ports) >= wdsInternLimit {
					clear(d.ports)
				}
				d.ports[string(v)] = ports
				d.lastPortsKey, d.lastPorts = string(v), ports
			}
			sp.Ports = ports
			return err
		}
		return nil
	})
	return sp, err
}

func decodePort(b []byte) (WDSPort, error) {
	var p WDSPort
	err := fields(b, 0, func(num protowire.Number, _ protowire.Type, _ []byte, n uint64) error {
		switch num {
		case 1:
			p.ServicePort = uint32(n)
		case 2:
			p.TargetPort = uint32(n)
		case 3:
			p.AppProtocol = enumName(appProtocols, n)
		}
		return nil
	})
	return p, err
}

func decodeLocality(b []byte) (Locality, error) {
	var l Locality
	err := fields(b, ld123, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 1:
			l.Region = string(v)
		case 2:
			l.Zone = string(v)
		case 3:
			l.SubZone = string(v)
		}
		return nil
	})
	return l, err
}

// decodeUInt32Value reads a google.protobuf.UInt32Value (value = 1).
func decodeUInt32Value(b []byte) (uint32, error) {
	var out uint32
	err := fields(b, 0, func(num protowire.Number, _ protowire.Type, _ []byte, n uint64) error {
		if num == 1 {
			out = uint32(n)
		}
		return nil
	})
	return out, err
}

// decodeAppTunnel reads an ApplicationTunnel as "PROTOCOL" or "PROTOCOL:PORT".
func decodeAppTunnel(b []byte) (string, error) {
	proto, port := appTunnels[0], uint64(0)
	err := fields(b, 0, func(num protowire.Number, _ protowire.Type, _ []byte, n uint64) error {
		switch num {
		case 1:
			proto = enumName(appTunnels, n)
		case 2:
			port = n
		}
		return nil
	})
	if port != 0 {
		proto += ":" + strconv.FormatUint(port, 10)
	}
	return proto, err
}

// decodeExtensionName keeps an Extension's name (1); its Any config is opaque.
func decodeExtensionName(b []byte) (string, error) {
	var name string
	err := fields(b, ld1, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		if num == 1 {
			name = string(v)
		}
		return nil
	})
	return name, err
}

// decodeLoadBalancing renders a LoadBalancing as "MODE[REGION,ZONE] HEALTH".
func decodeLoadBalancing(b []byte) (string, error) {
	var prefs []string
	mode, health := "", ""
	err := fields(b, 0, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1:
			if typ == protowire.BytesType { // packed
				for len(v) > 0 {
					x, m := protowire.ConsumeVarint(v)
					if m < 0 {
						return protowire.ParseError(m)
					}
					prefs = append(prefs, enumName(lbScopes, x))
					v = v[m:]
				}
				return nil
			}
			prefs = append(prefs, enumName(lbScopes, n))
		case 2:
			mode = enumName(lbModes, n)
		case 3:
			health = enumName(lbHealth, n)
		}
		return nil
	})
	out := mode
	if len(prefs) > 0 {
		out += "[" + strings.Join(prefs, ",") + "]"
	}
	if health != "" {
		out = strings.TrimSpace(out + " " + health)
	}
	return out, err
}

var errWireType = errors.New("wrong wire type")

// lengthDelimited is a set of field numbers (below 64) that must be
// length-delimited: strings, bytes and messages.
type lengthDelimited uint64

func ld(nums ...protowire.Number) lengthDelimited {
	var m lengthDelimited
	for _, n := range nums {
		m |= 1 << n
	}
	return m
}

func (m lengthDelimited) has(n protowire.Number) bool { return n < 64 && m&(1<<n) != 0 }

// Field sets of the messages with string, bytes or message fields.
var (
	ldAddress  = ld(fAddressWorkload, fAddressService)
	ldWorkload = ld(fWlWaypoint, fWlNetworkGateway, fWlAppTunnel, fWlServices, fWlLocality, fWlExtensions, fWlCapacity,
		fWlUID, fWlName, fWlNamespace, fWlAddresses, fWlHostname, fWlNetwork, fWlTrustDomain, fWlServiceAccount,
		fWlNode, fWlCanonicalName, fWlCanonicalRevision, fWlWorkloadName, fWlAuthzPolicies, fWlClusterID)
	ldService = ld(fSvcName, fSvcNamespace, fSvcHostname, fSvcAddresses, fSvcPorts, fSvcSANs, fSvcWaypoint,
		fSvcLoadBalancing, fSvcExtensions)
	ld1   = ld(1)
	ld12  = ld(1, 2)
	ld123 = ld(1, 2, 3)
)

// fields walks the fields of one message (walk, wire.go) and calls f with
// each field's number, wire type, bytes (length-delimited) and value
// (varint or fixed). A field in ld must be length-delimited (a string,
// bytes or message); unknown fields of any type reach f, which ignores
// them, except groups, skipped whole. Packed repeated enums arrive as
// bytes for f to unpack.
func fields(b []byte, ld lengthDelimited, f func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	return walk(b, func(fl field, _ []byte) error {
		if ld.has(fl.num) && fl.typ != protowire.BytesType {
			return fmt.Errorf("field %d: %w %d", fl.num, errWireType, fl.typ)
		}
		if fl.typ == protowire.StartGroupType {
			return nil // a (deprecated) group of an unknown field, skipped whole
		}
		return f(fl.num, fl.typ, fl.v, fl.x)
	})
}
