package xdsclient

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc"
)

// Options configure one Client: one viewpoint on one control plane.
type Options struct {
	Viewpoint Viewpoint
	// ControlPlane labels events (e.g. "cluster1"); default: the address.
	ControlPlane string
	// Conn is a shared connection from Dial; when nil, Run dials Transport
	// itself and closes the connection when it returns.
	Conn      *grpc.ClientConn
	Transport TransportConfig
	// Mode is ModeDelta (default, like the istio agent) or ModeSotW.
	Mode Mode
	// EDSNames, when set, is the exact EDS subscription (e.g. only
	// "outbound|5000||helloworld.sample.svc.cluster.local"); when empty the
	// client follows CDS and asks EDS for every EDS cluster CDS names.
	EDSNames []string
	// EDSOnly subscribes EDS for EDSNames and nothing else — no CDS — the
	// way Envoy asks EDS for the clusters it already knows: the stream's
	// cost then does not grow with the mesh (one-service commands such as
	// explain and watch --service). It needs EDSNames.
	EDSOnly bool
	// Shared, when set, is a table of decoded EDS resources this client
	// shares with the other clients given it (share.go): identical pushes
	// to several viewpoints are decoded and kept once.
	Shared *Shared
	// Listeners subscribes LDS, and RDS for the routes the listeners name.
	// It can also be turned on later with WatchListeners.
	Listeners bool
	// DialTimeout bounds each connection attempt (default DefaultDialTimeout).
	DialTimeout time.Duration
	Backoff     Backoff
	// OnEvent, when set, is called for every event, in order, from the
	// client's goroutine; it must not block for long (it holds up the ACK).
	OnEvent func(Event)
	// Journal, when set, records every event (it may be shared by clients).
	Journal *journal[Event]
}

// Client impersonates one proxy on one ADS stream. Create it with New, run
// it with Run (which reconnects until its context ends), and read it with
// Status, Clusters, LoadAssignment, Listeners and Routes from any goroutine.
type Client struct {
	opts    Options
	node    *core.Node
	vp      string
	addr    string
	cp      string
	timeout time.Duration

	// sendMu serializes writes to the stream (gRPC allows one sender at a
	// time) and is always taken before mu.
	sendMu sync.Mutex
	stream adsStream // nil while there is no stream

	mu        sync.Mutex
	types     map[Type]*typeState
	status    Status
	connected bool // ever had a response on some stream
}

// typeState is what the client holds for one resource type.
type typeState struct {
	enabled  bool
	explicit bool            // names set by the caller, not derived
	names    map[string]bool // wanted names (non-wildcard types)
	res      map[string]any  // decoded views by name
	version  string          // last accepted version_info (SotW) / system version (delta)
	nonce    string          // last nonce received on the current stream
	first    bool            // a response was received on the current stream
	sent     map[string]bool
}

var eventSeq atomic.Uint64

// New checks the options and builds the node identity. It does not connect.
func New(opts Options) (*Client, error) {
	if opts.Mode == "" {
		opts.Mode = ModeDelta
	}
	if opts.Mode != ModeDelta && opts.Mode != ModeSotW {
		return nil, fmt.Errorf("xds mode %q: want sotw or delta", opts.Mode)
	}
	if opts.Conn == nil && opts.Transport.Address == "" {
		return nil, errors.New("xdsclient: no connection and no address")
	}
	if opts.EDSOnly && len(opts.EDSNames) == 0 {
		return nil, errors.New("xdsclient: EDSOnly needs the EDS names to ask for")
	}
	node, err := opts.Viewpoint.Node()
	if err != nil {
		return nil, fmt.Errorf("viewpoint %s: %w", opts.Viewpoint, err)
	}
	c := &Client{opts: opts, node: node, vp: opts.Viewpoint.String()}
	c.addr, c.cp, c.timeout = target(opts.Transport, opts.Conn, opts.ControlPlane, opts.DialTimeout)
	c.types = map[Type]*typeState{}
	for _, t := range allTypes {
		c.types[t] = &typeState{res: map[string]any{}, names: map[string]bool{}}
	}
	c.types[CDS].enabled = !opts.EDSOnly
	c.types[EDS].enabled = true
	if len(opts.EDSNames) > 0 {
		c.types[EDS].explicit = true
		c.types[EDS].names = setOf(opts.EDSNames)
	}
	if opts.Listeners {
		c.types[LDS].enabled = true
		c.types[RDS].enabled = true
	}
	c.status = Status{State: StateIdle, Stale: true, Message: "not started", Since: time.Now()}
	return c, nil
}

// Progress says how much of what it follows the client holds (see
// Progress); cheap, for a status line refreshed every second.
func (c *Client) Progress() Progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	cds, eds, lds := c.types[CDS], c.types[EDS], c.types[LDS]
	// EDS resources are kept only under wanted names (apply,
	// dropUnwanted): what is held is a part of what is wanted.
	return Progress{FollowsCDS: cds.enabled && !eds.explicit, CDS: cds.first, EDS: len(eds.res), EDSWanted: len(eds.names), LDS: lds.enabled && lds.first}
}

