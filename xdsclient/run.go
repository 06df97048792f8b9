package xdsclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"
)

// Run keeps a stream to the control plane open until ctx ends: it connects,
// subscribes, applies and ACKs responses, and on any failure marks the view
// stale, waits a jittered exponential backoff and starts over with every
// subscription. It returns nil when ctx ends, or an error only when the
// configuration makes trying pointless (e.g. an unreadable CA file).
func (c *Client) Run(ctx context.Context) error {
	g := guardedStatus{&c.mu, &c.status, &c.connected}
	return streamLoop{conn: c.opts.Conn, transport: c.opts.Transport, addr: c.addr, timeout: c.timeout, backoff: c.opts.Backoff,
		setStatus: g.set, setAttempt: g.attempt, emit: c.emit}.run(ctx, c.session)
}

// session runs one stream. got reports whether it received any response
// (so the backoff starts over and the loss is a "disconnect").
func (c *Client) session(ctx context.Context, conn *grpc.ClientConn) (got bool, err error) {
	c.setStatus(StateConnecting, "connecting to "+c.addr, nil)
	if err := waitReady(ctx, conn, c.timeout); err != nil {
		return false, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var s adsStream
	if c.opts.Mode == ModeSotW {
		s, err = openSotW(sctx, conn, c.node)
	} else {
		s, err = openDelta(sctx, conn, c.node)
	}
	if err != nil {
		return false, err
	}
	c.sendMu.Lock()
	c.mu.Lock()
	for _, st := range c.types {
		// A new stream knows nothing: forget nonces and what was asked,
		// and treat the first response of each type as the full state.
		st.nonce, st.first, st.sent = "", false, nil
		if c.opts.Mode == ModeSotW {
			st.version = "" // ask for everything, not "what changed since"
		}
	}
	c.mu.Unlock()
	c.stream = s
	for _, t := range allTypes {
		c.mu.Lock()
		st := c.types[t]
		enabled, names, v := st.enabled, sortedNames(st.names), vn{st.version, st.nonce}
		c.mu.Unlock()
		if !enabled {
			continue
		}
		if err := s.subscribe(t, names, v, st); err != nil {
			c.stream = nil
			c.sendMu.Unlock()
			return false, streamErr(s, err)
		}
	}
	c.sendMu.Unlock()
	defer func() {
		c.sendMu.Lock()
		c.stream = nil
		c.sendMu.Unlock()
	}()
	c.setStatus(StateConnecting, "stream open to "+c.addr+", waiting for istiod's first response", nil)

	for {
		r, err := s.recv()
		if err != nil {
			if r == nil {
				return got, err
			}
			// A response of a type we never asked for: NACK-worthy, but
			// without a type there is nothing to NACK against; report it.
			c.emit(Event{Type: EventNACK, Nonce: r.nonce, Error: err.Error()})
			continue
		}
		if !got {
			got = true
			c.emit(guardedStatus{&c.mu, &c.status, &c.connected}.up(c.addr, string(c.opts.Mode)))
		}
		ev, follow, nack := c.apply(r)
		c.mu.Lock()
		c.status.LastResponse = ev.Time
		st := c.types[r.t]
		v := vn{st.version, st.nonce}
		c.mu.Unlock()
		c.emit(ev)
		c.sendMu.Lock()
		err = s.ack(r.t, v, nack)
		c.sendMu.Unlock()
		if err != nil {
			return got, streamErr(s, err)
		}
		for _, t := range follow {
			if err := c.resubscribe(t); err != nil {
				return got, streamErr(s, err)
			}
		}
	}
}

// apply decodes a response and, if every resource decodes, makes it the
// new state; it returns the event, the NACK reason (nil to ACK) and the
// types whose subscription changed as a consequence (EDS after CDS, RDS
// after LDS).
func (c *Client) apply(r *response) (ev Event, follow []Type, nack error) {
	now := time.Now()
	ev = Event{Time: now, Type: responseEvent(r.t), Version: r.version, Nonce: r.nonce, Resources: len(r.resources), Bytes: r.bytes}
	decs, nack := c.decodeAll(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.types[r.t]
	st.nonce = r.nonce
	if nack != nil {
		return Event{Time: now, Type: EventNACK, ResourceType: r.t, Version: r.version, Nonce: r.nonce,
			Resources: len(r.resources), Bytes: r.bytes, Error: nack.Error(),
			Message: fmt.Sprintf("rejected a %s response: %s", r.t, nack)}, nil, nack
	}
	var d resourceDiff
	// Which responses are the whole state (what they do not name is gone):
	//   SotW CDS/LDS: every response.
	//   SotW EDS/RDS: the first on a stream (it answers the full request).
	//   Delta CDS/LDS: the first on a stream — we send no
	//     initial_resource_versions, so the server cannot tell us what
	//     disappeared while we were away.
	//   Delta EDS/RDS: never; the server names removals in removed_resources
	//     (istiod does so for subscribed names that do not exist).
	sotw := c.opts.Mode == ModeSotW
	full := (sotw && r.t.wildcard()) || (!st.first && (sotw || r.t.wildcard()))
	seen := make(map[string]bool, len(decs))
	for _, dv := range decs {
		if !r.t.wildcard() && !st.names[dv.name] {
			continue // a name we no longer (or never) asked for
		}
		seen[dv.name] = true
		old, had := st.res[dv.name]
		d.update(dv.name, old, had, dv.view)
		if !had {
			// A map keeps the key it was first given: a copy, not a
			// slice of this response (see DiffEndpoints).
			dv.name = strings.Clone(dv.name)
		}
		st.res[dv.name] = dv.view
	}
	for _, n := range r.removed {
		if old, had := st.res[n]; had && !seen[n] {
			d.remove(n, old)
			delete(st.res, n)
		}
	}
	if full {
		for n, old := range st.res {
			if !seen[n] {
				d.remove(n, old)
				delete(st.res, n)
			}
		}
	}
	st.first = true
	st.version = r.version
	d.sort()
	ev.Added, ev.Removed, ev.Changed, ev.Endpoints = d.added, d.removed, d.changed, d.endpoints

	return ev, c.followLocked(r.t), nil
}

// decodeAll decodes a response's resources, without the lock (decoding is
// the expensive part; the previous EDS state is looked up under it, one
// cluster at a time); nack joins every resource's error.
func (c *Client) decodeAll(r *response) ([]decoded, error) {
	decs := make([]decoded, 0, len(r.resources))
	var errs []error
	prevEDS := func(name string) *LoadAssignment {
		c.mu.Lock()
		defer c.mu.Unlock()
		if la, ok := c.types[EDS].res[name].(LoadAssignment); ok {
			return &la
		}
		return nil
	}
	for _, a := range r.resources {
		d, err := c.decode(r.t, a, prevEDS)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		decs = append(decs, d)
	}
	return decs, nackOf(errs)
}

// nackOf is the NACK of a response whose resources failed to decode with
// errs (nil when none did): the one error, or all of them counted.
func nackOf(errs []error) error {
	if len(errs) <= 1 {
		return errors.Join(errs...)
	}
	return fmt.Errorf("%d resources rejected: %w", len(errs), errors.Join(errs...))
}

// followLocked is what a response of type t makes the client ask next: the
// EDS clusters CDS names (unless EDS names were given), the routes LDS
// names. The caller holds c.mu.
func (c *Client) followLocked(t Type) (follow []Type) {
	switch t {
	case CDS:
		if eds := c.types[EDS]; !eds.explicit {
			want := c.edsFromCDS()
			if !sameSet(want, sortedNames(eds.names)) {
				eds.names = want
				c.dropUnwanted(EDS)
				follow = append(follow, EDS)
			}
		}
	case LDS:
		rds := c.types[RDS]
		if want := c.rdsFromLDS(); !sameSet(want, sortedNames(rds.names)) {
			rds.names = want
			c.dropUnwanted(RDS)
			follow = append(follow, RDS)
		}
	}
	return follow
}

// streamErr turns a failed Send into the stream's real status: gRPC's
// SendMsg returns a bare io.EOF when the server ended the stream (e.g.
// istiod's "not ready" Unavailable), and the status is only available from
// RecvMsg. Responses still queued before the end are dropped: the session
// is over either way.
func streamErr(s adsStream, err error) error {
	if !errors.Is(err, io.EOF) {
		return err
	}
	for i := 0; i < 1000; i++ {
		r, rerr := s.recv()
		if rerr != nil && r == nil {
			return rerr
		}
	}
	return err
}
