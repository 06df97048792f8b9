package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/collector/whatif"
	"github.com/meshscope/meshscope/model"
)

// The what-if overlay (":whatif FILE [CLUSTER]"): a change read from a file,
// answered by collector/whatif off the update loop, and laid over the live
// views — the services it changes marked, a service's endpoints before and
// after per viewpoint, the problems it brings and resolves — until esc or
// ":whatif off" drops it. The live mesh keeps updating underneath; the
// overlay stays the answer for the snapshot it was computed on.

// WhatIfFunc answers a what-if on the mesh the UI reads (whatif.Run on the
// session's Registry); Options.WhatIf.
type WhatIfFunc func(whatif.Request) (*whatif.Report, error)

// whatIfState is the root's what-if: the overlay shown, the run under way
// and the error of the last run.
type whatIfState struct {
	// seq numbers the runs: an answer of an older run (replaced, or
	// dropped while it ran) is thrown away.
	seq int
	// running names what the run under way tries ("" for none).
	running string
	ov      *overlay
	// err is why the last run failed, shown in the status bar until the
	// next key; the overlay before it stays.
	err string
}

// overlay is one what-if's answer as the views show it; immutable once
// built (off the update loop, with the report).
type overlay struct {
	// name is what was tried, as typed (whatIfArgs.what); cluster the
	// cluster the file's objects went to ("" for settings alone).
	name    string
	cluster string
	rep     *whatif.Report
	byHost  map[string]*hostChange
	// hosts are the services that change, sorted; lost counts those that
	// lose every endpoint, or every remote one, from some viewpoint.
	hosts []string
	lost  int
}

// hostChange is what a what-if does to one service: its changes (per
// port and viewpoint, in the report's order) and whether it loses every
// endpoint (or every remote one) from some viewpoint.
type hostChange struct {
	changes             []whatif.ServiceChange
	lostAll, lostRemote bool
}

// lost says whether the service loses every endpoint or every remote
// endpoint from some viewpoint (the rows drawn in the error style).
func (h *hostChange) lost() bool { return h != nil && (h.lostAll || h.lostRemote) }

func newOverlay(name, cluster string, rep *whatif.Report) *overlay {
	o := &overlay{name: name, cluster: cluster, rep: rep, byHost: map[string]*hostChange{}}
	for _, c := range rep.Changes {
		h := o.byHost[c.Service]
		if h == nil {
			h = &hostChange{}
			o.byHost[c.Service] = h
			o.hosts = append(o.hosts, c.Service)
		}
		h.changes = append(h.changes, c)
		h.lostAll = h.lostAll || c.LostAll
		h.lostRemote = h.lostRemote || c.LostRemote
	}
	slices.Sort(o.hosts)
	for _, h := range o.byHost {
		if h.lost() {
			o.lost++
		}
	}
	return o
}

// of is the change of a service (nil: the what-if does not change it, or
// there is no overlay).
func (o *overlay) of(host string) *hostChange {
	if o == nil {
		return nil
	}
	return o.byHost[host]
}

// inIndex counts the changed services that are in the index (the others
// exist only after the change: a ServiceEntry added, say).
func (o *overlay) inIndex(ix *index) int {
	n := 0
	for _, h := range o.hosts {
		if _, ok := ix.byHost[h]; ok {
			n++
		}
	}
	return n
}

// problemsOf are the what-if's new and resolved problems that concern a
// service.
func (o *overlay) problemsOf(host string) (added, resolved []explain.Problem) {
	if o == nil {
		return nil, nil
	}
	concerns := func(p explain.Problem) bool { return p.Service == host || slices.Contains(p.Services, host) }
	for _, p := range o.rep.Problems.New {
		if concerns(p) {
			added = append(added, p)
		}
	}
	for _, p := range o.rep.Problems.Resolved {
		if concerns(p) {
			resolved = append(resolved, p)
		}
	}
	return added, resolved
}

// what names the change: "FILE", "--delete FILE", settings.
func (o *overlay) what() string { return o.name }

