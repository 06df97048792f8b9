package main

import (
	"strings"
	"testing"

	"github.com/meshscope/meshscope/model"
)

// TestNotCheckedWhy: doctor's "Not checked" names the real reason: a
// cluster that is not a given context (give --context), a given context
// that could not be read (its cause, not "give --context"), a context whose
// remote secrets may not be read.
func TestNotCheckedWhy(t *testing.T) {
	ctx := func(id string) model.SourceRef { return model.SourceRef{Kind: model.SourceContext, Name: id} }
	s := &model.Snapshot{Clusters: []model.Cluster{
		{ID: "c", Source: ctx("c"), State: model.StateError, ErrorKind: model.ErrUnreachable, Reason: "unreachable: dial tcp 127.0.0.1:1: connect: connection refused"},
		{ID: "r", Source: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/x", In: "c"}, State: model.StateSynced},
		{ID: "f", Source: ctx("f"), State: model.StateSynced},
	}}
	for cp, want := range map[string][]string{
		"c": {"its remote secrets were not read: cluster c is unreachable (dial tcp 127.0.0.1:1: connect: connection refused) (given with --context)"},
		"r": {"r is not one of the contexts given", "give --context r"},
		"f": {"may not read the remote secrets in f", "--istiod-debug-address f=HOST:PORT"},
	} {
		got := notCheckedWhy(s, cp)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", cp, got, w)
			}
		}
		if cp == "c" && strings.Contains(got, "give --context") {
			t.Errorf("%s: %q tells to give the context that was given", cp, got)
		}
	}
}
