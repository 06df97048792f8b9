package model

import "testing"

func TestNamespaceRevision(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		rev    string
		ok     bool
	}{
		{nil, "", false},
		{map[string]string{LabelRev: "canary"}, "canary", true},
		{map[string]string{LabelRev: ""}, "", false},
		{map[string]string{LabelInjection: "enabled"}, "default", true},
		{map[string]string{LabelInjection: "enabled", LabelRev: "canary"}, "default", true}, // the legacy label wins
		{map[string]string{LabelInjection: "disabled", LabelRev: "canary"}, "", false},
	} {
		if rev, ok := NamespaceRevision(tc.labels); rev != tc.rev || ok != tc.ok {
			t.Errorf("%v: %q %v, want %q %v", tc.labels, rev, ok, tc.rev, tc.ok)
		}
	}
}

func TestConfigInRevision(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		rev    string
		want   bool
	}{
		{nil, "default", true},
		{map[string]string{LabelRev: "canary"}, "default", false},
		{map[string]string{LabelRev: "canary"}, "canary", true},
		{map[string]string{LabelRev: "default"}, "default", true},
		{map[string]string{LabelRev: "canary"}, "", true}, // an istiod without REVISION reads everything
	} {
		if got := ConfigInRevision(tc.labels, tc.rev); got != tc.want {
			t.Errorf("%v in %q: %v, want %v", tc.labels, tc.rev, got, tc.want)
		}
	}
}

// A remote cluster's revisions are its primaries'; tags resolve in the
// cluster itself first.
func TestRevisionServersAndTags(t *testing.T) {
	s := &Snapshot{Clusters: []Cluster{
		{ID: "primary", Source: SourceRef{Kind: SourceContext, Name: "primary"}, SecretsRead: true,
			Istiods:      []IstiodPod{{Name: "a", Revision: "1-28", Ready: true}, {Name: "b", Ready: true}},
			RevisionTags: []RevisionTag{{Tag: "prod", Revision: "1-28"}}},
		{ID: "remote", Source: SourceRef{Kind: SourceSecret, Name: "istio-system/istio-remote-secret-remote", In: "primary"},
			RevisionTags: []RevisionTag{{Tag: "stable", Revision: "default"}}},
		{ID: "alone", Source: SourceRef{Kind: SourceContext, Name: "alone"}},
	}}
	if got := s.Clusters[0].Revisions(); len(got) != 2 || got[0] != "1-28" || got[1] != "default" {
		t.Errorf("revisions %v", got)
	}
	servers, known := s.RevisionServers("remote")
	if !known || len(servers) != 1 || servers[0].ID != "primary" {
		t.Errorf("remote's servers %v %v", servers, known)
	}
	if _, known := s.RevisionServers("alone"); known {
		t.Error("a cluster no istiod serves: unknown")
	}
	for _, tc := range []struct{ cluster, name, rev, via string }{
		{"remote", "stable", "default", "stable"},
		{"remote", "prod", "1-28", "prod"},
		{"remote", "1-28", "1-28", ""},
		{"primary", "stable", "stable", ""},
	} {
		if rev, via := s.ResolveRevision(tc.cluster, tc.name); rev != tc.rev || via != tc.via {
			t.Errorf("%s in %s: %q via %q, want %q via %q", tc.name, tc.cluster, rev, via, tc.rev, tc.via)
		}
	}
}

func TestEffectiveRevision(t *testing.T) {
	pods := func(revs ...string) []IstiodPod {
		var out []IstiodPod
		for _, r := range revs {
			out = append(out, IstiodPod{Name: "istiod-" + r, Revision: r, Ready: true})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		istiods   []IstiodPod
		tags      []RevisionTag
		requested string
		want      string
	}{
		{"no istiod seen", nil, nil, "", "default"},
		{"no istiod seen, asked", nil, nil, "canary", "canary"},
		{"the default", pods("default", "canary"), nil, "", "default"},
		{"unlabelled is the default", pods(""), nil, "", "default"},
		{"asked and running", pods("default", "canary"), nil, "canary", "canary"},
		{"asked, not running here", pods("default"), nil, "canary", "default"},
		{"asked a tag", pods("1-27", "1-28"), []RevisionTag{{Tag: "prod", Revision: "1-28"}}, "prod", "1-28"},
		{"revisions only: the default tag's", pods("1-27", "1-28"), []RevisionTag{{Tag: "default", Revision: "1-27"}}, "", "1-27"},
		{"revisions only: the only one", pods("1-28"), nil, "", "1-28"},
		{"several, none default: the one asked", pods("1-27", "1-28"), nil, "1-29", "1-29"},
		{"several, none default, none asked", pods("1-27", "1-28"), nil, "", "default"},
	} {
		c := Cluster{Istiods: tc.istiods, RevisionTags: tc.tags}
		if got := c.EffectiveRevision(tc.requested); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
