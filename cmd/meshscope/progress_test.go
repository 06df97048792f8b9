package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestProgressNotATerminal: with stderr a buffer or a file (a pipe, CI)
// the progress line writes nothing, and the answer's writer is untouched.
func TestProgressNotATerminal(t *testing.T) {
	var b bytes.Buffer
	p := startProgress(&b, func() string { return "x" })
	if out := p.stopping(&b); out != &b {
		t.Error("stdout wrapped without a terminal")
	}
	p.stop()
	p.stop()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := startProgress(f, func() string { return "x" }); p.w != nil {
		t.Error("a file taken for a terminal")
	}
	if b.Len() != 0 {
		t.Errorf("wrote %q", b.String())
	}
}

func TestSyncStatus(t *testing.T) {
	s := &model.Snapshot{Clusters: []model.Cluster{{ID: "a", State: model.StateSynced}, {ID: "b", State: model.StateConnecting}, {ID: "c", State: model.StateRemoved}}}
	if got, want := syncStatus(s), "clusters 1/2 synced (b connecting)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := syncStatus(nil); got != "reading the kubeconfig's clusters" {
		t.Errorf("nil: %q", got)
	}
}

// TestStreamHealth: a stream is up after a connect or a response, down
// after a failed attempt or a disconnect, with its cause; watch's end
// lists those down.
func TestStreamHealth(t *testing.T) {
	h := newStreamHealth()
	ev := func(vp string, typ xdsclient.EventType, msg string) xdsclient.Event {
		return xdsclient.Event{ControlPlane: "cluster1", Viewpoint: vp, Type: typ, Message: msg}
	}
	h.see(ev("a", xdsclient.EventError, "connection refused"))
	h.see(ev("b", xdsclient.EventError, "connection refused"))
	h.see(ev("b", xdsclient.EventConnect, ""))
	h.see(ev("b", xdsclient.EventType(xdsclient.EDS), ""))
	h.see(ev("c", xdsclient.EventConnect, ""))
	h.see(ev("c", xdsclient.EventDisconnect, "lost the connection"))
	got := h.unread()
	if len(got) != 2 || got[0].Why != "stream a: connection refused" || got[1].Why != "stream c: lost the connection" || got[0].What != model.IncompleteXDS {
		t.Errorf("unread %+v", got)
	}
	if s := h.status(); s != "streams up 1/3 (a on cluster1: connection refused; c on cluster1: lost the connection)" {
		t.Errorf("status %q", s)
	}
}
