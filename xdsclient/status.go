package xdsclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// State is where a client's stream is.
type State string

// Client states.
const (
	StateIdle         State = "idle"         // Run not called yet
	StateConnecting   State = "connecting"   // dialing, or stream open and waiting for the first response
	StateConnected    State = "connected"    // at least one response on the current stream
	StateDisconnected State = "disconnected" // stream lost; retrying after a backoff
	StateStopped      State = "stopped"      // Run returned
	// StateNoStream is a viewpoint without a Client: starting its stream
	// failed (no control plane, a failed port-forward); see
	// StreamStatus.Reason.
	StateNoStream State = "no stream"
)

// Status is a client's connection state for a reader. Stale means the
// resources held are from an earlier stream (or there are none yet): the
// view may no longer be what istiod would send.
type Status struct {
	State        State     `json:"state"`
	Stale        bool      `json:"stale"`
	Message      string    `json:"message"`
	Error        string    `json:"error,omitempty"`
	Since        time.Time `json:"since"`
	Attempt      int       `json:"attempt,omitempty"`
	LastResponse time.Time `json:"lastResponse,omitzero"`
}

// StreamStatus is the stream of one viewpoint on one control plane as a
// reader of many streams sees it (the UI's status bar and service view).
type StreamStatus struct {
	// Viewpoint is Viewpoint.String() of the stream.
	Viewpoint    string
	ControlPlane string
	State        State
	// Reason says why there is no stream (StateNoStream).
	Reason string
	// Stale means the resources held are from an earlier stream (or there
	// are none yet).
	Stale bool
	// LastPush is when the last response arrived (zero: never).
	LastPush time.Time
	// Progress is how much of what it follows the stream holds (a
	// sidecar's: zero for a ztunnel).
	Progress Progress
}

// Progress is how far a sidecar stream is with the state it follows:
// whether istiod's CDS came on the current stream, and how many of the EDS
// resources the stream asks for it holds. A reader tells "still loading"
// from "done" with it without copying the resources.
type Progress struct {
	// FollowsCDS: the stream asks EDS for what CDS names (not a fixed
	// list of names).
	FollowsCDS bool
	// CDS: istiod's CDS arrived on the current stream.
	CDS bool
	// EDS is how many of the EDSWanted resources the stream holds.
	EDS, EDSWanted int
	// LDS: listeners are watched and istiod's LDS arrived on the current
	// stream (possibly with no listener at all).
	LDS bool
}

// Text is the state in a few words for a person: "connected", or "no
// stream: " and why.
func (s StreamStatus) Text() string {
	if s.State == StateNoStream {
		return string(s.State) + ": " + s.Reason
	}
	return string(s.State)
}

// errDialTimeout is returned when the connection is not ready in time.
var errDialTimeout = errors.New("dial timeout")

// describe turns a stream or dial error into a sentence a person can act
// on. addr is the control plane's address as the user gave it (never a
// credential). The raw error stays available in Status.Error.
func describe(err error, addr string, timeout time.Duration) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	st, _ := status.FromError(err)
	low := strings.ToLower(msg)
	switch {
	case errors.Is(err, context.Canceled):
		return "stopped"
	case errors.Is(err, errDialTimeout) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer from %s within %s: wrong address, or something drops the packets", addr, timeout)
	case strings.Contains(low, "connection refused"):
		return fmt.Sprintf("nothing listens on %s (connection refused): is istiod running, and is this its xDS port (15010 plaintext, 15012 TLS)?", addr)
	case strings.Contains(low, "no such host"):
		return fmt.Sprintf("cannot resolve the host of %s", addr)
	case strings.Contains(low, "x509") || strings.Contains(low, "certificate") || strings.Contains(low, "tls:") || strings.Contains(low, "handshake"):
		return fmt.Sprintf("TLS with %s failed: check --ca-file (istiod's root certificate) and --server-name (default istiod.istio-system.svc): %s", addr, st.Message())
	case strings.Contains(low, "server preface") && strings.Contains(low, "eof"):
		// A port-forward accepts the connection whether or not istiod
		// listens in its pod, then closes it: the far end is gone.
		return fmt.Sprintf("%s closed the connection before gRPC answered: is istiod running (through a port-forward, its pod may be up with istiod down), and is this its plaintext xDS port (15012 is TLS: use --tls)?", addr)
	case strings.Contains(low, "server preface") || strings.Contains(low, "frame too large") || strings.Contains(low, "http2"):
		return fmt.Sprintf("%s does not speak plaintext gRPC: is it the TLS port (15012)? then use --tls", addr)
	case strings.Contains(low, "token file"):
		return "cannot use the token: " + msg
	}
	switch st.Code() {
	case codes.Unavailable:
		if strings.Contains(low, "not ready") {
			return fmt.Sprintf("istiod at %s is not ready yet (its caches are still syncing); retrying", addr)
		}
		if strings.Contains(low, "connection error") || strings.Contains(low, "transport") || strings.Contains(low, "eof") {
			return fmt.Sprintf("lost the connection to %s (istiod restarting?); retrying", addr)
		}
		return fmt.Sprintf("istiod at %s is unavailable: %s", addr, st.Message())
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Sprintf("istiod at %s rejected this identity: %s (on 15012 the token needs audience istio-ca and the viewpoint's namespace)", addr, st.Message())
	case codes.Unimplemented:
		return fmt.Sprintf("%s does not serve this ADS variant: try --xds-mode sotw or delta", addr)
	}
	if errors.Is(err, io.EOF) {
		return fmt.Sprintf("istiod at %s closed the stream; retrying", addr)
	}
	return fmt.Sprintf("stream to %s failed: %s", addr, msg)
}
