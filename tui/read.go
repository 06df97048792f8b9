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

func waitSnapshot(ch <-chan *collector.Snapshot) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		s, ok := <-ch
		if !ok {
			return snapshotsClosedMsg{}
		}
		for { // latest wins: skip snapshots already superseded
			select {
			case s2, ok := <-ch:
				if !ok {
					return snapshotMsg{s}
				}
				s = s2
			default:
				return snapshotMsg{s}
			}
		}
	}
}

func waitEvents(ch <-chan xdsclient.Event) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		e, ok := <-ch
		if !ok {
			return eventsClosedMsg{}
		}
		evs := []xdsclient.Event{e}
		for len(evs) < maxEventBatch {
			select {
			case e, ok := <-ch:
				if !ok {
					return eventsMsg{evs}
				}
				evs = append(evs, e)
			default:
				return eventsMsg{evs}
			}
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
