package tui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/internal/uiprobe"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/themes"
	"github.com/meshscope/meshscope/xdsclient"
)

// Minimum terminal size.
const (
	minWidth  = 80
	minHeight = 24
)

// viewID names a view. Views are fields of Model (and entries of an array
// indexed by viewID), not entries of a string-keyed map: the compiler
// knows every view.
type viewID int

const (
	viewClusters viewID = iota
	viewServices
	viewService
	viewProblems
	viewEvents
	viewCompare
	viewDiff
	viewConfig
	viewProxies
	viewMap
	numViews
)

type inputMode int

const (
	inputNone inputMode = iota
	inputCommand
	inputFilter
)

// Model is the root Bubble Tea model. It owns the shared state every view
// reads through a viewContext, the stack of open views, the command line
// and the chrome (header, status bar, help); it alone moves between views.
type Model struct {
	feed Feed
	opts Options
	now  func() time.Time

	width, height int

	themeName string
	isDark    bool
	st        themes.Styles

	doc      *doctor         // the diagnoses of this run
	snap     *model.Snapshot // latest received
	ix       *index          // derived from snap (or an earlier one while deriving)
	deriving bool
	dirty    bool
	// verdictsStale: an EDS push arrived since the index was built.
	verdictsStale bool
	// staleSeen names the viewpoints whose stream was down at the last
	// tick: when the set changes, the verdicts (marked stale or not) are
	// derived again — no snapshot need come (kube may be quiet).
	staleSeen string

	stack    []viewID
	views    [numViews]view // every view, by viewID: refreshed in one loop
	clusters *clustersView
	services *servicesView
	service  *serviceView
	problems *problemsView
	events   *eventsView
	compare  *serviceView
	diff     *diffView
	config   *configView
	proxies  *proxiesView
	mapv     *mapView
	// fleet is the mesh's real proxies and the map, built in the
	// background from the index and the feed's syncz reads (fleet.go).
	fleet fleetState
	// wi is the what-if laid over the views (whatif.go); fx the problems'
	// fixes proven so far (fix.go).
	wi whatIfState
	fx fixState

	mode     inputMode
	input    []rune
	prevText string // filter text before "/" (restored by esc)

	showHelp bool
	help     help.Model
	keys     keyMap

	flash    string
	flashErr bool

	status   []xdsclient.StreamStatus
	lastPush time.Time
	// waitingSince is when the UI last stopped being settled (zero: it is
	// settled); past settleHint the status bar says what it waits for.
	waitingSince time.Time

	snapsClosed, eventsClosed bool
}

// New builds the root model. It fails only when the theme cannot be loaded.
func New(feed Feed, opts Options) (*Model, error) {
	m := &Model{feed: feed, opts: opts, now: time.Now, isDark: true, keys: defaultKeys(), help: help.New()}
	if opts.now != nil {
		m.now = opts.now
	}
	m.themeName = opts.Theme
	if m.themeName == "" {
		m.themeName = themes.Default
	}
	if err := m.loadTheme(m.themeName); err != nil {
		return nil, err
	}
	m.doc = newDoctor(m.now)
	m.waitingSince = m.now() // nothing is known yet
	m.ix = buildIndex(nil, nil, nil)
	m.stack = []viewID{viewClusters}
	m.clusters = newClustersView()
	m.services = newServicesView()
	m.service = &serviceView{}
	m.problems = newProblemsView()
	m.events = newEventsView()
	m.compare = &serviceView{}
	m.diff = newDiffView()
	m.config = &configView{}
	m.proxies = newProxiesView()
	m.mapv = &mapView{}
	m.views = [numViews]view{
		viewClusters: m.clusters, viewServices: m.services, viewService: m.service, viewProblems: m.problems,
		viewEvents: m.events, viewCompare: m.compare, viewDiff: m.diff, viewConfig: m.config,
		viewProxies: m.proxies, viewMap: m.mapv,
	}
	// Until the terminal reports its size, draw for the smallest one.
	m.width, m.height = minWidth, minHeight
	return m, nil
}

