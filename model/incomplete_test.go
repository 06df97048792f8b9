package model

import "testing"

// TestUnread: the clusters not read are those in error, timed out or
// still syncing, with their cause; not a removed one, nor one that only
// remote secrets declare and that fails for the secret's own reason.
func TestUnread(t *testing.T) {
	ctx := SourceRef{Kind: SourceContext, Name: "c"}
	sec := SourceRef{Kind: SourceSecret, Name: "istio-system/istio-remote-secret-x", In: "c"}
	s := &Snapshot{Clusters: []Cluster{
		{ID: "ok", Source: ctx, State: StateSynced},
		{ID: "down", Source: sec, State: StateError, ErrorKind: ErrUnreachable, Reason: "unreachable: dial tcp 127.0.0.1:1: connect: connection refused"},
		{ID: "slow", Source: ctx, State: StateTimeout, Reason: "not synced after 30s (waiting for pods)"},
		{ID: "new", Source: ctx, State: StateConnecting},
		{ID: "gone", Source: sec, State: StateRemoved},
		{ID: "badca", Source: sec, State: StateError, ErrorKind: ErrTLS, Reason: "TLS/CA mismatch: x"},
		{ID: "badca-ctx", Source: ctx, State: StateError, ErrorKind: ErrTLS, Reason: "TLS/CA mismatch: x"},
		{ID: "hung", Source: ctx, State: StateError, ErrorKind: ErrUnreachable, Reason: "unreachable: no answer in time (API server down or blackholed?)"},
	}}
	want := []string{
		"cluster down is unreachable (dial tcp 127.0.0.1:1: connect: connection refused)",
		"cluster slow did not sync in time (not synced after 30s (waiting for pods))",
		"cluster new had not synced yet (still connecting)",
		"cluster badca-ctx failed TLS (x)",
		"cluster hung is unreachable: no answer in time (API server down or blackholed?)",
	}
	got := s.Unread()
	if len(got) != len(want) {
		t.Fatalf("unread %+v, want %d", got, len(want))
	}
	for i, u := range got {
		if u.What != IncompleteCluster || u.Sentence() != want[i] {
			t.Errorf("%d: %q (%s), want %q", i, u.Sentence(), u.What, want[i])
		}
	}
	if (*Snapshot)(nil).Unread() != nil {
		t.Error("a nil snapshot has unread clusters")
	}
	for _, c := range []struct {
		i    Incomplete
		want string
	}{
		{Incomplete{Cluster: "cluster1", What: IncompleteIstiod, Why: "its connected proxies: EOF"}, "istiod cluster1 could not be read: its connected proxies: EOF"},
		{Incomplete{Cluster: "cluster1", What: IncompleteXDS, Why: "no EDS within 20s"}, "no answer from istiod cluster1: no EDS within 20s"},
	} {
		if got := c.i.Sentence(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.i, got, c.want)
		}
	}
}
