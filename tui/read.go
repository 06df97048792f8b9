package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Messages from the feed and the background work.
type (
	snapshotMsg        struct{ snap *model.Snapshot }
	snapshotsClosedMsg struct{}
	eventsMsg          struct{ events []xdsclient.Event }
	eventsClosedMsg    struct{}
	// indexMsg is a derived index, with the kube changes since the
	// snapshot derived before it.
	indexMsg struct {
		ix   *index
		kube []model.KubeChange
		// took is how long the derivation ran.
		took time.Duration
	}
	// deriveAgainMsg ends the pause after a long derivation.
	deriveAgainMsg struct{}
	tickMsg        time.Time
)

// maxEventBatch bounds how many queued events one message carries.
const maxEventBatch = 512

// receive waits for a value on ch, then takes the values already queued
// for as long as more says; closed reports that ch was closed before any
// value (a close after some is seen by the next receive).
func receive[T any](ch <-chan T, more func(T) bool) (closed bool) {
	v, ok := <-ch
	if !ok {
		return true
	}
	for more(v) {
		select {
		case v, ok = <-ch:
			if !ok {
				return false
			}
		default:
			return false
		}
	}
	return false
}

func waitSnapshot(ch <-chan *model.Snapshot) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		var s *model.Snapshot
		// Latest wins: skip snapshots already superseded.
		if receive(ch, func(x *model.Snapshot) bool { s = x; return true }) {
			return snapshotsClosedMsg{}
		}
		return snapshotMsg{s}
	}
}

func waitEvents(ch <-chan xdsclient.Event) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		var evs []xdsclient.Event
		if receive(ch, func(e xdsclient.Event) bool { evs = append(evs, e); return len(evs) < maxEventBatch }) {
			return eventsClosedMsg{}
		}
		return eventsMsg{evs}
	}
}

func (m *Model) nextSnapshot() tea.Cmd {
	if m.feed == nil {
		return nil
	}
	return waitSnapshot(m.feed.Snapshots())
}

func (m *Model) nextEvents() tea.Cmd {
	if m.feed == nil {
		return nil
	}
	return waitEvents(m.feed.Events())
}

// deriveCmd builds the index of snap off the update loop, with the kube
// changes since prev (the snapshot derived before). The initial sync is
// not news: changes count only once prev had settled.
func deriveCmd(prev, snap *model.Snapshot, feed Feed, doc *doctor) tea.Cmd {
	return func() tea.Msg {
		start := time.Now()
		ix := buildIndex(snap, feed, doc)
		return indexMsg{ix: ix, kube: kubeChanges(prev, snap), took: time.Since(start)}
	}
}

// quickDerive is how long a derivation may run and be followed at once by
// the next one. A longer one (a mesh of thousands of services: doctor's
// diagnosis predicts every service from every viewpoint) is followed by a
// pause as long, so that under constant change the UI's background work
// takes at most about half a core.
const quickDerive = 100 * time.Millisecond

// pauseAfter is the pause before the next derivation.
func pauseAfter(took time.Duration) tea.Cmd {
	if took <= quickDerive {
		return nil
	}
	return tea.Tick(took, func(time.Time) tea.Msg { return deriveAgainMsg{} })
}

// kubeChanges are the changes from prev to next worth a timeline entry.
func kubeChanges(prev, next *model.Snapshot) []model.KubeChange {
	if prev == nil || prev == next || !prev.Settled() {
		return nil
	}
	return model.DiffSnapshots(prev, next)
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}
