package xdsclient

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
)

// WDSOptions configure one WDSClient: a ztunnel on one control plane.
type WDSOptions struct {
	Identity ZtunnelIdentity
	// ControlPlane labels events (e.g. "cluster1"); default: the address.
	ControlPlane string
	// Conn is a shared connection from Dial; when nil, Run dials Transport.
	Conn      *grpc.ClientConn
	Transport TransportConfig
	// DialTimeout bounds each connection attempt (default DefaultDialTimeout).
	DialTimeout time.Duration
	Backoff     Backoff
	// OnEvent is called for every event, in order, from the client's
	// goroutine; it must not block for long (it holds up the ACK).
	OnEvent func(Event)
	// Journal, when set, records every event.
	Journal *journal[Event]
}

// WDSClient impersonates a ztunnel: one Delta ADS stream subscribed to
// every istio.workload.Address (the wildcard subscription ztunnel makes
// when it is not on-demand). Like Client it ACKs what decodes, NACKs what
// does not (keeping the previous state), reconnects with backoff and marks
// its view stale meanwhile, and turns every response into an Event with the
// workloads and services it added, removed or changed. On a new stream it
// names the resources it holds (initial_resource_versions, with empty
// versions as ztunnel sends them), so istiod answers with the whole state
// and lists what disappeared while it was away.
//
// Read it from any goroutine with Status, Addresses, Service and ServiceView.
type WDSClient struct {
	opts    WDSOptions
	node    *core.Node
	who     string
	addr    string
	cp      string
	timeout time.Duration
	seed    maphash.Seed
	// Used by the Run goroutine only:
	dec     *wdsDecoder
	names   fieldNamer
	entries slab[wdsEntry]
	decs    []wdsDecoded

	mu        sync.Mutex
	state     map[string]*wdsEntry
	gen       uint64 // responses applied; written by the Run goroutine under mu
	status    Status
	connected bool
	version   string
}

// wdsDecoded is one resource of a response, decoded (or recognised).
type wdsDecoded struct {
	name string
	hash uint64
	addr WDSAddress
	held *wdsEntry // what was held under name, if anything
	same bool      // unchanged bytes: the held view stands
}

// wdsEntry is one resource held: its view, a hash of its wire bytes (an
// unchanged resource re-sent by istiod is recognised without decoding it)
// and the last response that named it (what a full response does not name
// is gone). Entries are updated in place under mu.
type wdsEntry struct {
	addr WDSAddress
	hash uint64
	gen  uint64
}

// NewWDS checks the options and builds the node. It does not connect.
func NewWDS(opts WDSOptions) (*WDSClient, error) {
	if opts.Conn == nil && opts.Transport.Address == "" {
		return nil, errors.New("xdsclient: no connection and no address")
	}
	node, err := opts.Identity.Node()
	if err != nil {
		return nil, err
	}
	c := &WDSClient{opts: opts, node: node, who: opts.Identity.String(),
		seed: maphash.MakeSeed(), dec: newWDSDecoder(), names: fieldNamer{}, state: map[string]*wdsEntry{}}
	c.addr, c.cp, c.timeout = target(opts.Transport, opts.Conn, opts.ControlPlane, opts.DialTimeout)
	c.status = Status{State: StateIdle, Stale: true, Message: "not started", Since: time.Now()}
	return c, nil
}

// Status returns the connection state.
func (c *WDSClient) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// lastVersion is the system_version_info of the last accepted response.
func (c *WDSClient) lastVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// len is the number of Address resources held.
func (c *WDSClient) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.state)
}

// Address returns one resource by name (a workload UID, or a service's
// "namespace/hostname").
func (c *WDSClient) Address(name string) (WDSAddress, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.state[name]; ok {
		return e.addr, true
	}
	return WDSAddress{}, false
}

// WDSServiceView is what one control plane sent a ztunnel about one
// service: the Service resource (nil when none was sent) and the workloads
// whose services name it, sorted by UID.
type WDSServiceView struct {
	Key       string        `json:"key"`
	Service   *WDSService   `json:"service,omitempty"`
	Workloads []WDSWorkload `json:"workloads"`
}

// ServiceView returns the service with key "namespace/hostname" and the
// workloads that back it.
func (c *WDSClient) ServiceView(key string) WDSServiceView {
	c.mu.Lock()
	defer c.mu.Unlock()
	return serviceView(c.state, key)
}

