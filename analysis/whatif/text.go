package whatif

import (
	"fmt"
	"io"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// WriteText writes a report for people: the summary, at most max changes
// (0: all), the new and resolved problems, what each object did, notes and
// the verdict.
func WriteText(w io.Writer, rep *Report, max int) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("what-if on the mesh as of snapshot %d (%s)\n", rep.SnapshotVersion, rep.SnapshotTime.UTC().Format("2006-01-02 15:04:05Z"))
	if len(rep.Summary) > 0 {
		p("%s\n", rep.Summary[0])
		for _, s := range rep.Summary[1:] {
			p("  %s\n", s)
		}
	}
	if len(rep.Changes) > 0 {
		p("\nENDPOINTS\n")
		shown := rep.Changes
		if max > 0 && len(shown) > max {
			shown = shown[:max]
		}
		for _, c := range shown {
			writeChange(w, c)
		}
		if len(shown) < len(rep.Changes) {
			p("… and %d more (--max 0 or -o json for all)\n", len(rep.Changes)-len(shown))
		}
	}
	writeProblems(w, "NEW PROBLEMS", rep.Problems.New)
	writeProblems(w, "RESOLVED PROBLEMS", rep.Problems.Resolved)
	p("\nOBJECTS\n")
	for _, o := range rep.Objects {
		what := fmt.Sprintf("%s %s %s in %s (%s)", o.Action, o.Kind, o.Name, o.Cluster, o.Origin)
		switch {
		case o.Effect != "" && len(o.Read) > 0:
			p("  %s: %s (read as %s)\n", what, o.Effect, strings.Join(o.Read, ", "))
		case o.Effect != "":
			p("  %s: %s\n", what, o.Effect)
		case len(o.Read) > 0:
			p("  %s: read as %s\n", what, strings.Join(o.Read, ", "))
		default:
			p("  %s: changes nothing meshscope predicts — %s\n", what, o.Unread)
		}
	}
	for _, e := range rep.Settings {
		cp := e.Cluster
		if cp == "" {
			cp = "every control plane"
		}
		p("  istiod setting %s=%s for %s\n", e.Key, e.Value, cp)
	}
	if len(rep.Notes) > 0 {
		p("\nNOTES\n")
		for _, n := range rep.Notes {
			p("  %s\n", n)
		}
	}
	if len(rep.Fail) > 0 {
		p("\nFAIL: %s\n", strings.Join(rep.Fail, "; "))
	}
}

func writeChange(w io.Writer, c ServiceChange) {
	name := c.Service
	if c.Port != 0 {
		name = fmt.Sprintf("%s:%d", c.Service, c.Port)
	}
	mark := ""
	switch {
	case c.LostAll:
		mark = "  LOSES EVERY ENDPOINT"
	case c.LostRemote:
		mark = "  LOSES EVERY REMOTE ENDPOINT"
	}
	fmt.Fprintf(w, "%s  from %s (%s)%s\n", name, c.Where(), c.Proxy, mark)
	if len(c.UnchangedIn) > 0 {
		fmt.Fprintf(w, "  unchanged: in %s\n", strings.Join(c.UnchangedIn, "; in "))
	}
	if c.NoClient && (c.LostAll || c.LostRemote) {
		fmt.Fprintf(w, "  clients: none run where this is seen — reported, not failing --fail-on lost\n")
	}
	fmt.Fprintf(w, "  before: %s\n", joinEndpoints(c.Before))
	fmt.Fprintf(w, "  after:  %s\n", joinEndpoints(c.After))
	for _, e := range c.After {
		if e.HealthWhy != "" {
			fmt.Fprintf(w, "  health: %s\n", e.HealthWhy)
		}
	}
	if s := ShareText(c.SharesBefore, c.SharesAfter); s != "" {
		fmt.Fprintf(w, "  share:  %s\n", s)
	}
	for _, why := range c.Why {
		fmt.Fprintf(w, "  why:    %s\n", why)
	}
}

// ShareText is the networks whose share moves: "network1 66.7% → 100%,
// network2 33.3% → 0%" (the command's text and the UI say it alike).
func ShareText(before, after []Share) string {
	var nets []string
	b, a := map[string]float64{}, map[string]float64{}
	for _, s := range before {
		b[s.Network] = s.Share
		nets = append(nets, s.Network)
	}
	for _, s := range after {
		a[s.Network] = s.Share
		if _, ok := b[s.Network]; !ok {
			nets = append(nets, s.Network)
		}
	}
	var parts []string
	for _, n := range nets {
		if b[n] == a[n] {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s", orNone(n), percent(b[n]), percent(a[n])))
	}
	return strings.Join(parts, ", ")
}

func percent(f float64) string {
	s := fmt.Sprintf("%.1f", f*100)
	return strings.TrimSuffix(s, ".0") + "%"
}

func writeProblems(w io.Writer, title string, ps []model.Problem) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", title)
	for _, p := range ps {
		fmt.Fprintf(w, "  %-7s %-28s %s\n", p.Severity, p.Kind, p.Sentence)
	}
}
