package xdsclient

import (
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"google.golang.org/protobuf/types/known/anypb"
)

// Several viewpoints often receive the very same ClusterLoadAssignment:
// two control planes of a multi-primary mesh marshal deterministically
// (istiod's protoconv.MessageToAny), so a proxy of one network gets the
// same bytes from either, and a gateway rewrite is the same for every
// proxy outside the network. Without sharing, every stream decodes and
// keeps its own copy of every endpoint. A Shared table, handed to several
// clients (Options.Shared), keeps one decoded LoadAssignment per distinct
// resource: a client receiving bytes another already decoded takes the
// decoded value (no decode at all) instead of a copy.
//
// The table holds its entries weakly. Every LoadAssignment handed out
// points at its entry, so an entry lives exactly as long as some client
// (or reader) still holds the LoadAssignment — the garbage collector does
// the reference counting — and then leaves the table.

// Shared is a table of decoded EDS resources shared by the clients given
// it, keyed by the resource's bytes. It is safe for concurrent use; the
// zero value is not usable (NewShared).
type Shared struct {
	seed maphash.Seed

	mu      sync.Mutex
	entries map[uint64][]weak.Pointer[sharedLA]

	hits, misses atomic.Int64
}

// sharedLA is one table entry: the resource's bytes and its decoded view.
type sharedLA struct {
	key string
	la  LoadAssignment
}

// NewShared returns an empty table.
func NewShared() *Shared {
	return &Shared{seed: maphash.MakeSeed(), entries: map[uint64][]weak.Pointer[sharedLA]{}}
}

// SharedStats counts what a table saved: Hits are resources a client took
// from the table instead of decoding them, Misses those decoded (and
// added), Live the distinct resources held now.
type SharedStats struct {
	Hits, Misses int64
	Live         int
}

// Stats reports the table's counters.
func (s *Shared) Stats() SharedStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := 0
	for _, ws := range s.entries {
		for _, w := range ws {
			if w.Value() != nil {
				live++
			}
		}
	}
	return SharedStats{Hits: s.hits.Load(), Misses: s.misses.Load(), Live: live}
}

// lookup is the entry holding exactly b, if any. Caller holds mu.
func (s *Shared) lookup(h uint64, b []byte) *sharedLA {
	for _, w := range s.entries[h] {
		if e := w.Value(); e != nil && e.key == string(b) {
			return e
		}
	}
	return nil
}

// loadAssignment returns the shared view of the EDS resource b, decoding
// it with decode only when no client holds it yet.
func (s *Shared) loadAssignment(b []byte, decode func() (decoded, error)) (decoded, error) {
	h := maphash.Bytes(s.seed, b)
	s.mu.Lock()
	e := s.lookup(h, b)
	s.mu.Unlock()
	if e != nil {
		s.hits.Add(1)
		return decoded{e.la.Cluster, e.view()}, nil
	}
	d, err := decode()
	if err != nil {
		return d, err
	}
	la, ok := d.view.(LoadAssignment)
	if !ok {
		return d, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.lookup(h, b); e != nil {
		// Another client decoded the same bytes meanwhile: keep one.
		s.hits.Add(1)
		return decoded{e.la.Cluster, e.view()}, nil
	}
	s.misses.Add(1)
	e = &sharedLA{la: la}
	// The fast decoder's view keeps the resource's bytes as raw: the key
	// costs no second copy.
	e.key = la.raw
	if e.key != string(b) {
		e.key = string(b)
	}
	s.entries[h] = append(s.entries[h], weak.Make(e))
	runtime.AddCleanup(e, s.forget, h)
	return decoded{la.Cluster, e.view()}, nil
}

// forget drops the entries of hash h that were collected.
func (s *Shared) forget(h uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := s.entries[h][:0]
	for _, w := range s.entries[h] {
		if w.Value() != nil {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		delete(s.entries, h)
		return
	}
	s.entries[h] = ws
}

// view is the entry's LoadAssignment, pointing back at the entry so that
// whoever holds it keeps the entry alive.
func (e *sharedLA) view() LoadAssignment {
	la := e.la
	la.shared = e
	return la
}

// decode decodes one resource of a response, through the shared table for
// EDS when the client has one.
func (c *Client) decode(t Type, a *anypb.Any, prevEDS func(string) *LoadAssignment) (decoded, error) {
	if t != EDS || c.opts.Shared == nil || a.GetTypeUrl() != endpointTypeURL {
		return decodeResource(t, a, prevEDS)
	}
	return c.opts.Shared.loadAssignment(a.GetValue(), func() (decoded, error) { return decodeResource(t, a, prevEDS) })
}
