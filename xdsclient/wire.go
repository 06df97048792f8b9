package xdsclient

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The protobuf field walker of the two decoders that read the wire format
// themselves: the fast EDS decoder (decode_eds.go) and the workload API's
// (wds_decode.go). walk reads one message's fields in order with
// protowire's rules, refusing what proto.Unmarshal refuses of a field's
// framing (a truncated field, a field number of 0 or above the largest
// valid one, a reserved wire type, a stray end of group); what a field's
// bytes mean is the caller's.

// field is one field of a message: v is the payload of a length-delimited
// field, x the value of a varint or fixed-size one (a group is consumed
// whole and has neither).
type field struct {
	num protowire.Number
	typ protowire.Type
	v   []byte
	x   uint64
}

// walk calls fn with each field of the message b and the field's bytes,
// its tag included (raw), in order. It stops at fn's first error and
// returns it; a field it cannot read ends the walk with an error that
// names it. Tags and lengths below 16384 (one or two bytes: nearly every
// field of an xDS resource) are decoded here, inline; anything else goes
// through protowire (slowField).
func walk(b []byte, fn func(f field, raw []byte) error) error {
	for len(b) > 0 {
		var f field
		n := 0 // the field's length, tag included; 0: not read yet
		if len(b) >= 2 && b[0] < 0x80 {
			f.num, f.typ = protowire.Number(b[0]>>3), protowire.Type(b[0]&7)
			switch f.typ {
			case protowire.BytesType:
				l, m := 0, 0
				if c := b[1]; c < 0x80 {
					l, m = int(c), 2
				} else if len(b) >= 3 && b[2] < 0x80 {
					l, m = int(c&0x7f)|int(b[2])<<7, 3
				}
				if m > 0 {
					if f.num == 0 || len(b)-m < l {
						return wireError(b)
					}
					f.v, n = b[m:m+l], m+l
				}
			case protowire.VarintType:
				if c := b[1]; c < 0x80 && f.num != 0 {
					f.x, n = uint64(c), 2
				}
			}
		}
		if n == 0 {
			var ok bool
			if f, n, ok = slowField(b); !ok {
				return wireError(b)
			}
		}
		if err := fn(f, b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// slowField reads the field at the start of b with protowire, and its
// length, tag included.
func slowField(b []byte) (f field, n int, ok bool) {
	num, typ, t := protowire.ConsumeTag(b)
	// proto.Unmarshal refuses field numbers above the largest valid one,
	// which ConsumeTag lets through.
	if t < 0 || num > protowire.MaxValidNumber {
		return f, 0, false
	}
	f.num, f.typ = num, typ
	v := b[t:]
	var m int
	switch typ {
	case protowire.BytesType:
		var l uint64
		l, m = protowire.ConsumeVarint(v)
		if m < 0 || uint64(len(v)-m) < l {
			return f, 0, false
		}
		f.v = v[m : m+int(l)]
		return f, t + m + int(l), true
	case protowire.VarintType:
		f.x, m = protowire.ConsumeVarint(v)
	case protowire.Fixed32Type:
		var x uint32
		x, m = protowire.ConsumeFixed32(v)
		f.x = uint64(x)
	case protowire.Fixed64Type:
		f.x, m = protowire.ConsumeFixed64(v)
	default:
		m = protowire.ConsumeFieldValue(num, typ, v)
	}
	if m < 0 {
		return f, 0, false
	}
	return f, t + m, true
}

// wireError says what is wrong with the field at the start of b, which
// walk refused: its tag, or its value (named by its field number).
func wireError(b []byte) error {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return protowire.ParseError(n)
	}
	if num > protowire.MaxValidNumber {
		return fmt.Errorf("field %d: invalid field number", num)
	}
	if m := protowire.ConsumeFieldValue(num, typ, b[n:]); m < 0 {
		return fmt.Errorf("field %d: %w", num, protowire.ParseError(m))
	}
	return fmt.Errorf("field %d: malformed", num)
}
