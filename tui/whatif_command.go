package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/model"
)

// ":whatif": its arguments, the run off the update loop and its answer
// (the overlay itself, and how the screens mark it, are in whatif.go).

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
	// failOn are --fail-on's rules the banner judges the answer by
	// (whatif.DefaultFailOn unless given), as a pipeline would.
	failOn []string
}

const whatIfUsage = "usage: :whatif [--delete] FILE|DIR [CLUSTER] [--env [CLUSTER=]KEY=VALUE]… [--fail-on RULES] (FILE may be CLUSTER=FILE), or :whatif off"

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
		case flag == "--fail-on":
			if !inline {
				if i++; i == len(args) {
					return a, errors.New(whatIfUsage)
				}
				value = args[i]
			}
			rules, err := whatif.ParseFailOn([]string{value})
			if err != nil {
				return a, err
			}
			a.failOn = rules
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
func whatIfCmd(seq int, a whatIfArgs, run whatIfFunc) tea.Cmd {
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
		rules := a.failOn
		if rules == nil {
			rules = whatif.DefaultFailOn
		}
		whatif.Judge(rep, rules)
		ov := newOverlay(a.what(), a.cluster, rep)
		ov.failOn = rules
		return whatIfMsg{seq: seq, ov: ov}
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