// banner is the status bar's mark of the overlay, on every screen, so that
// nobody takes it for the live mesh.
func (o *overlay) banner(escDrops bool) string {
	how := ":whatif off to drop"
	if escDrops {
		how = "esc to drop"
	}
	n := "1 service changes"
	if len(o.hosts) != 1 {
		n = fmt.Sprintf("%d services change", len(o.hosts))
	}
	switch {
	case o.lost == 1:
		n += ", 1 loses endpoints"
	case o.lost > 1:
		n += fmt.Sprintf(", %d lose endpoints", o.lost)
	}
	return fmt.Sprintf("WHAT-IF: %s (%s) — %s", o.what(), n, how)
}

// whatIfMsg is a run's answer: the overlay, or why there is none.
type whatIfMsg struct {
	seq int
	ov  *overlay
	err error
}

// whatIfArgs are ":whatif"'s arguments read: off, or [--delete] FILE
// [CLUSTER] and istiod settings (--env [CLUSTER=]KEY=VALUE, repeatable;
// with them FILE is optional).
type whatIfArgs struct {
	off     bool
	delete  bool
	src     whatif.Source // Path "" for settings alone
	cluster string        // the CLUSTER argument, or the CLUSTER= of FILE
	env     []model.IstiodEnv
}

const whatIfUsage = "usage: :whatif [--delete] FILE [CLUSTER] [--env [CLUSTER=]KEY=VALUE]… (FILE may be CLUSTER=FILE), or :whatif off"

func parseWhatIfArgs(args []string) (whatIfArgs, error) {
	var a whatIfArgs
	if len(args) == 1 && (args[0] == "off" || args[0] == "drop") {
		a.off = true
		return a, nil
	}
	var pos []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		flag, value, inline := strings.Cut(arg, "=")
		switch {
		case arg == "--delete" || arg == "-d":
			a.delete = true
		case flag == "--env" || flag == "--istiod-env":
			if !inline {
				if i++; i == len(args) {
					return a, errors.New(whatIfUsage)
				}
				value = args[i]
			}
			e, err := model.ParseIstiodEnv(value)
			if err != nil {
				return a, err
			}
			a.env = append(a.env, e)
		case strings.HasPrefix(arg, "-") && arg != "-":
			return a, fmt.Errorf("unknown flag %s; %s", arg, whatIfUsage)
		default:
			pos = append(pos, arg)
		}
	}
	if len(pos) > 2 || (len(pos) == 0 && (a.delete || len(a.env) == 0)) {
		return a, errors.New(whatIfUsage)
	}
	if len(pos) == 0 {
		return a, nil // settings alone
	}
	a.src = whatif.ParseSource(expandHome(pos[0]))
	if a.src.Path == "-" {
		return a, errors.New(":whatif reads a file, not stdin (the terminal is the UI's)")
	}
	a.cluster = a.src.Cluster
	if len(pos) == 2 {
		if a.cluster != "" && a.cluster != pos[1] {
			return a, fmt.Errorf(":whatif %s %s: two clusters given", pos[0], pos[1])
		}
		a.cluster = pos[1]
	}
	return a, nil
}

// what names the change for the banner: the file ("--delete FILE"), then
// the settings.
func (a whatIfArgs) what() string {
	var parts []string
	if a.src.Path != "" {
		f := a.src.Path
		if a.delete {
			f = "--delete " + f
		}
		parts = append(parts, f)
	}
	for _, e := range a.env {
		s := e.Key + "=" + e.Value
		if e.Cluster != "" {
			s = e.Cluster + "=" + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " + ")
}

// expandHome reads a leading ~/ as the home directory, as a shell would
// have (the command line is not one).
func expandHome(p string) string {
	c, rest, ok := strings.Cut(p, "=")
	if ok && !strings.HasPrefix(p, "~") {
		return c + "=" + expandHome(rest)
	}
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[2:])
		}
	}
	return p
}

