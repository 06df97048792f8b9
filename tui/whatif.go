package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/model"
)

// The what-if overlay (":whatif FILE [CLUSTER]"): a change read from a file,
// answered by analysis/whatif off the update loop, and laid over the live
// views — the services it changes marked, a service's endpoints before and
// after per viewpoint, the problems it brings and resolves — until esc or
// ":whatif off" drops it. The live mesh keeps updating underneath; the
// overlay stays the answer for the snapshot it was computed on.

// whatIfFunc answers a what-if on the mesh the UI reads (live.WhatIf on the
// session's Registry); Options.WhatIf.
type whatIfFunc = func(whatif.Request) (*whatif.Report, error)

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
	// failOn are the rules rep.Fail was judged by (whatif.Judge).
	failOn []string
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
func (o *overlay) problemsOf(host string) (added, resolved []model.Problem) {
	if o == nil {
		return nil, nil
	}
	concerns := func(p model.Problem) bool { return p.Service == host || slices.Contains(p.Services, host) }
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
	// The verdict a pipeline would get (--fail-on's default rules): new
	// errors first.
	errs := 0
	for _, p := range o.rep.Problems.New {
		if p.Severity == model.SeverityError {
			errs++
		}
	}
	switch {
	case errs == 1:
		n += ", 1 new error"
	case errs > 1:
		n += fmt.Sprintf(", %d new errors", errs)
	}
	// Nothing changes for any proxy: say why, from the first object that
	// changes nothing (a Deployment that owns no live pod, a kind istiod
	// does not read) — the command prints every object; here it is the
	// banner's only answer.
	if len(o.hosts) == 0 && len(o.rep.Problems.New) == 0 {
		for _, ob := range o.rep.Objects {
			if ob.Unread != "" {
				n += fmt.Sprintf("; %s %s: %s", ob.Kind, ob.Name, ob.Unread)
				break
			}
		}
	}
	// What a pipeline running `meshscope what-if --fail-on RULES` would
	// get: said only when it fails.
	if len(o.rep.Fail) > 0 {
		n += "; FAILS --fail-on " + strings.Join(o.failOn, ",")
	}
	return fmt.Sprintf("WHAT-IF: %s (%s) — %s", o.what(), n, how)
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
