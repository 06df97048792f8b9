package model

import "strings"

// Incomplete is one thing a reader of the mesh needed and could not read,
// so that its answer is partial: a cluster that did not sync, an istiod
// whose debug endpoint did not answer, a stream that brought nothing. Every
// command's JSON carries them as its top-level "incomplete" list, and its
// text says them first (README "Exit codes").
type Incomplete struct {
	// Cluster is the cluster ID, or the control plane, the read was of.
	Cluster string `json:"cluster"`
	// What was not read: IncompleteCluster, IncompleteIstiod,
	// IncompleteXDS or IncompleteCredential.
	What string `json:"what"`
	// Why is the cause, as the reader was told it (a cluster's Reason, an
	// error).
	Why string `json:"why"`
}

// What an Incomplete is about.
const (
	// IncompleteCluster: a cluster's objects (its API server).
	IncompleteCluster = "cluster"
	// IncompleteIstiod: an istiod's debug endpoint (clusterz, networkz,
	// syncz).
	IncompleteIstiod = "istiod"
	// IncompleteXDS: what an istiod sends a proxy (an xDS stream).
	IncompleteXDS = "xds"
	// IncompleteCredential: a remote secret's credential meshscope could
	// not try from where it runs (doctor --remote-secret); Cluster is the
	// cluster it declares.
	IncompleteCredential = "credential"
)

// Sentence says the read that failed and its cause, for a person:
// "cluster c is unreachable (dial tcp 127.0.0.1:6444: connect: connection
// refused)".
func (i Incomplete) Sentence() string {
	switch i.What {
	case IncompleteCluster:
		return "cluster " + i.Cluster + " " + clusterCause(i.Why)
	case IncompleteIstiod:
		return "istiod " + i.Cluster + " could not be read: " + i.Why
	case IncompleteXDS:
		return "no answer from istiod " + i.Cluster + ": " + i.Why
	case IncompleteCredential:
		return "the credential for cluster " + i.Cluster + " could not be tried from here: " + i.Why
	}
	return i.What + " " + i.Cluster + ": " + i.Why
}

// clusterCause turns a cluster's Reason into what follows its name:
// "unreachable: X" reads "is unreachable (X)".
func clusterCause(why string) string {
	for _, p := range []struct{ prefix, says string }{
		{"unreachable: ", "is unreachable"},
		{"unauthorized: ", "refused meshscope's credentials"},
		{"TLS/CA mismatch: ", "failed TLS"},
	} {
		if rest, ok := strings.CutPrefix(why, p.prefix); ok {
			if strings.Contains(rest, "(") {
				return p.says + ": " + rest // no parentheses in parentheses
			}
			return p.says + " (" + rest + ")"
		}
	}
	switch {
	case strings.HasPrefix(why, "not synced after "):
		return "did not sync in time (" + why + ")"
	case strings.HasPrefix(why, "still "):
		return "had not synced yet (" + why + ")"
	}
	return "could not be read (" + why + ")"
}

// Unread lists the clusters of the mesh meshscope could not read: in error,
// timed out, or still connecting or syncing when the snapshot was taken.
// Not listed: a removed cluster (its remote secret is gone: not part of
// the mesh), and a cluster that only remote secrets declare and that fails
// for the secret's own reason (secretFault) — istiod reads it through the
// same secret and fails the same way, so meshscope's picture of what
// istiod sees is whole; doctor reports the secret as a problem.
func (s *Snapshot) Unread() []Incomplete {
	if s == nil {
		return nil
	}
	var out []Incomplete
	for _, c := range s.Clusters {
		why := c.Reason
		switch c.State {
		case StateSynced, StateRemoved:
			continue
		case StateConnecting, StateSyncing:
			why = "still " + string(c.State)
		case StateError:
			if secretFault[c.ErrorKind] && !c.IsContext() {
				continue
			}
		}
		if why == "" {
			why = string(c.State)
		}
		out = append(out, Incomplete{Cluster: c.ID, What: IncompleteCluster, Why: why})
	}
	return out
}

// secretFault are the errors that come from a remote secret's kubeconfig
// itself (its CA, its token, what it asks to run), not from where
// meshscope runs: istiod meets them too.
var secretFault = map[ErrorKind]bool{
	ErrUnauthorized: true, ErrTLS: true, ErrBadKubeconfig: true, ErrRefusedConfig: true, ErrDuplicateID: true,
}
