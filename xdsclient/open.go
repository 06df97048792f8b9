package xdsclient

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc/stats"
)

// Open counts what this process's xDS connections (Dial) hold open right
// now, as gRPC itself sees it: a stream from its start until gRPC reports
// its end, a connection (transport) from its handshake until it closes.
// Long sessions are checked against it (the soak samples it): a stream that
// ends without gRPC noticing, or a connection never closed, shows here.
type Open struct {
	Streams     int64 `json:"streams"`
	Connections int64 `json:"connections"`
}

// OpenNow is what is open now.
func OpenNow() Open {
	return Open{Streams: openCount.streams.Load(), Connections: openCount.conns.Load()}
}

var openCount openCounter

// openCounter is the stats.Handler behind OpenNow. It is called for every
// message too; it only looks at beginnings and ends.
type openCounter struct{ streams, conns atomic.Int64 }

func (*openCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (o *openCounter) HandleRPC(_ context.Context, s stats.RPCStats) {
	switch s.(type) {
	case *stats.Begin:
		o.streams.Add(1)
	case *stats.End:
		o.streams.Add(-1)
	}
}

func (*openCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (o *openCounter) HandleConn(_ context.Context, s stats.ConnStats) {
	switch s.(type) {
	case *stats.ConnBegin:
		o.conns.Add(1)
	case *stats.ConnEnd:
		o.conns.Add(-1)
	}
}
