package fix

import (
	"fmt"
	"io"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// How fixes read for people: doctor --fix's section, and the header of a
// file --fix-dir writes.

// maxChanges is how many changed service ports a proof lists.
const maxChanges = 3

// WriteText prints every problem's fix: the offered proposals whole (the
// change, what it trades, the proof, how to apply it), a line for each
// proposal whose proof failed or that cannot be built, and the unproven
// ones whole only with all (else counted).
func WriteText(w io.Writer, fixes []Fix, all bool) {
	if len(fixes) == 0 {
		return
	}
	fmt.Fprintln(w, "\nFIXES (each proven by what-if on the mesh as read: the problem gone, no new error-level problem, no service losing every endpoint where a client runs)")
	for i, f := range fixes {
		fmt.Fprintf(w, "\n%d. %s\n", i+1, concerns(f.Problem))
		if f.None != "" {
			fmt.Fprintf(w, "   no mechanical fix: %s\n", f.None)
			continue
		}
		var hidden []Offer
		for _, o := range f.Proposals {
			switch {
			case o.Offered || all:
				writeOffer(w, o)
			case o.Proof != nil || strings.HasPrefix(o.Why, "cannot"):
				fmt.Fprintf(w, "   not offered: %s — %s\n", o.Title, o.Why)
			default:
				hidden = append(hidden, o)
			}
		}
		if len(hidden) > 0 {
			fmt.Fprintf(w, "   %d unproven proposal(s) (%s): --all-fixes shows them\n", len(hidden), hidden[0].Unproven)
		}
	}
}

// concerns names a problem in a line: its kind (with the count of a
// grouped row), what it concerns, and its sentence.
func concerns(p model.Problem) string {
	kind := string(p.Kind)
	if p.Count > 1 {
		kind = fmt.Sprintf("%s ×%d", kind, p.Count)
	}
	var about []string
	if p.Service != "" {
		about = append(about, model.ShortHost(p.Service))
	}
	if p.Cluster != "" {
		about = append(about, p.Cluster)
	}
	if len(about) > 0 {
		kind += " (" + strings.Join(about, ", ") + ")"
	}
	return kind + ": " + p.Sentence
}

func writeOffer(w io.Writer, o Offer) {
	mark := "fix"
	if !o.Offered {
		mark = "not offered"
	}
	fmt.Fprintf(w, "   %s: %s\n", mark, o.Title)
	if !o.Offered && o.Why != "" {
		fmt.Fprintf(w, "     why not: %s\n", o.Why)
	}
	for _, l := range o.changeLines() {
		fmt.Fprintf(w, "     change: %s\n", l)
	}
	if o.Trade != "" {
		fmt.Fprintf(w, "     trades: %s\n", o.Trade)
	}
	if o.Proof != nil {
		for i, l := range o.Proof.Lines() {
			if i == 0 {
				fmt.Fprintf(w, "     proof:  %s\n", l)
			} else {
				fmt.Fprintf(w, "             %s\n", l)
			}
		}
	}
	for _, l := range o.applyLines() {
		fmt.Fprintf(w, "     apply:  %s\n", l)
	}
}

// changeLines say what changes, an edit a line, then the objects
// written (a pod template's edit lands on the workload that owns the pod).
func (o Offer) changeLines() []string {
	var out []string
	var order []string
	byWhat := map[string][]model.ObjectRef{}
	for _, e := range o.Edits {
		k := e.What
		if e.Template {
			k = "template\x00" + k
		}
		if byWhat[k] == nil {
			order = append(order, k)
		}
		byWhat[k] = append(byWhat[k], e.Object)
	}
	for _, k := range order {
		objs := byWhat[k]
		what, template := strings.CutPrefix(k, "template\x00")
		who := objs[0].String()
		switch {
		case template && len(objs) > 1:
			who = "the workloads of " + podsText(objs)
		case template:
			who = "the workload of " + podsText(objs)
		case len(objs) > 1:
			who = fmt.Sprintf("%s and %d more", who, len(objs)-1)
		}
		out = append(out, who+": "+what)
	}
	var names []string
	for _, m := range o.Manifests {
		if m.Shown() && m.Object != nil {
			names = append(names, manifestName(m))
		}
	}
	if len(names) > 0 && len(o.Edits) > 0 && o.Edits[0].Template {
		out = append(out, "objects: "+strings.Join(names, ", "))
	}
	return out
}

// applyLines say how to apply the fix: its command, or kubectl with the
// files written (or where to get them).
func (o Offer) applyLines() []string {
	if o.Command != "" {
		return []string{o.Command}
	}
	if len(o.Files) > 0 {
		var out []string
		for _, f := range o.Files {
			out = append(out, f.apply())
		}
		return out
	}
	if len(o.Manifests) > 0 {
		return []string{"--fix-dir DIR writes its manifests (kubectl replace/create -f and meshscope what-if -f take them)"}
	}
	return nil
}

// Lines are the proof for people: the summary, then each changed service
// port from where, then the new problems.
func (pr *Proof) Lines() []string {
	out := []string{pr.summary()}
	for i, c := range pr.Changes {
		if i == maxChanges {
			out = append(out, fmt.Sprintf("and %d more service port(s)", len(pr.Changes)-maxChanges))
			break
		}
		vps := c.Viewpoints
		more := ""
		if len(vps) > 2 {
			vps, more = vps[:2], fmt.Sprintf(" and %d more", len(c.Viewpoints)-2)
		}
		lost := ""
		if c.Lost {
			lost = " (LOSES EVERY ENDPOINT OR EVERY REMOTE ONE)"
		}
		where := model.ShortHost(c.Service)
		if c.Port != 0 {
			where += fmt.Sprintf(":%d", c.Port)
		}
		out = append(out, fmt.Sprintf("%s from %s%s: %d → %d endpoint(s)%s", where, strings.Join(vps, ", "), more, c.Before, c.After, lost))
	}
	for _, p := range pr.New {
		out = append(out, fmt.Sprintf("new %s %s: %s", p.Severity, p.Kind, p.Sentence))
	}
	return out
}

func manifestName(m Manifest) string {
	u := m.Object
	name := u.GetName()
	if u.GetNamespace() != "" {
		name = u.GetNamespace() + "/" + name
	}
	return u.GetKind() + " " + name + " in " + m.Cluster
}

// Header is the comment at the top of a file --fix-dir writes: what it
// fixes, what it changes, what it trades, what what-if predicted (whatIf:
// the what-if arguments that predict it, every file of the fix), and how
// to apply it (file is the file's own name).
func Header(f Fix, o Offer, m Manifest, file, whatIf string) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		for _, l := range strings.Split(fmt.Sprintf(format, args...), "\n") {
			b.WriteString("# " + l + "\n")
		}
	}
	line("meshscope doctor --fix: fixes %s", concerns(f.Problem))
	line("change: %s", o.Title)
	if o.Trade != "" {
		line("trades: %s", o.Trade)
	}
	if o.Proof != nil {
		line("what-if predicted (meshscope what-if %s): %s", whatIf, strings.Join(o.Proof.Lines(), "\n  "))
	}
	if o.Command != "" {
		line("run: %s", o.Command)
		return b.String()
	}
	line("apply: kubectl %s --context %s -f %s", m.Verb(), orText(m.Context, m.Cluster), file)
	if m.Verb() == "replace" {
		line("(the whole object, as read, with the change: replace, not apply, which would keep a field the change removes)")
	}
	return b.String()
}
