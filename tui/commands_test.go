package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestCommandCompletion(t *testing.T) {
	for in, want := range map[string]string{"pro": "problems", "e": "events", "s": "svc", "cl": "clusters", "": "", "x": "x", "q": "quit"} {
		if got := complete(in); got != want {
			t.Errorf("complete(%q) = %q, want %q", in, got, want)
		}
	}
	m := goldenModel(t, "default", 120, 40)
	press(m, ":")
	typeText(m, "ev")
	if out := plain(m); !strings.Contains(out, ":ev█") || !strings.Contains(out, "events") {
		t.Fatalf("command line not shown:\n%s", out)
	}
	press(m, "tab")
	if string(m.input) != "events" {
		t.Fatalf("tab completed to %q", string(m.input))
	}
	press(m, "enter")
	if m.currentID() != viewEvents || m.mode != inputNone {
		t.Fatalf("view %d, mode %d", m.currentID(), m.mode)
	}
	press(m, ":")
	typeText(m, "nope")
	press(m, "enter")
	if !strings.Contains(plain(m), "unknown command") {
		t.Fatal("unknown command not reported")
	}
	// k9s aliases.
	press(m, ":")
	typeText(m, "pb")
	press(m, "enter")
	if m.currentID() != viewProblems {
		t.Fatalf(":pb opened view %d", m.currentID())
	}
	// esc leaves command mode without running anything.
	press(m, ":")
	typeText(m, "svc")
	press(m, "esc")
	if m.currentID() != viewProblems || m.mode != inputNone {
		t.Fatal("esc ran the command")
	}
	// :q quits.
	press(m, ":")
	typeText(m, "q")
	_, cmd := m.Update(keyMsg("enter"))
	if cmd == nil {
		t.Fatal(":q did nothing")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal(":q did not quit")
	}
}