func serviceView(state map[string]*wdsEntry, key string) WDSServiceView {
	v := WDSServiceView{Key: key, Workloads: []WDSWorkload{}}
	if e, ok := state[key]; ok && e.addr.Service != nil {
		s := *e.addr.Service
		v.Service = &s
	}
	for _, e := range state {
		if w := e.addr.Workload; w != nil && w.Backs(key) {
			v.Workloads = append(v.Workloads, *w)
		}
	}
	slices.SortFunc(v.Workloads, func(a, b WDSWorkload) int { return strings.Compare(a.UID, b.UID) })
	return v
}

// Run keeps the stream open until ctx ends, reconnecting with backoff. It
// returns an error only when trying is pointless (a bad transport config).
func (c *WDSClient) Run(ctx context.Context) error {
	g := guardedStatus{&c.mu, &c.status, &c.connected}
	return streamLoop{conn: c.opts.Conn, transport: c.opts.Transport, addr: c.addr, timeout: c.timeout, backoff: c.opts.Backoff,
		setStatus: g.set, setAttempt: g.attempt, emit: c.emit}.run(ctx, c.session)
}

// session runs one stream; got reports whether any response arrived.
func (c *WDSClient) session(ctx context.Context, conn *grpc.ClientConn) (got bool, err error) {
	c.setStatus(StateConnecting, "connecting to "+c.addr, nil)
	if err := waitReady(ctx, conn, c.timeout); err != nil {
		return false, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := discovery.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(sctx)
	if err != nil {
		return false, err
	}
	// The wildcard subscription (no names), naming what we hold so that
	// istiod reports what went away while we were disconnected.
	c.mu.Lock()
	held := make(map[string]string, len(c.state))
	for n := range c.state {
		held[n] = ""
	}
	c.mu.Unlock()
	req := &discovery.DeltaDiscoveryRequest{Node: c.node, TypeUrl: AddressTypeURL, InitialResourceVersions: held}
	if err := s.Send(req); err != nil {
		return false, streamErr(deltaRecv{s}, err)
	}
	c.setStatus(StateConnecting, "stream open to "+c.addr+", waiting for istiod's first response", nil)
	first := true
	for {
		r, err := s.Recv()
		if err != nil {
			return got, err
		}
		if !got {
			got = true
			c.emit(guardedStatus{&c.mu, &c.status, &c.connected}.up(c.addr, "delta, as "+c.who))
		}
		ev, nack := c.apply(r, first && r.GetTypeUrl() == AddressTypeURL)
		if nack == nil && r.GetTypeUrl() == AddressTypeURL {
			first = false
		}
		c.emit(ev)
		ack := &discovery.DeltaDiscoveryRequest{TypeUrl: r.GetTypeUrl(), ResponseNonce: r.GetNonce()}
		if nack != nil {
			ack.ErrorDetail = nackStatus(nack)
		}
		if err := s.Send(ack); err != nil {
			return got, streamErr(deltaRecv{s}, err)
		}
	}
}

// apply decodes a response and, when every resource decodes, makes it the
// new state. full marks the first response of a stream, which answers the
// whole subscription: what it does not name is gone.
func (c *WDSClient) apply(r *discovery.DeltaDiscoveryResponse, full bool) (Event, error) {
	now := time.Now()
	ev := Event{Time: now, Type: EventWDS, Version: r.GetSystemVersionInfo(), Nonce: r.GetNonce(), Resources: len(r.GetResources())}
	if r.GetTypeUrl() != AddressTypeURL {
		err := fmt.Errorf("unexpected type URL %q", r.GetTypeUrl())
		return Event{Time: now, Type: EventNACK, Nonce: r.GetNonce(), Error: err.Error(), Message: "rejected a response: " + err.Error()}, err
	}
	decs, nack := c.decodeAll(r, &ev.Bytes)
	defer func() { clear(decs); c.decs = decs[:0] }() // reused; hold no views
	if nack != nil {
		return Event{Time: now, Type: EventNACK, ResourceType: WDS, Version: r.GetSystemVersionInfo(), Nonce: r.GetNonce(),
			Resources: len(r.GetResources()), Bytes: ev.Bytes, Error: nack.Error(),
			Message: "rejected a wds response: " + nack.Error()}, nack
	}
	fresh := 0
	for _, x := range decs {
		if !x.same {
			fresh++
		}
	}
	d := wdsDiff{changes: make([]AddressChange, 0, fresh)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.state) == 0 && fresh > 0 {
		c.state = make(map[string]*wdsEntry, fresh) // a first push: no growing step by step
	}
	c.gen++
	gen := c.gen
	for _, x := range decs {
		switch {
		case x.same:
			x.held.gen = gen
		case x.held == nil:
			c.state[x.name] = c.entries.one(wdsEntry{addr: x.addr, hash: x.hash, gen: gen})
			if d.added == nil {
				d.added = make([]string, 0, fresh)
			}
			d.added = append(d.added, x.name)
			d.changes = append(d.changes, addressChange(x.addr, AddressAdded, nil))
		default:
			old := x.held.addr
			x.held.addr, x.held.hash, x.held.gen = x.addr, x.hash, gen
			if k, m := diffAddress(old, x.addr); m != 0 {
				f := c.names.names(k, m)
				if d.changed == nil {
					d.changed = make([]string, 0, fresh)
				}
				d.changed = append(d.changed, x.name)
				d.changes = append(d.changes, addressChange(x.addr, AddressChanged, f))
			}
		}
	}
	// What istiod removes, unless this very response names it again; with
	// a full response, whatever it does not name.
	remove := func(n string, e *wdsEntry) {
		if e != nil && e.gen != gen {
			d.removed = append(d.removed, n)
			d.changes = append(d.changes, addressChange(e.addr, AddressRemoved, nil))
			delete(c.state, n)
		}
	}
	for _, n := range r.GetRemovedResources() {
		remove(n, c.state[n])
	}
	// (When the state holds no more than this response named, nothing is
	// left to remove: skip the walk.)
	if full && len(c.state) > len(decs) {
		for n, e := range c.state {
			remove(n, e)
		}
	}
	c.version = r.GetSystemVersionInfo()
	c.status.LastResponse = now
	ev.Added, ev.Removed, ev.Changed, ev.Addresses = d.added, d.removed, d.changed, d.changes
	return ev, nil
}

// decodeAll decodes a response's addresses into c's reused buffer (bytes
// grows by their size): an address whose bytes hash as the one held is
// kept as it is, undecoded. Only the stream's goroutine writes c.state, so
// reading it here without the lock is safe; decoding (the expensive part)
// runs unlocked. nack joins every resource's error.
func (c *WDSClient) decodeAll(r *discovery.DeltaDiscoveryResponse, bytes *int) ([]wdsDecoded, error) {
	if cap(c.decs) < len(r.GetResources()) {
		c.decs = make([]wdsDecoded, 0, len(r.GetResources()))
	}
	decs := c.decs[:0]
	var errs []error
	for _, res := range r.GetResources() {
		a := res.GetResource()
		if a == nil {
			continue // a name-only entry: nothing to decode
		}
		*bytes += len(a.GetValue())
		d := wdsDecoded{name: res.GetName(), hash: maphash.Bytes(c.seed, a.GetValue())}
		d.held = c.state[d.name]
		if d.held != nil && d.held.hash == d.hash {
			d.same = true
			decs = append(decs, d)
			continue
		}
		if a.GetTypeUrl() != AddressTypeURL {
			errs = append(errs, fmt.Errorf("%s: resource of type %q in an Address response", d.name, a.GetTypeUrl()))
			continue
		}
		addr, err := c.dec.address(d.name, a.GetValue())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d.addr = addr
		decs = append(decs, d)
	}
	return decs, nackOf(errs)
}

// deltaRecv lets streamErr read a raw delta stream's final status.
type deltaRecv struct {
	s discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
}

func (d deltaRecv) subscribe(Type, []string, vn, *typeState) error { return nil }
func (d deltaRecv) ack(Type, vn, error) error                      { return nil }
func (d deltaRecv) recv() (*response, error) {
	_, err := d.s.Recv()
	if err != nil {
		return nil, err
	}
	return &response{}, nil
}

func (c *WDSClient) emit(ev Event) { emitEvent(ev, c.cp, c.who, c.opts.Journal, c.opts.OnEvent) }

func (c *WDSClient) setStatus(s State, msg string, err error) {
	guardedStatus{&c.mu, &c.status, &c.connected}.set(s, msg, err)
}
