package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// openInput opens the command line (":") or the filter line ("/") of the
// current view.
func (m *Model) openInput(mode inputMode) {
	m.mode, m.input = mode, nil
	if f, ok := m.current().(filterable); ok && mode == inputFilter {
		m.prevText = f.filterQuery()
		m.input = []rune(m.prevText)
	}
	m.refreshAll(update{}) // the body lost a line
}

// inputKey edits the command or filter line.
func (m *Model) inputKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		if f, ok := m.current().(filterable); ok && m.mode == inputFilter {
			f.setFilter(m.vc(), m.prevText)
		}
		m.closeInput()
		return nil
	case "enter":
		text := strings.TrimSpace(string(m.input))
		mode := m.mode
		m.closeInput()
		if mode == inputCommand {
			return m.runCommand(text)
		}
		return nil
	case "backspace", "ctrl+h":
		if len(m.input) > 0 {
			m.input = m.input[:len(m.input)-1]
			m.inputChanged()
		} else if m.mode == inputCommand {
			m.closeInput()
		}
		return nil
	case "ctrl+u":
		m.input = nil
		m.inputChanged()
		return nil
	case "ctrl+w":
		s := strings.TrimRight(string(m.input), " ")
		if i := strings.LastIndexAny(s, " ./-"); i >= 0 {
			m.input = []rune(s[:i])
		} else {
			m.input = nil
		}
		m.inputChanged()
		return nil
	case "tab":
		if m.mode == inputCommand {
			m.input = []rune(m.completeLine(string(m.input)))
		}
		return nil
	}
	if k.Text != "" && k.Mod&^tea.ModShift == 0 {
		m.input = append(m.input, []rune(k.Text)...)
		m.inputChanged()
	}
	return nil
}

func (m *Model) closeInput() {
	m.mode, m.input = inputNone, nil
	m.refreshAll(update{}) // the body got its line back
}

func (m *Model) inputChanged() {
	if f, ok := m.current().(filterable); ok && m.mode == inputFilter {
		f.setFilter(m.vc(), string(m.input))
	}
}

func (m *Model) inputLine(w int) string {
	prompt := "/"
	hint := ""
	if m.mode == inputCommand {
		prompt = ":"
		hint = m.commandHint(string(m.input))
	}
	text := prompt + string(m.input) + "█"
	return m.st.Accent.Render(fit(text, min(ansi.StringWidth(text), w))) + m.st.Muted.Render(fit(hint, max(w-ansi.StringWidth(text), 0)))
}
