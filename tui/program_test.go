package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestProgram runs the real Bubble Tea program (teatest) at 120×40 with the
// ASCII colour profile: first frame before any snapshot, the snapshot
// arriving through the feed, "/hello" + enter + enter opening helloworld
// with its gateway rewrite, a viewpoint switch, and q.
func TestProgram(t *testing.T) {
	snap := testSnapshot()
	feed := testFeed(snap)
	defer feed.close()
	m, err := New(feed, Options{Theme: "default", Contexts: []string{"kind-cluster1"}, now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	wait("waiting for clusters")
	feed.snaps <- snap
	wait("cluster3")
	tm.Type(":svc")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	wait("HOSTNAME")
	tm.Type("/hello")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	wait("192.168.60.9:15443")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyRight, Text: ""})
	tm.Type("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if final.currentID() != viewService || final.service.host != helloHost || final.service.focus != 1 {
		t.Fatalf("final view %d host %q focus %d", final.currentID(), final.service.host, final.service.focus)
	}
	out := plain(final)
	if !strings.Contains(out, "▌cluster2/network2") {
		t.Fatal("the second viewpoint is not focused")
	}
	golden.RequireEqual(t, out)
}
