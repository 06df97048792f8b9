package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/xdsclient"
)

// Messages from the feed and the background work.
type (
	snapshotMsg        struct{ snap *collector.Snapshot }
	snapshotsClosedMsg struct{}
	eventsMsg          struct{ events []xdsclient.Event }
	eventsClosedMsg    struct{}
	// indexMsg is a derived index, with the kube changes since the
	// snapshot derived before it.
	indexMsg struct {
		ix   *index
		kube []collector.KubeChange
	}
	tickMsg time.Time
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

func waitSnapshot(ch <-chan *collector.Snapshot) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		var s *collector.Snapshot
		// Latest wins: skip snapshots already superseded.
		if receive(ch, func(x *collector.Snapshot) bool { s = x; return true }) {
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
func deriveCmd(prev, snap *collector.Snapshot, feed Feed) tea.Cmd {
	return func() tea.Msg {
		return indexMsg{ix: buildIndex(snap, feed), kube: kubeChanges(prev, snap)}
	}
}

// kubeChanges are the changes from prev to next worth a timeline entry.
func kubeChanges(prev, next *collector.Snapshot) []collector.KubeChange {
	if prev == nil || prev == next || !prev.Settled() {
		return nil
	}
	return collector.DiffSnapshots(prev, next)
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}
