package xdsclient

import (
	"errors"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/encoding/protowire"
)

// EDS pushes are the hot path: a mesh service can have thousands of
// endpoints and istiod re-sends the whole ClusterLoadAssignment on every
// change. Unmarshalling it into the generated protos costs ~36 allocations
// per endpoint (each metadata Struct is a map of Values), ~50 ms for 10,000
// endpoints. decodeCLAFast walks the wire format once and reads only the
// fields meshscope shows; every string is a substring of one copy of the
// buffer, so an endpoint costs no allocation of its own.
//
// Field numbers are from envoy/config/endpoint/v3 and core/v3. On anything
// it does not understand it returns errFastPath and the caller decodes with
// proto.Unmarshal, which gives the precise error for a NACK.

var errFastPath = errors.New("fast EDS decode: unexpected encoding")

// claDecoder reads one buffer; str turns a sub-slice of it into a substring
// of the single string copy (the offset of a sub-slice is the difference of
// capacities, since every sub-slice here is made with b[i:j]).
type claDecoder struct {
	orig []byte
	buf  string
	prev *LoadAssignment // the cluster's previous state, if any
	cur  epSpan          // span of the endpoint being decoded
}

func (d *claDecoder) off(v []byte) int { return cap(d.orig) - cap(v) }

func (d *claDecoder) str(v []byte) string {
	off := d.off(v)
	return d.buf[off : off+len(v)]
}

// epSpan locates one endpoint in its LoadAssignment's raw buffer: its
// LbEndpoint bytes, and where in them the strings the Endpoint holds are.
// With it the next push reuses an endpoint whose bytes did not change
// (a string compare instead of a decode), pointing its strings into the new
// buffer so no old buffer stays pinned. How often bytes stay the same
// depends on the server: Go's proto.Marshal writes map entries (the
// endpoint's filter_metadata) in random order, so a re-marshalled but
// unchanged endpoint matches only some of the time.
type epSpan struct {
	start, end        uint32
	addr, tls, wlName strRef
}

// strRef is a string's offset (relative to its LbEndpoint) and length.
type strRef struct{ off, n uint32 }

func (d *claDecoder) ref(v []byte) strRef {
	return strRef{uint32(d.off(v)) - d.cur.start, uint32(len(v))}
}

func (d *claDecoder) at(sp epSpan, r strRef) string {
	return d.buf[sp.start+r.off : sp.start+r.off+r.n]
}

// decodeCLAFast decodes one ClusterLoadAssignment; prev, when given, looks
// up the cluster's previous state for endpoint reuse.
func decodeCLAFast(b []byte, prev func(cluster string) *LoadAssignment) (LoadAssignment, error) {
	if len(b) >= 1<<32 {
		return LoadAssignment{}, errFastPath
	}
	d := &claDecoder{orig: b[:len(b):len(b)], buf: string(b)}
	var la LoadAssignment
	// First pass: the cluster name and the endpoint count, so the slice
	// is allocated once.
	n := 0
	for rest := d.orig; len(rest) > 0; {
		var f field
		var ok bool
		if f, rest, ok = next(rest); !ok {
			return la, errFastPath
		}
		switch {
		case f.num == 1 && f.typ == protowire.BytesType:
			la.Cluster = d.str(f.v)
		case f.num == 2 && f.typ == protowire.BytesType:
			for lr := f.v; len(lr) > 0; {
				var g field
				if g, lr, ok = next(lr); !ok {
					return la, errFastPath
				}
				if g.num == 2 {
					n++
				}
			}
		}
	}
	la.Endpoints = make([]Endpoint, 0, n)
	la.raw, la.spans = d.buf, make([]epSpan, 0, n)
	if prev != nil && la.Cluster != "" {
		if p := prev(la.Cluster); p != nil && len(p.spans) == len(p.Endpoints) {
			d.prev = p
		}
	}
	for rest := d.orig; len(rest) > 0; {
		f, r, ok := next(rest)
		if !ok {
			return la, errFastPath
		}
		rest = r
		if f.num == 2 && f.typ == protowire.BytesType {
			if err := d.locality(f.v, &la); err != nil {
				return la, err
			}
		}
	}
	return la, nil
}

// field is one decoded field: v is the payload of a length-delimited
// field, x the value of a varint.
type field struct {
	num protowire.Number
	typ protowire.Type
	v   []byte
	x   uint64
}

