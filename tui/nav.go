package tui

import tea "charm.land/bubbletea/v2"

// Navigation messages: a view asks the root to go somewhere by returning
// one of these (through navigate); only the root moves between views or
// touches another view's state.
type (
	// openServiceMsg opens the service view on a hostname (and selects it
	// in the services list, clearing a filter that hides it).
	openServiceMsg struct{ host string }
	// openCompareMsg opens the side-by-side compare of two viewpoints
	// (by name) for a hostname.
	openCompareMsg struct {
		host string
		pair []string
	}
	// selectClusterMsg opens the clusters view on a cluster.
	selectClusterMsg struct{ id string }
	// selectProblemMsg opens the problems view on a problem (by problemKey).
	selectProblemMsg struct{ key string }
	// flashMsg shows a sentence in the header until the next key.
	flashMsg struct {
		text  string
		isErr bool
	}
)

// navigate is the command that delivers a navigation message.
func navigate(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// flash is the command that shows a sentence in the header.
func flash(text string, isErr bool) tea.Cmd { return navigate(flashMsg{text, isErr}) }

// navigation handles a navigation message; ok is false for any other
// message.
func (m *Model) navigation(msg tea.Msg) (ok bool) {
	switch msg := msg.(type) {
	case openServiceMsg:
		m.openService(msg.host)
	case openCompareMsg:
		m.compare.open(m.vc(), msg.host, msg.pair)
		m.push(viewCompare)
	case selectClusterMsg:
		m.push(viewClusters)
		m.clusters.selectCluster(m.vc(), msg.id)
	case selectProblemMsg:
		m.push(viewProblems)
		m.problems.selectKey(m.vc(), msg.key)
	case flashMsg:
		m.setFlash(msg.text, msg.isErr)
	default:
		return false
	}
	return true
}

// openService opens the service view on a hostname.
func (m *Model) openService(host string) {
	m.services.selectHost(m.vc(), host)
	m.service.open(m.vc(), host, nil)
	m.push(viewService)
}

// The stack of open views: the root alone moves between them.

func (m *Model) currentID() viewID { return m.stack[len(m.stack)-1] }

func (m *Model) current() view { return m.views[m.currentID()] }

// push opens a view; a view already on the stack is returned to instead of
// stacked twice.
func (m *Model) push(id viewID) {
	for i, v := range m.stack {
		if v == id {
			m.stack = m.stack[:i+1]
			m.current().refresh(m.vc(), update{})
			return
		}
	}
	m.stack = append(m.stack, id)
	m.current().refresh(m.vc(), update{})
}

func (m *Model) back() {
	if len(m.stack) > 1 {
		m.stack = m.stack[:len(m.stack)-1]
		m.current().refresh(m.vc(), update{})
	}
}
