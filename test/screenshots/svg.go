// Package screenshots renders meshscope's terminal UI, driven in tmux on the
// demo mesh, into SVG files for the docs (go test with
// MESHSCOPE_SCREENSHOTS=1, or make screenshots). Test tooling only.
package screenshots

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// cell is one terminal cell's style.
type style struct {
	fg, bg string
	bold   bool
}

// ansiToSVG turns a tmux capture (capture-pane -e -p: text with SGR escape
// sequences) into an SVG of a terminal of cols×rows cells.
func ansiToSVG(capture string, cols, rows int, fg, bg string) string {
	const cw, lh = 8.4, 17.0
	var b strings.Builder
	w, h := float64(cols)*cw+20, float64(rows)*lh+20
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" rx="6" fill="%s"/>`+"\n", bg)
	fmt.Fprintf(&b, `<g font-family="ui-monospace,SFMono-Regular,Menlo,Consolas,monospace" font-size="14px" xml:space="preserve">`+"\n")
	lines := strings.Split(strings.TrimRight(capture, "\n"), "\n")
	for y, line := range lines {
		if y >= rows {
			break
		}
		cur := style{}
		x := 0
		var run strings.Builder
		runStart, runStyle := 0, cur
		flush := func() {
			if run.Len() == 0 {
				return
			}
			text := run.String()
			n := len([]rune(text))
			px, py := 10+float64(runStart)*cw, 10+float64(y)*lh
			if runStyle.bg != "" {
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", px, py, float64(n)*cw, lh, runStyle.bg)
			}
			if strings.TrimSpace(text) != "" {
				col := runStyle.fg
				if col == "" {
					col = fg
				}
				weight := ""
				if runStyle.bold {
					weight = ` font-weight="bold"`
				}
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s"%s>%s</text>`+"\n", px, py+13, col, weight, html.EscapeString(text))
			}
			run.Reset()
		}
		for i := 0; i < len(line); {
			if line[i] == 0x1b && i+1 < len(line) && line[i+1] == '[' {
				j := i + 2
				for j < len(line) && (line[j] < '@' || line[j] > '~') {
					j++
				}
				if j < len(line) && line[j] == 'm' {
					flush()
					cur = applySGR(cur, line[i+2:j])
					runStart, runStyle = x, cur
				}
				i = j + 1
				continue
			}
			r, size := decodeRune(line[i:])
			run.WriteRune(r)
			x++
			i += size
		}
		flush()
	}
	b.WriteString("</g>\n</svg>\n")
	return b.String()
}

func decodeRune(s string) (rune, int) {
	for i, r := range s {
		if i == 0 {
			return r, len(string(r))
		}
	}
	return 0, 1
}

func applySGR(st style, params string) style {
	if params == "" {
		return style{}
	}
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		n, _ := strconv.Atoi(ps[i])
		switch {
		case n == 0:
			st = style{}
		case n == 1:
			st.bold = true
		case n == 22:
			st.bold = false
		case n == 7: // reverse: swap (approximate with the default colors)
			st.fg, st.bg = st.bg, st.fg
		case n >= 30 && n <= 37:
			st.fg = xterm(n - 30)
		case n >= 90 && n <= 97:
			st.fg = xterm(n - 90 + 8)
		case n >= 40 && n <= 47:
			st.bg = xterm(n - 40)
		case n >= 100 && n <= 107:
			st.bg = xterm(n - 100 + 8)
		case n == 39:
			st.fg = ""
		case n == 49:
			st.bg = ""
		case (n == 38 || n == 48) && i+2 < len(ps) && ps[i+1] == "5":
			c, _ := strconv.Atoi(ps[i+2])
			if n == 38 {
				st.fg = xterm(c)
			} else {
				st.bg = xterm(c)
			}
			i += 2
		case (n == 38 || n == 48) && i+4 < len(ps) && ps[i+1] == "2":
			r, _ := strconv.Atoi(ps[i+2])
			g, _ := strconv.Atoi(ps[i+3])
			bl, _ := strconv.Atoi(ps[i+4])
			c := fmt.Sprintf("#%02x%02x%02x", r, g, bl)
			if n == 38 {
				st.fg = c
			} else {
				st.bg = c
			}
			i += 4
		}
	}
	return st
}

// xterm maps an xterm 256-colour index to RGB.
func xterm(n int) string {
	base := []string{"#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
		"#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff"}
	switch {
	case n < 0:
		return ""
	case n < 16:
		return base[n]
	case n < 232:
		n -= 16
		v := func(i int) int {
			if i == 0 {
				return 0
			}
			return 55 + i*40
		}
		return fmt.Sprintf("#%02x%02x%02x", v(n/36), v(n/6%6), v(n%6))
	case n < 256:
		g := 8 + (n-232)*10
		return fmt.Sprintf("#%02x%02x%02x", g, g, g)
	}
	return ""
}
