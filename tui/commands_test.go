package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestComplete: a prefix completes to the one command it starts, or stays.
func TestComplete(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"a prefix of one name", "prob", "problems"},
		{"a prefix of several", "pro", "pro"},
		{"proxies", "prox", "proxies"},
		{"one letter", "e", "events"},
		{"an alias's prefix", "s", "svc"},
		{"two letters", "cl", "clusters"},
		{"nothing", "", ""},
		{"no command", "x", "x"},
		{"quit", "q", "quit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := complete(c.in); got != c.want {
				t.Errorf("complete(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestCommandCompletion(t *testing.T) {
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

// TestCommandTable: completion, the "?" help, the hints and the errors are
// all derived from commandTable, so they cannot disagree.
func TestCommandTable(t *testing.T) {
	m := goldenModel(t, "default", 160, 40)
	press(m, "?")
	help := plain(m)
	press(m, "esc")
	for i := range commandTable {
		c := &commandTable[i]
		if got, ok := lookupCommand(c.name); !ok || got != c {
			t.Errorf("%s does not look itself up", c.name)
		}
		for _, a := range c.aliases {
			if got, ok := lookupCommand(a); !ok || got != c {
				t.Errorf("alias %s does not lead to %s", a, c.name)
			}
		}
		if !strings.Contains(help, c.usage()) || !strings.Contains(help, c.help) {
			t.Errorf("help does not list %s:\n%s", c.usage(), help)
		}
		if !contains(completions(""), c.name) {
			t.Errorf("%s is not offered", c.name)
		}
	}
	// An unknown command names every command there is.
	m.runCommand("nope")
	for _, name := range commandNames() {
		if !strings.Contains(m.flash, name) {
			t.Errorf("unknown-command error %q does not offer %s", m.flash, name)
		}
	}
	// "p" is ambiguous (pc, problems): not a command.
	if _, ok := lookupCommand("p"); ok {
		t.Error(`"p" resolved to a command`)
	}
	// Arguments are checked against the table.
	m.runCommand("svc extra")
	if m.flash != ":svc takes no arguments" {
		t.Errorf(":svc extra: flash %q", m.flash)
	}
	m.runCommand("pc")
	if !strings.Contains(m.flash, "usage: :pc A [B]") {
		t.Errorf(":pc: flash %q", m.flash)
	}
	// Tab after a command that takes viewpoints leaves room for them, and
	// the hint then lists them.
	press(m, ":")
	typeText(m, "di")
	press(m, "tab")
	if string(m.input) != "diff " {
		t.Fatalf("tab completed %q", string(m.input))
	}
	if out := plain(m); !strings.Contains(out, ":diff A B · viewpoints: cluster1/network1 cluster2/network2") {
		t.Errorf("no viewpoint hint:\n%s", out)
	}
}
