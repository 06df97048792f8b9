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
// endpoints. decodeCLAFast walks the wire format once (walk, wire.go: the
// field walker it shares with the workload API's decoder) and reads only
// the fields meshscope shows; every string is a substring of one copy of
// the buffer, so an endpoint costs no allocation of its own.
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
// lists; groups were checked for shape by walk and no field here is one.
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

// decodeCLAFast decodes one ClusterLoadAssignment; prev, when given, looks
// up the cluster's previous state for endpoint reuse. Every message is
// read with walk (wire.go); any error, a field walk cannot read or one
// this decoder does not understand, hands the resource to proto.
func decodeCLAFast(b []byte, prev func(cluster string) *LoadAssignment) (LoadAssignment, error) {
	if len(b) >= 1<<32 {
		return LoadAssignment{}, errFastPath
	}
	d := &claDecoder{orig: b[:len(b):len(b)], buf: string(b)}
	var la LoadAssignment
	if err := d.cla(&la, prev); err != nil {
		return la, errFastPath
	}
	return la, nil
}

func (d *claDecoder) cla(la *LoadAssignment, prev func(cluster string) *LoadAssignment) error {
	// First pass: the cluster name and the endpoint count, so the slice
	// is allocated once.
	n := 0
	err := walk(d.orig, func(f field, _ []byte) error {
		switch {
		case f.num == 1 && f.typ == protowire.BytesType:
			v, err := text(f.v) // every occurrence, as proto checks each
			if err != nil {
				return err
			}
			la.Cluster = d.str(v)
		case f.num == 2 && f.typ == protowire.BytesType:
			return walk(f.v, func(g field, _ []byte) error {
				if g.num == 2 {
					n++
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	la.Endpoints = make([]Endpoint, 0, n)
	la.raw, la.spans = d.buf, make([]epSpan, 0, n)
	if prev != nil && la.Cluster != "" {
		if p := prev(la.Cluster); p != nil && len(p.spans) == len(p.Endpoints) {
			d.prev = p
		}
	}
	return walk(d.orig, func(f field, raw []byte) error {
		switch {
		case f.num == 1 && f.typ == protowire.BytesType: // cluster_name, read above
		case f.num == 2 && f.typ == protowire.BytesType:
			return d.locality(f.v, la)
		default:
			return other(f, raw, newCLA)
		}
		return nil
	})
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
	err := walk(b, func(f field, raw []byte) error {
		switch {
		case f.num == 1 && f.typ == protowire.BytesType: // locality (repeated: merged)
			return walk(f.v, func(g field, graw []byte) error {
				if g.num < 1 || g.num > 3 || g.typ != protowire.BytesType {
					return other(g, graw, newLocality)
				}
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
				return nil
			})
		case f.num == 3 && f.typ == protowire.BytesType: // load_balancing_weight (UInt32Value, repeated: merged)
			return uint32Value(f.v, &grp.weight)
		case f.num == 5 && f.typ == protowire.VarintType: // priority
			grp.prio = uint32(f.x)
		case f.num == 2 && f.typ == protowire.BytesType:
			lbs = true
		case f.num == 7 && f.typ == protowire.BytesType:
			lists = true
		case f.num == 8 && f.typ == protowire.BytesType:
			return errFastPath
		default:
			return other(f, raw, newLocalityLbs)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if lbs && lists {
		return errFastPath
	}
	// Pass 2: the endpoints, in order.
	return walk(b, func(f field, _ []byte) error {
		switch {
		case f.num == 2 && f.typ == protowire.BytesType: // lb_endpoints
			return d.endpoint(f.v, grp, la)
		case f.num == 7 && f.typ == protowire.BytesType: // load_balancer_endpoints (LbEndpointList)
			return walk(f.v, func(g field, graw []byte) error {
				if g.num == 1 && g.typ == protowire.BytesType {
					return d.endpoint(g.v, grp, la)
				}
				return other(g, graw, newLbList)
			})
		}
		return nil
	})
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
	err := walk(b, func(f field, raw []byte) error {
		switch {
		case f.num == 1 && f.typ == protowire.BytesType: // endpoint (repeated: merged)
			return d.endpointMsg(f.v, ep, &hasAddr)
		case f.num == 2 && f.typ == protowire.VarintType: // health_status
			ep.Health = core.HealthStatus(int32(f.x)).String()
		case f.num == 3 && f.typ == protowire.BytesType: // metadata (repeated: merged)
			return d.metadata(f.v, ep)
		case f.num == 4 && f.typ == protowire.BytesType: // load_balancing_weight (UInt32Value)
			if !hasWeight {
				ep.Weight = 0 // present: the wrapper's value, 0 if unset
				hasWeight = true
			}
			return uint32Value(f.v, &ep.Weight)
		case f.num == 5 && f.typ == protowire.BytesType: // endpoint_name: the same oneof as endpoint
			return errFastPath
		default:
			return other(f, raw, newLbEndpoint)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !hasAddr {
		return errFastPath // let the slow path name the problem
	}
	return nil
}

// endpointMsg reads an Endpoint: its address → socket_address, each
// occurrence merged into what earlier ones said, as proto does.
func (d *claDecoder) endpointMsg(b []byte, ep *Endpoint, hasAddr *bool) error {
	return walk(b, func(f field, raw []byte) error {
		if f.num != 1 || f.typ != protowire.BytesType { // not address
			return other(f, raw, newEndpoint)
		}
		return walk(f.v, func(g field, graw []byte) error {
			switch {
			case g.num == 1 && g.typ == protowire.BytesType: // socket_address
				*hasAddr = true
				return d.socketAddress(g.v, ep)
			case (g.num == 2 || g.num == 3) && g.typ == protowire.BytesType: // pipe, envoy_internal_address
				return errFastPath
			default:
				return other(g, graw, newAddress)
			}
		})
	})
}

func (d *claDecoder) socketAddress(sa []byte, ep *Endpoint) error {
	return walk(sa, func(g field, graw []byte) error {
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
			return other(g, graw, newSocketAddr)
		}
		return nil
	})
}

// metadata reads filter_metadata["envoy.transport_socket_match"]["tlsMode"]
// and filter_metadata["istio"]["workload"]. Both are maps: a later entry
// of a key replaces the earlier one whole, so a wanted entry first clears
// what an earlier one set.
func (d *claDecoder) metadata(b []byte, ep *Endpoint) error {
	return walk(b, func(f field, raw []byte) error {
		if f.num != 1 || f.typ != protowire.BytesType { // not a filter_metadata entry
			return other(f, raw, newMetadata)
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
			return nil
		}
		return walk(st, func(g field, _ []byte) error {
			if g.num != 1 || g.typ != protowire.BytesType { // not a Struct.fields entry: unknown to Struct
				return nil
			}
			fk, val, err := mapEntry(g.v)
			if err != nil {
				return err
			}
			if string(fk) != want {
				if !utf8.Valid(fk) || skipCheck.Unmarshal(val, newValue()) != nil {
					return errFastPath
				}
				return nil
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
			return nil
		})
	})
}

// stringValue reads a Value that holds a string (or nothing: ""). Any
// other field would be another kind of the same oneof, or unknown: that
// goes to proto.
func stringValue(b []byte) ([]byte, error) {
	var s []byte
	err := walk(b, func(f field, _ []byte) error {
		if f.num != 3 || f.typ != protowire.BytesType {
			return errFastPath
		}
		s = f.v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return text(s)
}

// uint32Value reads a google.protobuf.UInt32Value into v, merging into
// what an earlier occurrence said as proto does (v keeps its value when
// this one leaves the field unset).
func uint32Value(b []byte, v *uint32) error {
	return walk(b, func(g field, raw []byte) error {
		if g.num == 1 && g.typ == protowire.VarintType {
			*v = uint32(g.x)
			return nil
		}
		return other(g, raw, newUInt32)
	})
}

// mapEntry splits a map entry into key and value as proto does: a key or
// value of the wrong wire type is an unknown field (ignored), every key
// must be UTF-8 and the last one counts; a repeated value would be merged,
// which goes to proto. The last key is left for the caller to check: the
// ones it looks for are known to be valid.
func mapEntry(b []byte) (key, val []byte, err error) {
	hasKey, hasVal := false, false
	err = walk(b, func(f field, _ []byte) error {
		if f.typ != protowire.BytesType {
			return nil
		}
		switch f.num {
		case 1:
			if hasKey && !utf8.Valid(key) {
				return errFastPath
			}
			key, hasKey = f.v, true
		case 2:
			if hasVal {
				return errFastPath
			}
			val, hasVal = f.v, true
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return key, val, nil
}
