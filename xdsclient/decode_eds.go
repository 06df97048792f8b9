package xdsclient

import (
	"errors"
	"unicode/utf8"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
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
//
// It never decides differently from proto.Unmarshal + decodeLoadAssignment
// (FuzzDecodeEDS holds it to that): what it accepts, they accept, with the
// same endpoints. So it checks what proto.Unmarshal checks in the fields it
// reads (UTF-8 strings, field numbers); follows proto's rules where a field
// repeats (a singular message seen twice is merged into the first, a map
// entry replaces an earlier one of the same key); hands over a resource
// whose oneofs it would read differently (a pipe or internal address, a
// named port, an endpoint_name, an LEDS locality, both forms of a
// locality's endpoint list, a metadata value that is not a string); and has
// proto decode each field it skips into the message type that field belongs
// to, so that a malformed field it does not read still fails the resource
// (see other). istiod's pushes hold only fields read here, plus a
// locality's load_balancing_weight.

var errFastPath = errors.New("fast EDS decode: unexpected encoding")

// skipCheck decodes skipped fields. The messages read here nest at most a
// dozen levels below the ClusterLoadAssignment, so with proto's recursion
// limit lowered by more than that, what passes here passes there too (and
// what fails here only for depth goes to proto.Unmarshal to decide).
var skipCheck = proto.UnmarshalOptions{RecursionLimit: protowire.DefaultRecursionLimit - 32}

// other checks a field the fast decoder does not read, given with its tag
// (raw), by decoding it into a new message of the type it belongs to (mk).
// Varint and fixed-size fields need no check: no value of theirs is
// invalid, and one of a wrong wire type is an unknown field, which proto
// keeps. Length-delimited ones may be strings (UTF-8), messages or packed
// lists; groups were checked for shape by next and no field here is one.
func other(f field, raw []byte, mk func() proto.Message) error {
	if f.typ != protowire.BytesType {
		return nil
	}
	if skipCheck.Unmarshal(raw, mk()) != nil {
		return errFastPath
	}
	return nil
}

// Constructors of the message types whose fields other checks.
var (
	newCLA         = func() proto.Message { return new(endpoint.ClusterLoadAssignment) }
	newLocalityLbs = func() proto.Message { return new(endpoint.LocalityLbEndpoints) }
	newLocality    = func() proto.Message { return new(core.Locality) }
	newLbList      = func() proto.Message { return new(endpoint.LocalityLbEndpoints_LbEndpointList) }
	newLbEndpoint  = func() proto.Message { return new(endpoint.LbEndpoint) }
	newEndpoint    = func() proto.Message { return new(endpoint.Endpoint) }
	newAddress     = func() proto.Message { return new(core.Address) }
	newSocketAddr  = func() proto.Message { return new(core.SocketAddress) }
	newMetadata    = func() proto.Message { return new(core.Metadata) }
	newUInt32      = func() proto.Message { return new(wrapperspb.UInt32Value) }
	newStruct      = func() proto.Message { return new(structpb.Struct) }
	newValue       = func() proto.Message { return new(structpb.Value) }
)

// text returns a string field's bytes if they are valid UTF-8, which
// proto.Unmarshal requires of every proto3 string.
func text(v []byte) ([]byte, error) {
	if !utf8.Valid(v) {
		return nil, errFastPath
	}
	return v, nil
}

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

// The loops below repeat one shape (next field; its bytes with the tag for
// other; switch): a small reader type shared by all of them cost ~40 % more
// CPU per decode (BenchmarkEDSParts/decode, 6.4 → 9.1 ms), the fields being
// read and written through memory instead of registers.

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
			v, err := text(f.v) // every occurrence, as proto checks each
			if err != nil {
				return la, err
			}
			la.Cluster = d.str(v)
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
		raw := rest[:len(rest)-len(r)]
		rest = r
		switch {
		case f.num == 1 && f.typ == protowire.BytesType: // cluster_name, read above
		case f.num == 2 && f.typ == protowire.BytesType:
			if err := d.locality(f.v, &la); err != nil {
				return la, err
			}
		default:
			if err := other(f, raw, newCLA); err != nil {
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
	// proto.Unmarshal refuses field numbers above the largest valid one,
	// which ConsumeTag lets through.
	if n < 0 || num > protowire.MaxValidNumber {
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

func (d *claDecoder) locality(b []byte, la *LoadAssignment) error {
	// Pass 1: locality (field 1), load_balancing_weight (field 3) and
	// priority (field 5) apply to every endpoint, but the last two are
	// encoded after them. The endpoints are
	// either lb_endpoints (2) or, in the deprecated form, one
	// load_balancer_endpoints list (7); the generic path reads the list
	// only when there are no lb_endpoints, and leds_cluster_locality_config
	// (8) replaces the list (same oneof): those mixes go to proto.
	var grp group
	var lbs, lists bool
	for rest := b; len(rest) > 0; {
		f, r, ok := next(rest)
		if !ok {
			return errFastPath
		}
		raw := rest[:len(rest)-len(r)]
		rest = r
		switch {
		case f.num == 1 && f.typ == protowire.BytesType: // locality (repeated: merged)
			for lb := f.v; len(lb) > 0; {
				g, lr, ok := next(lb)
				if !ok {
					return errFastPath
				}
				graw := lb[:len(lb)-len(lr)]
				lb = lr
				if g.num >= 1 && g.num <= 3 && g.typ == protowire.BytesType {
					v, err := text(g.v)
					if err != nil {
						return err
					}
					switch g.num {
					case 1:
						grp.loc.Region = d.str(v)
					case 2:
						grp.loc.Zone = d.str(v)
					case 3:
						grp.loc.SubZone = d.str(v)
					}
				} else if err := other(g, graw, newLocality); err != nil {
					return err
				}
			}
		case f.num == 3 && f.typ == protowire.BytesType: // load_balancing_weight (UInt32Value, repeated: merged)
			if err := uint32Value(f.v, &grp.weight); err != nil {
				return err
			}
		case f.num == 5 && f.typ == protowire.VarintType: // priority
			grp.prio = uint32(f.x)
		case f.num == 2 && f.typ == protowire.BytesType:
			lbs = true
		case f.num == 7 && f.typ == protowire.BytesType:
			lists = true
		case f.num == 8 && f.typ == protowire.BytesType:
			return errFastPath
		default:
			if err := other(f, raw, newLocalityLbs); err != nil {
				return err
			}
		}
	}
	if lbs && lists {
		return errFastPath
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
				g, lr, ok := next(lb)
				if !ok {
					return errFastPath
				}
				graw := lb[:len(lb)-len(lr)]
				lb = lr
				if g.num == 1 && g.typ == protowire.BytesType {
					if err := d.endpoint(g.v, grp, la); err != nil {
						return err
					}
				} else if err := other(g, graw, newLbList); err != nil {
					return err
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
// (Bytes that decoded once decode the same way again: the checks below
// depend on nothing outside them.)
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
				ep.Workload = parseWorkload(d.at(sp, sp.wlName))
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
	hasAddr, hasWeight := false, false
	for len(b) > 0 {
		f, r, ok := next(b)
		if !ok {
			return errFastPath
		}
		raw := b[:len(b)-len(r)]
		b = r
		switch {
		case f.num == 1 && f.typ == protowire.BytesType: // endpoint (repeated: merged)
			if err := d.endpointMsg(f.v, ep, &hasAddr); err != nil {
				return err
			}
		case f.num == 2 && f.typ == protowire.VarintType: // health_status
			ep.Health = core.HealthStatus(int32(f.x)).String()
		case f.num == 3 && f.typ == protowire.BytesType: // metadata (repeated: merged)
			if err := d.metadata(f.v, ep); err != nil {
				return err
			}
		case f.num == 4 && f.typ == protowire.BytesType: // load_balancing_weight (UInt32Value)
			if !hasWeight {
				ep.Weight = 0 // present: the wrapper's value, 0 if unset
				hasWeight = true
			}
			if err := uint32Value(f.v, &ep.Weight); err != nil {
				return err
			}
		case f.num == 5 && f.typ == protowire.BytesType: // endpoint_name: the same oneof as endpoint
			return errFastPath
		default:
			if err := other(f, raw, newLbEndpoint); err != nil {
				return err
			}
		}
	}
	if !hasAddr {
		return errFastPath // let the slow path name the problem
	}
	return nil
}

// endpointMsg reads an Endpoint: its address → socket_address, each
// occurrence merged into what earlier ones said, as proto does.
func (d *claDecoder) endpointMsg(b []byte, ep *Endpoint, hasAddr *bool) error {
	for len(b) > 0 {
		f, r, ok := next(b)
		if !ok {
			return errFastPath
		}
		raw := b[:len(b)-len(r)]
		b = r
		if f.num != 1 || f.typ != protowire.BytesType { // not address
			if err := other(f, raw, newEndpoint); err != nil {
				return err
			}
			continue
		}
		for a := f.v; len(a) > 0; {
			g, ar, ok := next(a)
			if !ok {
				return errFastPath
			}
			graw := a[:len(a)-len(ar)]
			a = ar
			switch {
			case g.num == 1 && g.typ == protowire.BytesType: // socket_address
				*hasAddr = true
				if err := d.socketAddress(g.v, ep); err != nil {
					return err
				}
			case (g.num == 2 || g.num == 3) && g.typ == protowire.BytesType: // pipe, envoy_internal_address
				return errFastPath
			default:
				if err := other(g, graw, newAddress); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (d *claDecoder) socketAddress(sa []byte, ep *Endpoint) error {
	for len(sa) > 0 {
		g, r, ok := next(sa)
		if !ok {
			return errFastPath
		}
		graw := sa[:len(sa)-len(r)]
		sa = r
		switch {
		case g.num == 2 && g.typ == protowire.BytesType: // address
			v, err := text(g.v)
			if err != nil {
				return err
			}
			ep.Address = d.str(v)
			d.cur.addr = d.ref(v)
		case g.num == 3 && g.typ == protowire.VarintType: // port_value
			ep.Port = uint32(g.x)
		case g.num == 4 && g.typ == protowire.BytesType: // named_port: the same oneof as port_value
			return errFastPath
		default:
			if err := other(g, graw, newSocketAddr); err != nil {
				return err
			}
		}
	}
	return nil
}

// metadata reads filter_metadata["envoy.transport_socket_match"]["tlsMode"]
// and filter_metadata["istio"]["workload"]. Both are maps: a later entry
// of a key replaces the earlier one whole, so a wanted entry first clears
// what an earlier one set.
func (d *claDecoder) metadata(b []byte, ep *Endpoint) error {
	for len(b) > 0 {
		f, r, ok := next(b)
		if !ok {
			return errFastPath
		}
		raw := b[:len(b)-len(r)]
		b = r
		if f.num != 1 || f.typ != protowire.BytesType { // not a filter_metadata entry
			if err := other(f, raw, newMetadata); err != nil {
				return err
			}
			continue
		}
		key, st, err := mapEntry(f.v)
		if err != nil {
			return err
		}
		var want string
		switch string(key) { // compared, not kept: no allocation
		case "envoy.transport_socket_match":
			want = "tlsMode"
			ep.TLSMode, d.cur.tls = "", strRef{}
		case "istio":
			want = "workload"
			ep.Workload, d.cur.wlName = Workload{}, strRef{}
		default:
			if !utf8.Valid(key) || skipCheck.Unmarshal(st, newStruct()) != nil {
				return errFastPath
			}
			continue
		}
		for len(st) > 0 {
			g, sr, ok := next(st)
			if !ok {
				return errFastPath
			}
			st = sr
			if g.num != 1 || g.typ != protowire.BytesType { // not a Struct.fields entry: unknown to Struct
				continue
			}
			fk, val, err := mapEntry(g.v)
			if err != nil {
				return err
			}
			if string(fk) != want {
				if !utf8.Valid(fk) || skipCheck.Unmarshal(val, newValue()) != nil {
					return errFastPath
				}
				continue
			}
			s, err := stringValue(val)
			if err != nil {
				return err
			}
			if want == "tlsMode" {
				ep.TLSMode = d.str(s)
				d.cur.tls = d.ref(s)
			} else {
				ep.Workload = parseWorkload(d.str(s))
				d.cur.wlName = d.ref(s)
			}
		}
	}
	return nil
}

// stringValue reads a Value that holds a string (or nothing: ""). Any
// other field would be another kind of the same oneof, or unknown: that
// goes to proto.
func stringValue(b []byte) ([]byte, error) {
	var s []byte
	for len(b) > 0 {
		f, r, ok := next(b)
		if !ok || f.num != 3 || f.typ != protowire.BytesType {
			return nil, errFastPath
		}
		b = r
		s = f.v
	}
	return text(s)
}

// mapEntry splits a map entry into key and value as proto does: a key or
// value of the wrong wire type is an unknown field (ignored), every key
// must be UTF-8 and the last one counts; a repeated value would be merged,
// which goes to proto. The last key is left for the caller to check: the
// ones it looks for are known to be valid.
// uint32Value reads a google.protobuf.UInt32Value into v, merging into
// what an earlier occurrence said as proto does (v keeps its value when
// this one leaves the field unset).
func uint32Value(b []byte, v *uint32) error {
	for len(b) > 0 {
		g, r, ok := next(b)
		if !ok {
			return errFastPath
		}
		raw := b[:len(b)-len(r)]
		b = r
		if g.num == 1 && g.typ == protowire.VarintType {
			*v = uint32(g.x)
		} else if err := other(g, raw, newUInt32); err != nil {
			return err
		}
	}
	return nil
}

func mapEntry(b []byte) (key, val []byte, err error) {
	hasKey, hasVal := false, false
	for len(b) > 0 {
		f, r, ok := next(b)
		if !ok {
			return nil, nil, errFastPath
		}
		b = r
		if f.typ != protowire.BytesType {
			continue
		}
		switch f.num {
		case 1:
			if hasKey && !utf8.Valid(key) {
				return nil, nil, errFastPath
			}
			key, hasKey = f.v, true
		case 2:
			if hasVal {
				return nil, nil, errFastPath
			}
			val, hasVal = f.v, true
		}
	}
	return key, val, nil
}
