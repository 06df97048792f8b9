package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/analysis/fix"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/model"
)

// A problem's fix in the UI: the problems view plans it at once
// (analysis/fix, pure) and asks the root to prove it — built from the live
// objects and run through what-if by Options.Fix (live.Fix on the
// session's Registry), off the update loop, one at a time — for the
// selected problem; f lays the first proven proposal over the mesh as a
// what-if (the overlay of whatif.go), as :whatif of its files would.

// fixFunc builds and proves the fix of a problem on the mesh the UI reads.
type fixFunc = func(model.Problem) fix.Fix

// fixState is the root's proofs: those done, by problemKey, the one under
// way and the one asked for meanwhile (the latest wins).
type fixState struct {
	done    map[string]*provenFix
	running string
	pending *fixWantMsg
}

// provenFix is a problem's fix as built and proven on snapshot version.
type provenFix struct {
	f       fix.Fix
	version uint64
}

// fixWantMsg is a view asking for the proof of a problem's fix; lay lays
// its first proven proposal over the mesh once it is there.
type fixWantMsg struct {
	p   model.Problem
	lay bool
}

// fixMsg is a proof's answer.
type fixMsg struct {
	key     string
	f       fix.Fix
	version uint64
	lay     bool
}

// wantFix is the command that asks the root for p's proof.
func wantFix(p model.Problem, lay bool) tea.Cmd {
	return func() tea.Msg { return fixWantMsg{p: p, lay: lay} }
}

// onFix handles the proofs' messages: a wish starts a proof unless one is
// done or under way (then it waits, the latest wish wins); an answer is
// kept, laid over the mesh when asked, and starts the waiting wish.
func (m *Model) onFix(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case fixWantMsg:
		k := problemKey(msg.p)
		if d := m.fx.done[k]; d != nil {
			if msg.lay {
				m.layFix(d)
			}
			return nil
		}
		if m.opts.Fix == nil || m.ix.snap == nil {
			if msg.lay {
				m.whatIfFailed("this UI has no mesh to try a fix on (no collector behind its feed)")
			}
			return nil
		}
		if m.fx.running != "" {
			if m.fx.running != k || msg.lay {
				m.fx.pending = &msg
			}
			return nil
		}
		m.fx.running = k
		run, version := m.opts.Fix, m.ix.snap.Version
		return func() tea.Msg { return fixMsg{key: k, f: run(msg.p), version: version, lay: msg.lay} }
	case fixMsg:
		if m.fx.done == nil {
			m.fx.done = map[string]*provenFix{}
		}
		d := &provenFix{f: msg.f, version: msg.version}
		m.fx.done[msg.key] = d
		m.fx.running = ""
		lay := msg.lay || (m.fx.pending != nil && m.fx.pending.lay && problemKey(m.fx.pending.p) == msg.key)
		if lay {
			m.layFix(d)
		}
		m.refreshAll(update{})
		if next := m.fx.pending; next != nil {
			m.fx.pending = nil
			return m.onFix(*next)
		}
	}
	return nil
}

// layFix lays a fix's first proven proposal over the mesh, as a what-if
// of its objects would.
func (m *Model) layFix(d *provenFix) {
	o := d.f.Best()
	if o == nil || o.Proof == nil || o.Proof.Report == nil {
		m.whatIfFailed("no proven fix to lay over the mesh for this problem")
		return
	}
	cluster := ""
	if len(o.Manifests) > 0 {
		cluster = o.Manifests[0].Cluster
	}
	m.wi.seq++
	m.wi.running, m.wi.err = "", ""
	ov := newOverlay("fix: "+o.Title, cluster, o.Proof.Report)
	ov.failOn = whatif.DefaultFailOn
	m.wi.ov = ov
	m.refreshAll(update{whatIf: true})
}

// fixWanter is a view that wants a proof (the problems view: its selected
// problem's), asked on every tick.
type fixWanter interface {
	wantedFix(vc viewContext) (model.Problem, bool)
}

// tickFix asks for the current view's wanted proof when none runs.
func (m *Model) tickFix() tea.Cmd {
	w, ok := m.current().(fixWanter)
	if !ok || m.fx.running != "" || m.opts.Fix == nil {
		return nil
	}
	p, ok := w.wantedFix(m.vc())
	if !ok || m.fx.done[problemKey(p)] != nil {
		return nil
	}
	return wantFix(p, false)
}