// runWhatIf handles ":whatif": off drops the overlay; a file starts a run
// off the update loop (the answer replaces the overlay; an error leaves it).
func (m *Model) runWhatIf(args []string) tea.Cmd {
	a, err := parseWhatIfArgs(args)
	if err != nil {
		m.whatIfFailed(err.Error())
		return nil
	}
	if a.off {
		if m.wi.ov == nil && m.wi.running == "" {
			m.setFlash("no what-if to drop", false)
			return nil
		}
		m.dropWhatIf()
		return nil
	}
	if m.opts.WhatIf == nil {
		m.whatIfFailed("this UI has no mesh to try changes on (no collector behind its feed)")
		return nil
	}
	snap := m.ix.snap
	if snap == nil {
		m.whatIfFailed("no snapshot yet: wait for the clusters to sync, then :whatif again")
		return nil
	}
	if a.cluster == "" && a.src.Path != "" {
		a.cluster = firstContext(snap)
	}
	clusters := []string{a.cluster}
	for _, e := range a.env {
		clusters = append(clusters, e.Cluster)
	}
	for _, c := range clusters {
		if c != "" && snap.ClusterByID(c) == nil {
			m.whatIfFailed(fmt.Sprintf("no cluster %q in the mesh (clusters: %s)", c, strings.Join(m.ix.clusterIDs, ", ")))
			return nil
		}
	}
	m.wi.seq++
	m.wi.running, m.wi.err = a.what(), ""
	return whatIfCmd(m.wi.seq, a, m.opts.WhatIf)
}

// whatIfCmd reads the file and answers the what-if in the background: it
// takes up to a few hundred milliseconds on a big mesh.
func whatIfCmd(seq int, a whatIfArgs, run WhatIfFunc) tea.Cmd {
	return func() tea.Msg {
		var objs []whatif.Object
		if a.src.Path != "" {
			var err error
			if objs, err = whatif.Read([]whatif.Source{a.src}, a.cluster, strings.NewReader("")); err != nil {
				return whatIfMsg{seq: seq, err: err}
			}
		}
		rep, err := run(whatif.Request{Objects: objs, Delete: a.delete, Env: a.env})
		if err != nil {
			return whatIfMsg{seq: seq, err: err}
		}
		return whatIfMsg{seq: seq, ov: newOverlay(a.what(), a.cluster, rep)}
	}
}

// onWhatIf takes a run's answer.
func (m *Model) onWhatIf(msg whatIfMsg) {
	if msg.seq != m.wi.seq {
		return // replaced or dropped while it ran
	}
	m.wi.running = ""
	if msg.err != nil {
		// The errors name the file (and line) themselves.
		// (whatif.Read speaks of -f, the command's flag: not typed here.)
		m.whatIfFailed("what-if failed, nothing changed: " + strings.TrimPrefix(msg.err.Error(), "-f "))
		return
	}
	// No flash: the banner says it, and the header has no room for the
	// report's summary next to the title.
	m.wi.ov, m.wi.err = msg.ov, ""
	m.refreshAll(update{whatIf: true})
}

// whatIfFailed shows why a what-if did not run; nothing else changes.
func (m *Model) whatIfFailed(why string) {
	m.wi.err = why
	m.flash = ""
	m.refreshAll(update{}) // a long error takes lines of the body
}

// dropWhatIf removes the overlay (and forgets a run under way).
func (m *Model) dropWhatIf() {
	m.wi = whatIfState{seq: m.wi.seq + 1}
	m.refreshAll(update{whatIf: true})
	m.setFlash("what-if dropped: the live mesh", false)
}

// escDropsWhatIf says whether esc, on the screen shown, drops the overlay:
// only once it has nothing else to do (no filter to clear, no view to go
// back from), so that esc still walks back from a service to the marked
// list.
func (m *Model) escDropsWhatIf() bool {
	if f, ok := m.current().(filterable); ok && f.filterQuery() != "" {
		return false
	}
	return len(m.stack) == 1
}

// whatIfStatus is the status bar's what-if item: the banner, the run under
// way, or the last run's error ("" for none); isErr marks the error.
func (m *Model) whatIfStatus() (text string, isErr bool) {
	switch {
	case m.wi.err != "":
		return m.wi.err, true
	case m.wi.running != "":
		return "what-if: running " + m.wi.running + "…", false
	case m.wi.ov != nil:
		return m.wi.ov.banner(m.escDropsWhatIf()), false
	}
	return "", false
}

// firstContext is the ID of the mesh's first context cluster, the what-if's
// default cluster as it is the command's.
func firstContext(snap *model.Snapshot) string {
	for i := range snap.Clusters {
		if snap.Clusters[i].IsContext() {
			return snap.Clusters[i].ID
		}
	}
	if len(snap.Clusters) > 0 {
		return snap.Clusters[0].ID
	}
	return ""
}
