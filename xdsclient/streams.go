package xdsclient

import (
	"context"
	"maps"
	"slices"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/anypb"
)

// adsStream hides the difference between SotW and Delta ADS from the client
// loop: both subscribe, ACK/NACK and receive responses of one shape.
type adsStream interface {
	// subscribe brings the server's subscription for t in line with names
	// (ignored for wildcard types). sent is what this stream asked so far.
	// st.sent is guarded by the client's sendMu; v carries the version and
	// nonce read under its mu.
	subscribe(t Type, names []string, v vn, st *typeState) error
	// ack acknowledges the last response of t, or NACKs it when nack != nil.
	ack(t Type, v vn, nack error) error
	recv() (*response, error)
}

// vn is the version and nonce a request carries.
type vn struct{ version, nonce string }

// response is a DiscoveryResponse or DeltaDiscoveryResponse, flattened.
type response struct {
	t         Type
	version   string
	nonce     string
	resources []*anypb.Any
	removed   []string
	bytes     int
}

func nackStatus(err error) *statuspb.Status {
	return &statuspb.Status{Code: int32(codes.InvalidArgument), Message: err.Error()}
}

// --- State of the world ---

type sotwStream struct {
	s     discovery.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	node  *core.Node
	first bool // node not sent yet on this stream
	// asked is the name list the server last got per type: ACKs repeat it,
	// since in SotW every request restates the whole subscription.
	asked map[Type][]string
}

func openSotW(ctx context.Context, conn *grpc.ClientConn, node *core.Node) (adsStream, error) {
	s, err := discovery.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		return nil, err
	}
	return &sotwStream{s: s, node: node, first: true, asked: map[Type][]string{}}, nil
}

func (s *sotwStream) request(t Type, names []string, v vn) *discovery.DiscoveryRequest {
	req := &discovery.DiscoveryRequest{
		TypeUrl:       t.url(),
		ResourceNames: names,
		VersionInfo:   v.version,
		ResponseNonce: v.nonce,
	}
	// istiod reads the node from the first request of a stream; later
	// requests may omit it, which keeps ACKs small.
	if s.first {
		req.Node, s.first = s.node, false
	}
	return req
}

func (s *sotwStream) subscribe(t Type, names []string, v vn, st *typeState) error {
	if !t.wildcard() && len(names) == 0 && st.sent == nil {
		return nil // an empty list would mean "everything" to some servers
	}
	if st.sent != nil && sameSet(st.sent, names) && !t.wildcard() {
		return nil
	}
	if t.wildcard() && st.sent != nil {
		return nil // already subscribed to all
	}
	if !t.wildcard() && len(names) == 0 {
		// Unsubscribing everything cannot be said in SotW without it
		// meaning "all"; keep the old subscription and drop its resources
		// locally (the client ignores unrequested names).
		st.sent = map[string]bool{}
		return nil
	}
	names = slices.Sorted(slices.Values(names))
	if err := s.s.Send(s.request(t, names, v)); err != nil {
		return err
	}
	st.sent = setOf(names)
	s.asked[t] = names
	return nil
}

func (s *sotwStream) ack(t Type, v vn, nack error) error {
	req := s.request(t, s.asked[t], v)
	if nack != nil {
		req.ErrorDetail = nackStatus(nack) // VersionInfo stays the last accepted one
	}
	return s.s.Send(req)
}

func (s *sotwStream) recv() (*response, error) {
	r, err := s.s.Recv()
	if err != nil {
		return nil, err
	}
	t, err := typeFromURL(r.GetTypeUrl())
	if err != nil {
		return &response{t: "", nonce: r.GetNonce()}, err
	}
	out := &response{t: t, version: r.GetVersionInfo(), nonce: r.GetNonce(), resources: r.GetResources()}
	for _, a := range out.resources {
		out.bytes += len(a.GetValue())
	}
	return out, nil
}

// --- Delta ---

type deltaStream struct {
	s     discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	node  *core.Node
	first bool
}

func openDelta(ctx context.Context, conn *grpc.ClientConn, node *core.Node) (adsStream, error) {
	s, err := discovery.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		return nil, err
	}
	return &deltaStream{s: s, node: node, first: true}, nil
}

func (s *deltaStream) send(req *discovery.DeltaDiscoveryRequest) error {
	if s.first {
		req.Node, s.first = s.node, false
	}
	return s.s.Send(req)
}

func (s *deltaStream) subscribe(t Type, names []string, _ vn, st *typeState) error {
	if t.wildcard() {
		if st.sent != nil {
			return nil
		}
		// An empty first subscription is the (legacy) wildcard, as Envoy sends it.
		if err := s.send(&discovery.DeltaDiscoveryRequest{TypeUrl: t.url()}); err != nil {
			return err
		}
		st.sent = map[string]bool{}
		return nil
	}
	want := setOf(names)
	var add, del []string
	for n := range want {
		if !st.sent[n] {
			add = append(add, n)
		}
	}
	for n := range st.sent {
		if !want[n] {
			del = append(del, n)
		}
	}
	if len(add) == 0 && len(del) == 0 {
		return nil
	}
	slices.Sort(add)
	slices.Sort(del)
	if err := s.send(&discovery.DeltaDiscoveryRequest{TypeUrl: t.url(), ResourceNamesSubscribe: add, ResourceNamesUnsubscribe: del}); err != nil {
		return err
	}
	st.sent = want
	return nil
}

func (s *deltaStream) ack(t Type, v vn, nack error) error {
	req := &discovery.DeltaDiscoveryRequest{TypeUrl: t.url(), ResponseNonce: v.nonce}
	if nack != nil {
		req.ErrorDetail = nackStatus(nack)
	}
	return s.send(req)
}

func (s *deltaStream) recv() (*response, error) {
	r, err := s.s.Recv()
	if err != nil {
		return nil, err
	}
	t, err := typeFromURL(r.GetTypeUrl())
	if err != nil {
		return &response{nonce: r.GetNonce()}, err
	}
	out := &response{t: t, version: r.GetSystemVersionInfo(), nonce: r.GetNonce(), removed: r.GetRemovedResources()}
	out.resources = make([]*anypb.Any, 0, len(r.GetResources()))
	for _, res := range r.GetResources() {
		a := res.GetResource()
		if a == nil {
			// A name-only entry (resource not yet known to the server, or a
			// heartbeat): nothing to decode.
			continue
		}
		out.resources = append(out.resources, a)
		out.bytes += len(a.GetValue())
	}
	return out, nil
}

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func sameSet(a map[string]bool, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, n := range b {
		if !a[n] {
			return false
		}
	}
	return true
}

func sortedNames(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
