package model

// State is a cluster's sync and watch health. The names follow istiod's
// /debug/clusterz and istioctl remote-clusters where they overlap, plus the
// states istiod does not show (connecting, error with a reason).
type State string

const (
	// StateConnecting: a client exists but the API server has not answered yet.
	StateConnecting State = "connecting"
	// StateSyncing: the API server answers; informers are listing.
	StateSyncing State = "syncing"
	// StateSynced: informers synced and the API server is healthy.
	StateSynced State = "synced"
	// StateTimeout: not synced within Options.SyncTimeout (still trying).
	StateTimeout State = "timeout"
	// StateError: see Cluster.Reason; still retrying where retrying helps.
	StateError State = "error"
	// StateRemoved: the remote secret that declared it is gone.
	StateRemoved State = "removed"
)

// Settled is true for the states WaitSettled waits for.
func (s State) Settled() bool {
	switch s {
	case StateSynced, StateTimeout, StateError, StateRemoved:
		return true
	}
	return false
}

// ErrorKind is a stable code for why a cluster is in error.
type ErrorKind string

const (
	ErrUnauthorized  ErrorKind = "unauthorized"
	ErrForbidden     ErrorKind = "forbidden"
	ErrUnreachable   ErrorKind = "unreachable"
	ErrTLS           ErrorKind = "tls"
	ErrBadKubeconfig ErrorKind = "bad-kubeconfig"
	ErrRefusedConfig ErrorKind = "refused-kubeconfig"
	ErrDuplicateID   ErrorKind = "duplicate-cluster-id"
	ErrClient        ErrorKind = "client"
	ErrOther         ErrorKind = "other"
)
