package tui

import (
	"strings"
	"testing"
)

// TestDiffView: ":diff A B" lists only the service ports where the two
// viewpoints reach different pods: legacy's no-sidecar pod is dropped for
// network1 but local to network2; helloworld reaches the same pods from
// both networks (directly or through gateways / the leak), so it is not listed.
func TestDiffView(t *testing.T) {
	m := newTestModel(t, "mono", 120, 40, testSnapshot(), nil)
	m.runCommand("diff network1 network2")
	if m.currentID() != viewDiff {
		t.Fatalf("view %v after :diff, flash %q", m.currentID(), m.flash)
	}
	var hosts []string
	for _, r := range m.diff.diffs {
		hosts = append(hosts, r.host)
	}
	got := strings.Join(hosts, ",")
	if !strings.Contains(got, "legacy.legacy") || strings.Contains(got, "helloworld") {
		t.Errorf("diff rows %q: want legacy (dropped for network1), not helloworld", got)
	}
	out := m.diff.render(m.vc(), 120, 30)
	if !strings.Contains(out, "legacy-1@cluster2") {
		t.Errorf("the row should name the pod only network2 reaches:\n%s", out)
	}
	m.runCommand("diff network1")
	if !strings.Contains(m.flash, "usage: :diff A B") {
		t.Errorf("bad :diff should explain itself, flash %q", m.flash)
	}
}