// next reads the field at the start of b and returns the rest of b. Tags
// and lengths below 16384 (one or two bytes: nearly every field of an EDS
// resource) are decoded inline; anything else goes through protowire.
func next(b []byte) (f field, rest []byte, ok bool) {
	if len(b) >= 2 && b[0] < 0x80 {
		f.num, f.typ = protowire.Number(b[0]>>3), protowire.Type(b[0]&7)
		switch f.typ {
		case protowire.BytesType:
			var l, m int
			if c := b[1]; c < 0x80 {
				l, m = int(c), 2
			} else if len(b) >= 3 && b[2] < 0x80 {
				l, m = int(c&0x7f)|int(b[2])<<7, 3
			} else {
				break
			}
			if f.num == 0 || len(b)-m < l {
				return f, nil, false
			}
			f.v = b[m : m+l]
			return f, b[m+l:], true
		case protowire.VarintType:
			if c := b[1]; c < 0x80 && f.num != 0 {
				f.x = uint64(c)
				return f, b[2:], true
			}
		}
	}
	return nextSlow(b)
}

func nextSlow(b []byte) (f field, rest []byte, ok bool) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return f, nil, false
	}
	f.num, f.typ = num, typ
	b = b[n:]
	switch typ {
	case protowire.BytesType:
		l, m := protowire.ConsumeVarint(b)
		if m < 0 || uint64(len(b)-m) < l {
			return f, nil, false
		}
		f.v = b[m : m+int(l)]
		return f, b[m+int(l):], true
	case protowire.VarintType:
		x, m := protowire.ConsumeVarint(b)
		if m < 0 {
			return f, nil, false
		}
		f.x = x
		return f, b[m:], true
	}
	m := protowire.ConsumeFieldValue(num, typ, b)
	if m < 0 {
		return f, nil, false
	}
	return f, b[m:], true
}

// sub returns the payload of the first length-delimited field num in b
// (nil if absent), for messages read for a single field.
func sub(b []byte, num protowire.Number) ([]byte, bool) {
	var found []byte
	for len(b) > 0 {
		f, r, ok := next(b)
		if !ok {
			return nil, false
		}
		b = r
		if f.num == num && f.typ == protowire.BytesType {
			found = f.v // last one wins, as in proto3
		}
	}
	return found, true
}