// FollowsCDS says whether the client subscribes CDS (and so will hold the
// clusters of the EDS names it asks for).
func (c *Client) FollowsCDS() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.types[CDS].enabled
}

// viewpoint is the viewpoint as a string, as it appears in events.
func (c *Client) viewpoint() string { return c.vp }

// Status returns the connection state.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Clusters returns the current CDS view, sorted by name.
func (c *Client) Clusters() []Cluster { return views[Cluster](c, CDS) }

// LoadAssignments returns the current EDS view, sorted by cluster name.
func (c *Client) LoadAssignments() []LoadAssignment { return views[LoadAssignment](c, EDS) }

// Listeners returns the current LDS view (empty unless listeners are watched).
func (c *Client) Listeners() []Listener { return views[Listener](c, LDS) }

// Routes returns the current RDS view.
func (c *Client) Routes() []Route { return views[Route](c, RDS) }

// ProxyConfig is what one impersonated proxy holds besides EDS, like
// istioctl proxy-config clusters / listeners / routes.
type ProxyConfig struct {
	Clusters  []Cluster
	Listeners []Listener
	Routes    []Route
}

// Config returns the current CDS, LDS and RDS views.
func (c *Client) Config() ProxyConfig {
	return ProxyConfig{Clusters: c.Clusters(), Listeners: c.Listeners(), Routes: c.Routes()}
}

// LoadAssignment returns the endpoints istiod sent for one EDS cluster name.
func (c *Client) LoadAssignment(name string) (LoadAssignment, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.types[EDS].res[name].(LoadAssignment)
	return v, ok
}

// Cluster returns the CDS cluster istiod sent under a name (for an
// outbound cluster, its EDS cluster name too).
func (c *Client) Cluster(name string) (Cluster, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.types[CDS].res[name].(Cluster)
	return v, ok
}

func views[V any](c *Client, t Type) []V {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.types[t]
	out := make([]V, 0, len(st.res))
	for _, k := range slices.Sorted(maps.Keys(st.res)) {
		out = append(out, st.res[k].(V))
	}
	return out
}

// setEDSNames replaces the EDS subscription with exactly names; nil goes
// back to following CDS (not for an EDSOnly client). It takes effect at once on a live stream, and is
// kept for the next one otherwise.
func (c *Client) setEDSNames(names []string) error {
	if len(names) == 0 && c.opts.EDSOnly {
		return errors.New("xdsclient: an EDS-only client cannot follow CDS; give the EDS names")
	}
	c.mu.Lock()
	st := c.types[EDS]
	if len(names) == 0 {
		st.explicit = false
		st.names = c.edsFromCDS()
	} else {
		st.explicit = true
		st.names = setOf(names)
	}
	c.dropUnwanted(EDS)
	c.mu.Unlock()
	return c.resubscribe(EDS)
}

// WatchListeners turns on LDS, and RDS for the routes listeners name (for
// proxy-config views). It is cheap to call again.
func (c *Client) WatchListeners() error {
	c.mu.Lock()
	c.types[LDS].enabled = true
	c.types[RDS].enabled = true
	c.mu.Unlock()
	if err := c.resubscribe(LDS); err != nil {
		return err
	}
	return c.resubscribe(RDS)
}

// resubscribe sends t's wanted subscription on the live stream, if any.
func (c *Client) resubscribe(t Type) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if c.stream == nil {
		return nil
	}
	c.mu.Lock()
	st := c.types[t]
	enabled := st.enabled
	names := sortedNames(st.names)
	v := vn{st.version, st.nonce}
	c.mu.Unlock()
	if !enabled {
		return nil
	}
	return c.stream.subscribe(t, names, v, st)
}

// edsFromCDS is the EDS names of the EDS clusters in the CDS view. Caller holds mu.
func (c *Client) edsFromCDS() map[string]bool {
	out := map[string]bool{}
	for _, v := range c.types[CDS].res {
		if cl := v.(Cluster); cl.Type == "EDS" {
			out[cl.EDSName()] = true
		}
	}
	return out
}

// rdsFromLDS is the route names the listeners ask for. Caller holds mu.
func (c *Client) rdsFromLDS() map[string]bool {
	out := map[string]bool{}
	for _, v := range c.types[LDS].res {
		for _, r := range v.(Listener).Routes {
			out[r] = true
		}
	}
	return out
}

// dropUnwanted forgets resources of a named type no longer subscribed.
// Caller holds mu.
func (c *Client) dropUnwanted(t Type) {
	st := c.types[t]
	for n := range st.res {
		if !st.names[n] {
			delete(st.res, n)
		}
	}
}

func (c *Client) emit(ev Event) { emitEvent(ev, c.cp, c.vp, c.opts.Journal, c.opts.OnEvent) }

func (c *Client) setStatus(s State, msg string, err error) {
	guardedStatus{&c.mu, &c.status, &c.connected}.set(s, msg, err)
}
