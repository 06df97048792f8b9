package meshmap

import (
	"fmt"
	"io"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// Dot writes the map in Graphviz's dot language: each network a subgraph
// box (Graphviz draws subgraphs named cluster_* as boxes) holding its
// clusters and gateways, each control plane a node with an edge to every
// cluster it reads — dashed and red where the arrow is broken — and the
// problems on each box or arrow in its label (`dot -Tsvg` draws it).
func Dot(w io.Writer, m Map) error {
	var b strings.Builder
	b.WriteString("digraph mesh {\n")
	b.WriteString("  compound=true;\n  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	for ni, n := range m.Networks {
		name, title := n.Name, "network "+n.Name
		if name == "" {
			title = "no network"
		}
		fmt.Fprintf(&b, "  subgraph %s {\n", quote(fmt.Sprintf("cluster_net%d", ni)))
		fmt.Fprintf(&b, "    label=%s;\n", quote(label(title, n.Problems)))
		for _, c := range n.Clusters {
			lines := []string{c.ID, string(c.State)}
			if c.Mode != "" {
				lines[1] += " · " + c.Mode
			}
			if c.Primary {
				lines = append(lines, "istiod")
			}
			attrs := ""
			if e, _ := Counts(c.Problems); e > 0 {
				attrs = ", color=red"
			}
			fmt.Fprintf(&b, "    %s [label=%s%s];\n", quote("cluster:"+c.ID), quote(label(strings.Join(lines, "\n"), c.Problems)), attrs)
		}
		for gi, g := range n.Gateways {
			attrs := ", shape=cds"
			if !g.Healthy {
				attrs += ", color=red"
			}
			fmt.Fprintf(&b, "    %s [label=%s%s];\n", quote(fmt.Sprintf("gateway:%s:%d", name, gi)), quote(label("gateway "+g.Address+"\n"+g.Health, g.Problems)), attrs)
		}
		b.WriteString("  }\n")
	}
	for _, cp := range m.ControlPlanes {
		text := "istiod " + cp.ID
		if !cp.Known {
			text += "\n(reads: unknown)"
		}
		fmt.Fprintf(&b, "  %s [shape=hexagon, label=%s];\n", quote("istiod:"+cp.ID), quote(label(text, cp.Problems)))
		fmt.Fprintf(&b, "  %s -> %s [style=dotted, arrowhead=none];\n", quote("istiod:"+cp.ID), quote("cluster:"+cp.ID))
		for _, a := range cp.Arrows {
			attrs := ""
			if a.Broken {
				attrs = fmt.Sprintf(", style=dashed, color=red, arrowhead=tee, label=%s", quote(label("✗ "+a.Why, a.Problems)))
			} else if len(a.Problems) > 0 {
				attrs = fmt.Sprintf(", label=%s", quote(label("", a.Problems)))
			}
			fmt.Fprintf(&b, "  %s -> %s [%s];\n", quote("istiod:"+cp.ID), quote("cluster:"+a.To), strings.TrimPrefix(attrs, ", "))
		}
	}
	if len(m.Problems) > 0 {
		fmt.Fprintf(&b, "  %s [shape=note, label=%s];\n", quote("mesh"), quote(label("mesh-wide", m.Problems)))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// label is text followed by the problems' kinds, one line each (a kind
// repeated is counted once, with how many).
func label(text string, ps []model.Problem) string {
	lines := []string{}
	if text != "" {
		lines = append(lines, text)
	}
	lines = append(lines, ProblemKinds(ps)...)
	return strings.Join(lines, "\n")
}

// ProblemKinds lists the problems' kinds with their severity, in the
// order met, a kind repeated once with how many ("error drop ×3").
func ProblemKinds(ps []model.Problem) []string {
	var order []string
	n := map[string]int{}
	for _, p := range ps {
		k := string(p.Severity) + " " + string(p.Kind)
		if n[k] == 0 {
			order = append(order, k)
		}
		n[k] += max(p.Count, 1)
	}
	out := make([]string, len(order))
	for i, k := range order {
		if n[k] > 1 {
			k += fmt.Sprintf(" ×%d", n[k])
		}
		out[i] = k
	}
	return out
}

// quote is a dot ID in double quotes (backslash and quote escaped;
// newlines as dot's \n).
func quote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	s = strings.ReplaceAll(s, "\n", `\n`)
	return `"` + s + `"`
}