func (m *Model) loadTheme(name string) error {
	t, err := themes.Load(name, m.isDark)
	if err != nil {
		return err
	}
	m.themeName = name
	m.st = themes.NewStyles(t)
	m.help.Styles = help.Styles{
		ShortKey:       m.st.Accent,
		ShortDesc:      m.st.Muted,
		ShortSeparator: m.st.Border,
		Ellipsis:       m.st.Muted,
		FullKey:        m.st.Accent,
		FullDesc:       m.st.Text,
		FullSeparator:  m.st.Border,
	}
	return nil
}

// vc is the context views read: built afresh for every call.
func (m *Model) vc() viewContext {
	return viewContext{ix: m.ix, st: &m.st, keys: &m.keys, feed: m.feed, now: m.now, status: m.status,
		width: m.width, height: m.bodyHeight(), fleet: m.fleet.fx, wi: m.wi.ov, fx: &m.fx}
}

// Init starts reading the feed, the clock, and asks the terminal for its
// background colour (for the default theme).
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor, tick()}
	if m.feed != nil {
		cmds = append(cmds, m.nextSnapshot(), m.nextEvents())
		m.status = m.feed.Status()
	}
	return tea.Batch(cmds...)
}

// bodyHeight is the number of lines views draw in: the terminal less the
// header, the status bar and the input line when one is open.
func (m *Model) bodyHeight() int {
	h := m.height - 1 - m.statusHeight()
	if m.mode != inputNone {
		h--
	}
	return max(h, 1)
}

// refreshAll tells every view what changed, in one loop: no view is left
// out, open or not.
func (m *Model) refreshAll(u update) {
	vc := m.vc()
	for _, v := range m.views {
		v.refresh(vc, u)
	}
}

// requestDerive recomputes the index from the latest snapshot in the
// background; one derivation runs at a time, later requests coalesce.
func (m *Model) requestDerive() tea.Cmd {
	if m.snap == nil {
		return nil
	}
	if m.deriving {
		m.dirty = true
		return nil
	}
	m.deriving, m.dirty = true, false
	return deriveCmd(m.ix.snap, m.snap, m.feed, m.doc)
}

// derived ends a derivation: the next one starts if something changed
// meanwhile.
func (m *Model) derived() tea.Cmd {
	m.deriving = false
	if m.dirty {
		return m.requestDerive()
	}
	return nil
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.navigation(msg) || m.onFleet(msg) {
		return m, nil
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.refreshAll(update{})
		return m, nil
	case tea.BackgroundColorMsg:
		dark := msg.IsDark()
		if dark != m.isDark {
			m.isDark = dark
			if err := m.loadTheme(m.themeName); err != nil {
				m.setFlash(err.Error(), true)
			}
			m.refreshAll(update{})
		}
		return m, nil
	case snapshotMsg:
		m.snap = msg.snap
		return m, tea.Batch(m.requestDerive(), m.nextSnapshot())
	case snapshotsClosedMsg:
		m.snapsClosed = true
		return m, nil
	case indexMsg:
		m.ix = msg.ix
		m.refreshAll(update{index: true, entries: kubeEntries(msg.kube)})
		if h := uiprobe.Get(); h != nil && h.IndexApplied != nil {
			h.IndexApplied(m.ix.snap, len(m.ix.services), m.ix.verdictsKnown())
		}
		if pause := pauseAfter(msg.took); pause != nil {
			// Still deriving, as far as new requests go: they wait.
			return m, pause
		}
		return m, m.derived()
	case deriveAgainMsg:
		return m, m.derived()
	case whatIfMsg:
		m.onWhatIf(msg)
		return m, nil
	case fixWantMsg, fixMsg:
		return m, m.onFix(msg)
	case eventsMsg:
		return m, m.onEvents(msg.events)
	case eventsClosedMsg:
		m.eventsClosed = true
		return m, nil
	case tickMsg:
		if m.feed != nil {
			m.status = m.feed.Status()
		}
		m.noteWaiting()
		if k := staleKey(m.status); k != m.staleSeen {
			m.staleSeen, m.verdictsStale = k, true
		}
		var cmd tea.Cmd
		if m.verdictsStale {
			m.verdictsStale = false
			cmd = m.requestDerive()
		}
		return m, tea.Batch(cmd, m.requestFleet(), m.tickFix(), tick())
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.current().scroll(m.vc(), -3)
		case tea.MouseWheelDown:
			m.current().scroll(m.vc(), 3)
		}
		return m, nil
	case tea.PasteMsg:
		if m.mode != inputNone {
			m.input = append(m.input, []rune(strings.ReplaceAll(msg.Content, "\n", " "))...)
			m.inputChanged()
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	}
	return m, nil
}

