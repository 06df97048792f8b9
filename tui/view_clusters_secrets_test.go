package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/model"
)

// TestClustersSecret: the clusters view shows each cluster's remote-secret
// credential ("token 3d"), in the warning style before it expires and the
// error style once it has, and the selected cluster's secret checks.
func TestClustersSecret(t *testing.T) {
	snap := testSnapshot()
	m := newTestModel(t, "default", 180, 40, snap, testFeed(snap))
	press(m, "down") // cluster2
	out := ansi.Strip(m.View().Content)
	for _, want := range []string{
		"token 3d",
		"token 3d (until 2026-11-25 04:00) · tried 1m ago: istio's reader role held · secret istio-system/istio-remote-secret-cluster2 in cluster1 · as istio-system/",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the clusters view lacks %q:\n%s", want, out)
		}
	}
	vc := m.vc()
	rs := &snap.RemoteSecrets[0]
	paint := func(rs *model.RemoteSecret) string { return secretStyle(vc, rs, vc.st.Text).Render("x") }
	if paint(rs) != vc.st.Warn.Render("x") {
		t.Errorf("3 days left: not the warning style")
	}
	later := *rs
	later.Credential.Expires = testNow.Add(30 * 24 * time.Hour)
	if paint(&later) != vc.st.Text.Render("x") {
		t.Errorf("30 days left: not the plain style")
	}
	gone := *rs
	gone.Credential.Expires = testNow.Add(-time.Minute)
	if paint(&gone) != vc.st.Error.Render("x") {
		t.Errorf("expired: not the error style")
	}
	if got, _ := secretCell(vc, "cluster2"); got != "token 3d" {
		t.Errorf("cell %q", got)
	}
	if got, _ := secretCell(vc, "cluster1"); got != "-" {
		t.Errorf("a context cluster no secret declares: %q", got)
	}
}