func (d *claDecoder) locality(b []byte, la *LoadAssignment) error {
	// Pass 1: locality (field 1), load_balancing_weight (field 3) and
	// priority (field 5) apply to every endpoint, but the last two are
	// encoded after them.
	var grp group
	for rest := b; len(rest) > 0; {
		f, r, ok := next(rest)
		if !ok {
			return errFastPath
		}
		rest = r
		switch {
		case f.num == 1 && f.typ == protowire.BytesType: // locality
			for lb := f.v; len(lb) > 0; {
				var g field
				if g, lb, ok = next(lb); !ok {
					return errFastPath
				}
				switch g.num {
				case 1:
					grp.loc.Region = d.str(g.v)
				case 2:
					grp.loc.Zone = d.str(g.v)
				case 3:
					grp.loc.SubZone = d.str(g.v)
				}
			}
		case f.num == 3 && f.typ == protowire.BytesType: // load_balancing_weight (UInt32Value)
			if grp.weight, ok = uint32Value(f.v); !ok {
				return errFastPath
			}
		case f.num == 5 && f.typ == protowire.VarintType: // priority
			grp.prio = uint32(f.x)
		}
	}
	// Pass 2: the endpoints, in order.
	for rest := b; len(rest) > 0; {
		f, r, ok := next(rest)
		if !ok {
			return errFastPath
		}
		rest = r
		switch {
		case f.num == 2 && f.typ == protowire.BytesType: // lb_endpoints
			if err := d.endpoint(f.v, grp, la); err != nil {
				return err
			}
		case f.num == 7 && f.typ == protowire.BytesType: // load_balancer_endpoints (LbEndpointList)
			for lb := f.v; len(lb) > 0; {
				var g field
				if g, lb, ok = next(lb); !ok {
					return errFastPath
				}
				if g.num == 1 && g.typ == protowire.BytesType {
					if err := d.endpoint(g.v, grp, la); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// group is what a LocalityLbEndpoints gives each of its endpoints.
type group struct {
	loc          Locality
	weight, prio uint32
}

// endpoint appends the endpoint encoded in lb: reused from the previous
// state when its bytes are unchanged at the same position, else decoded.
func (d *claDecoder) endpoint(lb []byte, grp group, la *LoadAssignment) error {
	i := len(la.Endpoints)
	sp := epSpan{start: uint32(d.off(lb)), end: uint32(d.off(lb) + len(lb))}
	if p := d.prev; p != nil && i < len(p.spans) {
		if ps := p.spans[i]; ps.end-ps.start == sp.end-sp.start && p.raw[ps.start:ps.end] == d.buf[sp.start:sp.end] {
			ep := p.Endpoints[i]
			ep.Locality, ep.LocalityWeight, ep.Priority = grp.loc, grp.weight, grp.prio
			sp.addr, sp.tls, sp.wlName = ps.addr, ps.tls, ps.wlName
			ep.Address, ep.TLSMode = d.at(sp, sp.addr), d.at(sp, sp.tls)
			if sp.wlName.n > 0 {
				ep.Workload = ParseWorkload(d.at(sp, sp.wlName))
			}
			la.Endpoints = append(la.Endpoints, ep)
			la.spans = append(la.spans, sp)
			return nil
		}
	}
	la.Endpoints = append(la.Endpoints, Endpoint{Locality: grp.loc, LocalityWeight: grp.weight, Priority: grp.prio, Weight: 1, Health: healthUnknown})
	d.cur = sp
	if err := d.lbEndpoint(lb, &la.Endpoints[i]); err != nil {
		return err
	}
	la.spans = append(la.spans, d.cur)
	return nil
}

var healthUnknown = core.HealthStatus_UNKNOWN.String()

func (d *claDecoder) lbEndpoint(b []byte, ep *Endpoint) error {
	hasAddr := false
	for len(b) > 0 {
		f, r, ok := next(b)
		if !ok {
			return errFastPath
		}
		b = r
		switch {
		case f.num == 1 && f.typ == protowire.BytesType: // endpoint → address → socket_address
			addr, ok := sub(f.v, 1)
			if !ok {
				return errFastPath
			}
			sa, ok := sub(addr, 1)
			if !ok {
				return errFastPath
			}
			if sa == nil {
				continue
			}
			hasAddr = true
			for len(sa) > 0 {
				var g field
				if g, sa, ok = next(sa); !ok {
					return errFastPath
				}
				switch {
				case g.num == 2 && g.typ == protowire.BytesType:
					ep.Address = d.str(g.v)
					d.cur.addr = d.ref(g.v)
				case g.num == 3 && g.typ == protowire.VarintType:
					ep.Port = uint32(g.x)
				}
			}
		case f.num == 2 && f.typ == protowire.VarintType: // health_status
			ep.Health = core.HealthStatus(int32(f.x)).String()
		case f.num == 3 && f.typ == protowire.BytesType: // metadata
			if err := d.metadata(f.v, ep); err != nil {
				return err
			}
		case f.num == 4 && f.typ == protowire.BytesType: // load_balancing_weight (UInt32Value)
			if ep.Weight, ok = uint32Value(f.v); !ok { // present: its value, 0 if unset
				return errFastPath
			}
		}
	}
	if !hasAddr {
		return errFastPath // let the slow path name the problem
	}
	return nil
}

// metadata reads filter_metadata["envoy.transport_socket_match"]["tlsMode"]
// and filter_metadata["istio"]["workload"].
func (d *claDecoder) metadata(b []byte, ep *Endpoint) error {
	for len(b) > 0 {
		f, r, ok := next(b)
		if !ok {
			return errFastPath
		}
		b = r
		if f.num != 1 || f.typ != protowire.BytesType { // filter_metadata entry
			continue
		}
		key, st, ok := mapEntry(f.v)
		if !ok {
			return errFastPath
		}
		var want string
		switch string(key) { // compared, not kept: no allocation
		case "envoy.transport_socket_match":
			want = "tlsMode"
		case "istio":
			want = "workload"
		default:
			continue
		}
		for len(st) > 0 {
			var g field
			if g, st, ok = next(st); !ok {
				return errFastPath
			}
			if g.num != 1 || g.typ != protowire.BytesType { // Struct.fields entry
				continue
			}
			fk, val, ok := mapEntry(g.v)
			if !ok {
				return errFastPath
			}
			if string(fk) != want {
				continue
			}
			s, ok := sub(val, 3) // Value.string_value
			if !ok {
				return errFastPath
			}
			if want == "tlsMode" {
				ep.TLSMode = d.str(s)
				d.cur.tls = d.ref(s)
			} else {
				ep.Workload = ParseWorkload(d.str(s))
				d.cur.wlName = d.ref(s)
			}
		}
	}
	return nil
}

// uint32Value reads a google.protobuf.UInt32Value (0 when its value is
// unset).
func uint32Value(b []byte) (uint32, bool) {
	var v uint32
	for len(b) > 0 {
		var g field
		var ok bool
		if g, b, ok = next(b); !ok {
			return 0, false
		}
		if g.num == 1 && g.typ == protowire.VarintType {
			v = uint32(g.x)
		}
	}
	return v, true
}

func mapEntry(b []byte) (key, val []byte, ok bool) {
	for len(b) > 0 {
		var f field
		if f, b, ok = next(b); !ok {
			return nil, nil, false
		}
		switch f.num {
		case 1:
			key = f.v
		case 2:
			val = f.v
		}
	}
	return key, val, true
}
