package xdsclient

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
)

// streamLoop is what Client and WDSClient share: keep one stream up,
// dialing when given no connection, and after a failed or lost stream mark
// the view stale, say why, and try again after a backoff.
type streamLoop struct {
	conn      *grpc.ClientConn
	transport TransportConfig
	addr      string
	timeout   time.Duration
	backoff   Backoff
	// setStatus and setAttempt update the client's Status; emit records
	// an event.
	setStatus  func(State, string, error)
	setAttempt func(int)
	emit       func(Event)
}

// run runs session until ctx ends; session reports whether its stream got
// any response (then the backoff starts over, and its end is a
// "disconnect"). run returns an error only when dialing cannot work.
func (l streamLoop) run(ctx context.Context, session func(context.Context, *grpc.ClientConn) (bool, error)) error {
	conn := l.conn
	if conn == nil {
		var err error
		conn, err = Dial(l.transport)
		if err != nil {
			l.setStatus(StateStopped, err.Error(), err)
			l.emit(Event{Type: EventError, Error: err.Error(), Message: err.Error()})
			return err
		}
		defer conn.Close()
	}
	defer l.setStatus(StateStopped, "stopped", nil)
	attempt := 0
	for {
		got, err := session(ctx, conn)
		if ctx.Err() != nil {
			return nil
		}
		if got {
			attempt = 0
		}
		attempt++
		msg := describe(err, l.addr, l.timeout)
		l.setAttempt(attempt)
		l.setStatus(StateDisconnected, msg, err)
		ev := Event{Type: EventError, Message: msg, Attempt: attempt}
		if got {
			ev.Type = EventDisconnect
		}
		if err != nil {
			ev.Error = err.Error()
		}
		l.emit(ev)
		t := time.NewTimer(l.backoff.Delay(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// target names a client's control plane: its address (the transport's,
// else the shared connection's target), its label in events (default: the
// address) and the dial timeout (default DefaultDialTimeout).
func target(t TransportConfig, conn *grpc.ClientConn, controlPlane string, timeout time.Duration) (addr, cp string, dial time.Duration) {
	addr, cp, dial = t.Address, controlPlane, timeout
	if addr == "" {
		addr = conn.CanonicalTarget()
	}
	if cp == "" {
		cp = addr
	}
	if dial <= 0 {
		dial = DefaultDialTimeout
	}
	return addr, cp, dial
}

// guardedStatus is a client's Status, whether it ever had a stream up,
// and the mutex that guards them.
type guardedStatus struct {
	mu        *sync.Mutex
	st        *Status
	connected *bool
}

// up records the first response of a stream and returns the event that
// says so: connect, or reconnect when an earlier stream was up. how names
// the ADS variant (and the identity, for a ztunnel).
func (g guardedStatus) up(addr, how string) Event {
	g.mu.Lock()
	again := *g.connected
	*g.connected = true
	g.st.Attempt = 0
	g.mu.Unlock()
	g.set(StateConnected, "connected to "+addr, nil)
	if again {
		return Event{Type: EventReconnect, Message: "reconnected to " + addr + " (" + how + "); resubscribed"}
	}
	return Event{Type: EventConnect, Message: "connected to " + addr + " (" + how + ")"}
}

// set moves the status to state s with a message and the raw error.
func (g guardedStatus) set(s State, msg string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.st
	st.State, st.Message, st.Since = s, msg, time.Now()
	st.Stale = s != StateConnected
	st.Error = ""
	if err != nil {
		st.Error = err.Error()
	}
}

func (g guardedStatus) attempt(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.st.Attempt = n
}

// emitEvent numbers and stamps an event of control plane cp and viewpoint
// vp, then records it and hands it on.
func emitEvent(ev Event, cp, vp string, j *journal[Event], on func(Event)) {
	ev.Seq = eventSeq.Add(1)
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.ControlPlane, ev.Viewpoint = cp, vp
	if j != nil {
		j.add(ev)
	}
	if on != nil {
		on(ev)
	}
}