// onEvents takes a batch of xDS events: onto the timeline, and to the
// views that show what the pushes changed.
func (m *Model) onEvents(evs []xdsclient.Event) tea.Cmd {
	u := update{entries: make([]entry, len(evs))}
	for i := range evs {
		e := &evs[i]
		u.entries[i] = entry{xds: e}
		switch xdsclient.Type(e.Type) {
		case xdsclient.EDS:
			u.eds = true
		case xdsclient.WDS:
			u.wds = true
		case xdsclient.CDS, xdsclient.LDS, xdsclient.RDS:
			u.config = true
		default:
			continue
		}
		if e.Time.After(m.lastPush) {
			m.lastPush = e.Time
		}
	}
	if m.feed != nil {
		m.status = m.feed.Status()
	}
	m.refreshAll(u)
	if h := uiprobe.Get(); h != nil && h.EventsApplied != nil {
		h.EventsApplied(evs)
	}
	if u.eds || u.wds {
		// The services' verdicts depend on the actual EDS and WDS; they
		// are recomputed on the next tick, at most once a second.
		m.verdictsStale = true
	}
	return m.nextEvents()
}

func (m *Model) setFlash(s string, isErr bool) { m.flash, m.flashErr = s, isErr }

func (m *Model) handleKey(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		return tea.Quit
	}
	if m.mode != inputNone {
		return m.inputKey(k)
	}
	m.flash = ""
	if m.wi.err != "" {
		m.wi.err = ""
		m.refreshAll(update{}) // the status bar may give lines back
	}
	if m.showHelp {
		// Any key closes help; q and ctrl+c still quit.
		m.showHelp = false
		if key.Matches(k, m.keys.Quit) {
			return tea.Quit
		}
		return nil
	}
	if m.width < minWidth || m.height < minHeight {
		if key.Matches(k, m.keys.Quit) {
			return tea.Quit
		}
		return nil
	}
	if cmd, handled := m.current().key(m.vc(), k); handled {
		return cmd
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		return tea.Quit
	case key.Matches(k, m.keys.Help):
		m.showHelp = true
	case key.Matches(k, m.keys.Command):
		m.openInput(inputCommand)
	case key.Matches(k, m.keys.Filter):
		if m.currentID() == viewClusters {
			// From the first screen, / searches services: "which service?"
			// is the usual first question, and clusters are few.
			m.push(viewServices)
		}
		if _, ok := m.current().(filterable); ok {
			m.openInput(inputFilter)
		}
	case key.Matches(k, m.keys.Back):
		switch f, ok := m.current().(filterable); {
		case ok && f.filterQuery() != "":
			f.setFilter(m.vc(), "")
		case m.escDropsWhatIf() && (m.wi.ov != nil || m.wi.running != ""):
			m.dropWhatIf()
		default:
			m.back()
		}
	case key.Matches(k, m.keys.Theme):
		next := themes.Next(themes.Names(), m.themeName)
		if err := m.loadTheme(next); err != nil {
			m.setFlash(err.Error(), true)
		}
		m.refreshAll(update{})
	}
	return nil
}

// View draws the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "meshscope"
	return v
}

func (m *Model) render() string {
	if m.width < minWidth || m.height < minHeight {
		return m.tooSmall()
	}
	w := m.width
	var b strings.Builder
	b.WriteString(m.header(w))
	b.WriteByte('\n')
	h := m.bodyHeight()
	if m.showHelp {
		b.WriteString(m.helpBody(w, h))
	} else {
		b.WriteString(m.current().render(m.vc(), w, h))
	}
	b.WriteByte('\n')
	if m.mode != inputNone {
		b.WriteString(m.inputLine(w))
		b.WriteByte('\n')
	}
	b.WriteString(m.statusBar(w))
	return b.String()
}
