package tui

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// fit truncates s to width w (display cells, with an ellipsis) and pads it
// with spaces to exactly w cells. s must be plain text.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// fitRight is fit, aligned right.
func fitRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		return fit(s, w)
	}
	return strings.Repeat(" ", w-sw) + s
}

// cell renders plain text s in a cell of width w with style st.
func cell(s string, w int, st lipgloss.Style) string {
	return st.Render(fit(s, w))
}

// highlight renders s in a cell of width w, with the runes at the given
// rune positions (sorted) in style hl and the others in style base. Text
// past the width is cut with an ellipsis; positions beyond the cut are not
// shown.
func highlight(s string, w int, runePos []int, base, hl lipgloss.Style) string {
	if len(runePos) == 0 {
		return cell(s, w, base)
	}
	full := ansi.StringWidth(s)
	limit := w
	if full > w {
		limit = w - 1 // room for the ellipsis
	}
	var out, run strings.Builder
	runHL := false
	flush := func() {
		if run.Len() == 0 {
			return
		}
		if runHL {
			out.WriteString(hl.Render(run.String()))
		} else {
			out.WriteString(base.Render(run.String()))
		}
		run.Reset()
	}
	used, ri, pi := 0, 0, 0
	for _, r := range s {
		rw := ansi.StringWidth(string(r))
		if used+rw > limit {
			break
		}
		for pi < len(runePos) && runePos[pi] < ri {
			pi++
		}
		isHL := pi < len(runePos) && runePos[pi] == ri
		if isHL != runHL {
			flush()
			runHL = isHL
		}
		run.WriteRune(r)
		used += rw
		ri++
	}
	if full > w {
		if runHL {
			flush()
			runHL = false
		}
		run.WriteString("…")
		used++
	}
	if used < w {
		if runHL {
			flush()
			runHL = false
		}
		run.WriteString(strings.Repeat(" ", w-used))
	}
	flush()
	return out.String()
}

// runePositions converts byte offsets into s (as sahilm/fuzzy reports
// matches) into rune positions, so highlighting works for any Unicode.
func runePositions(s string, byteIdx []int) []int {
	if len(byteIdx) == 0 {
		return nil
	}
	out := make([]int, 0, len(byteIdx))
	ri, bi := 0, 0
	for _, b := range byteIdx {
		if b < bi {
			continue // not sorted or inside a rune already counted
		}
		ri += utf8.RuneCountInString(s[bi:min(b, len(s))])
		bi = min(b, len(s))
		if bi >= len(s) {
			break
		}
		out = append(out, ri)
		_, size := utf8.DecodeRuneInString(s[bi:])
		bi += size
		ri++
	}
	return out
}

// age renders how long ago t was: 5s, 3m, 2h, 4d; "-" for never.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// column is one column of a table: a title and a width (0: flexible,
// sharing the free space in proportion to grow, at least 1).
type column struct {
	title string
	w     int
	right bool
	grow  int
}

// layoutColumns gives flexible columns (w == 0) the space left in width,
// in proportion to their grow, each at least minFlex cells; columns are
// separated by one space and prefixed by a one-cell cursor mark.
func layoutColumns(cols []column, width, minFlex int) []column {
	out := append([]column(nil), cols...)
	fixed, weight := 1, 0
	for i, c := range out {
		if i > 0 {
			fixed++
		}
		if c.w == 0 {
			weight += max(c.grow, 1)
		} else {
			fixed += c.w
		}
	}
	if weight == 0 {
		return out
	}
	left := width - fixed
	given := 0
	last := -1
	for i := range out {
		if out[i].w == 0 {
			out[i].w = max(left*max(out[i].grow, 1)/weight, minFlex)
			given += out[i].w
			last = i
		}
	}
	if left > given && last >= 0 {
		out[last].w += left - given
	}
	return out
}

// headerLine renders the titles of cols.
func headerLine(cols []column, st lipgloss.Style, width int) string {
	var b strings.Builder
	b.WriteString(" ")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(" ")
		}
		if c.right {
			b.WriteString(fitRight(c.title, c.w))
		} else {
			b.WriteString(fit(c.title, c.w))
		}
	}
	return st.Render(fit(b.String(), width))
}

// rowLine joins pre-rendered cells into a row with the cursor mark; sel
// styles the separators of a selected row.
func rowLine(cells []string, selected bool, sel lipgloss.Style, width int, used int) string {
	var b strings.Builder
	sep := " "
	mark := " "
	if selected {
		mark = ">"
		sep = sel.Render(" ")
		b.WriteString(sel.Render(mark))
	} else {
		b.WriteString(mark)
	}
	for i, c := range cells {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(c)
	}
	if pad := width - used; pad > 0 {
		if selected {
			b.WriteString(sel.Render(strings.Repeat(" ", pad)))
		} else {
			b.WriteString(strings.Repeat(" ", pad))
		}
	}
	return b.String()
}

// rowWidth is the width rowLine's cells take for cols.
func rowWidth(cols []column) int {
	w := 1
	for i, c := range cols {
		if i > 0 {
			w++
		}
		w += c.w
	}
	return w
}

// padLines makes text exactly h lines of exactly w cells (cut or padded).
func padLines(lines []string, w, h int) string {
	var b strings.Builder
	for i := 0; i < h; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(lines) {
			l := lines[i]
			lw := ansi.StringWidth(l)
			if lw > w {
				l = ansi.Truncate(l, w, "")
				lw = ansi.StringWidth(l)
			}
			b.WriteString(l)
			if lw < w {
				b.WriteString(strings.Repeat(" ", w-lw))
			}
		} else {
			b.WriteString(strings.Repeat(" ", w))
		}
	}
	return b.String()
}

// wrap breaks plain text into lines of at most w cells, at spaces where it can.
func wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		words := strings.Fields(para)
		cur := ""
		for _, word := range words {
			for ansi.StringWidth(word) > w {
				if cur != "" {
					lines = append(lines, cur)
					cur = ""
				}
				head := ansi.Truncate(word, w, "")
				lines = append(lines, head)
				word = word[len(head):]
			}
			switch {
			case cur == "":
				cur = word
			case ansi.StringWidth(cur)+1+ansi.StringWidth(word) <= w:
				cur += " " + word
			default:
				lines = append(lines, cur)
				cur = word
			}
		}
		if cur != "" || len(words) == 0 {
			lines = append(lines, cur)
		}
	}
	return lines
}
