package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/themes"
	"github.com/meshscope/meshscope/xdsclient"
)

// Minimum terminal size.
const (
	minWidth  = 80
	minHeight = 24
)

// viewID names a view. Views are fields of Model, not entries of a
// string-keyed map: the compiler knows every view.
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
)

// screen is what every view implements. Views get the root model for
// shared state (index, styles, clock, feed); they own their cursor, filter
// and scroll state.
type screen interface {
	// title names the view in the header.
	title(m *Model) string
	// key handles a key press; handled false lets the root try it.
	key(m *Model, k tea.KeyPressMsg) (tea.Cmd, bool)
	// render draws the body in exactly w×h cells.
	render(m *Model, w, h int) string
	// refresh is called after the index, events or size changed.
	refresh(m *Model)
	// scroll moves by delta rows (mouse wheel).
	scroll(m *Model, delta int)
	// filterQuery and setFilter implement "/"; setFilter is only called
	// when filterable is true.
	filterable() bool
	filterQuery() string
	setFilter(m *Model, q string)
}

type inputMode int

const (
	inputNone inputMode = iota
	inputCommand
	inputFilter
)

// commands are the names ":" completes, in completion order.
var commands = []string{"clusters", "compare", "diff", "events", "pc", "problems", "quit", "svc"}

// aliases map what k9s users type to commands.
var aliases = map[string]string{
	"cl": "clusters", "cluster": "clusters", "ctx": "clusters",
	"services": "svc", "service": "svc", "s": "svc",
	"ev": "events", "event": "events",
	"pb": "problems", "problem": "problems", "doctor": "problems",
	"q": "quit", "q!": "quit", "exit": "quit",
}

// Model is the root Bubble Tea model.
type Model struct {
	feed Feed
	opts Options
	now  func() time.Time

	width, height int

	themeName string
	isDark    bool
	st        themes.Styles

	snap     *collector.Snapshot // latest received
	ix       *index              // derived from snap (or an earlier one while deriving)
	deriving bool
	dirty    bool
	// verdictsStale: an EDS push arrived since the index was built.
	verdictsStale bool

	stack    []viewID
	clusters *clustersView
	services *servicesView
	service  *serviceView
	problems *problemsView
	events   *eventsView
	compare  *serviceView
	diff     *diffView
	config   *configView

	mode     inputMode
	input    []rune
	prevText string // filter text before "/" (restored by esc)

	showHelp bool
	help     help.Model
	keys     keyMap

	flash    string
	flashErr bool

	status   []StreamStatus
	lastPush time.Time

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
	m.ix = buildIndex(nil, nil)
	m.stack = []viewID{viewClusters}
	m.clusters = &clustersView{}
	m.services = &servicesView{}
	m.service = &serviceView{}
	m.problems = &problemsView{}
	m.events = newEventsView()
	m.compare = &serviceView{}
	m.diff = &diffView{}
	m.config = &configView{}
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

// Messages.
type (
	snapshotMsg        struct{ snap *collector.Snapshot }
	snapshotsClosedMsg struct{}
	eventsMsg          struct{ events []xdsclient.Event }
	eventsClosedMsg    struct{}
	indexMsg           struct{ ix *index }
	tickMsg            time.Time
)

// maxEventBatch bounds how many queued events one message carries.
const maxEventBatch = 512

func waitSnapshot(ch <-chan *collector.Snapshot) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		s, ok := <-ch
		if !ok {
			return snapshotsClosedMsg{}
		}
		for { // latest wins: skip snapshots already superseded
			select {
			case s2, ok := <-ch:
				if !ok {
					return snapshotMsg{s}
				}
				s = s2
			default:
				return snapshotMsg{s}
			}
		}
	}
}

func waitEvents(ch <-chan xdsclient.Event) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		e, ok := <-ch
		if !ok {
			return eventsClosedMsg{}
		}
		evs := []xdsclient.Event{e}
		for len(evs) < maxEventBatch {
			select {
			case e, ok := <-ch:
				if !ok {
					return eventsMsg{evs}
				}
				evs = append(evs, e)
			default:
				return eventsMsg{evs}
			}
		}
		return eventsMsg{evs}
	}
}

func (m *Model) nextSnapshot() tea.Cmd {
	if m.feed == nil {
		return nil
	}
	return waitSnapshot(m.feed.Snapshots())
}

func (m *Model) nextEvents() tea.Cmd {
	if m.feed == nil {
		return nil
	}
	return waitEvents(m.feed.Events())
}

func deriveCmd(snap *collector.Snapshot, feed Feed) tea.Cmd {
	return func() tea.Msg { return indexMsg{buildIndex(snap, feed)} }
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
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

func (m *Model) current() screen {
	switch m.stack[len(m.stack)-1] {
	case viewServices:
		return m.services
	case viewService:
		return m.service
	case viewProblems:
		return m.problems
	case viewEvents:
		return m.events
	case viewCompare:
		return m.compare
	case viewDiff:
		return m.diff
	case viewConfig:
		return m.config
	}
	return m.clusters
}

func (m *Model) currentID() viewID { return m.stack[len(m.stack)-1] }

// push opens a view; a view already on the stack is returned to instead of
// stacked twice.
func (m *Model) push(id viewID) {
	for i, v := range m.stack {
		if v == id {
			m.stack = m.stack[:i+1]
			m.current().refresh(m)
			return
		}
	}
	m.stack = append(m.stack, id)
	m.current().refresh(m)
}

func (m *Model) back() {
	if len(m.stack) > 1 {
		m.stack = m.stack[:len(m.stack)-1]
		m.current().refresh(m)
	}
}

// bodyHeight is the number of lines views draw in: the terminal less the
// header, the status bar and the input line when one is open.
func (m *Model) bodyHeight() int {
	h := m.height - 2
	if m.mode != inputNone {
		h--
	}
	return max(h, 1)
}

func (m *Model) refreshAll() {
	m.clusters.refresh(m)
	m.services.refresh(m)
	m.problems.refresh(m)
	m.service.refresh(m)
	m.events.refresh(m)
	m.compare.refresh(m)
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
	return deriveCmd(m.snap, m.feed)
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.refreshAll()
		return m, nil
	case tea.BackgroundColorMsg:
		dark := msg.IsDark()
		if dark != m.isDark {
			m.isDark = dark
			if err := m.loadTheme(m.themeName); err != nil {
				m.setFlash(err.Error(), true)
			}
		}
		return m, nil
	case snapshotMsg:
		m.snap = msg.snap
		return m, tea.Batch(m.requestDerive(), m.nextSnapshot())
	case snapshotsClosedMsg:
		m.snapsClosed = true
		return m, nil
	case indexMsg:
		m.deriving = false
		m.ix = msg.ix
		m.refreshAll()
		var cmd tea.Cmd
		if m.dirty {
			cmd = m.requestDerive()
		}
		return m, cmd
	case eventsMsg:
		eds, config := false, false
		for _, e := range msg.events {
			switch e.Type {
			case "eds":
				eds = true
			case "cds", "lds", "rds":
				config = true
			}
			if !e.Time.IsZero() && e.Time.After(m.lastPush) && isPush(e.Type) {
				m.lastPush = e.Time
			}
		}
		m.events.add(m, msg.events)
		if m.feed != nil {
			m.status = m.feed.Status()
		}
		// :pc subscribes LDS/RDS when it opens: they arrive after it.
		if config && m.config.a != "" {
			m.config.refresh(m)
		}
		if eds {
			m.service.refresh(m)
			// The services' verdicts depend on the actual EDS; they are
			// recomputed on the next tick, at most once a second.
			m.verdictsStale = true
		}
		return m, m.nextEvents()
	case eventsClosedMsg:
		m.eventsClosed = true
		return m, nil
	case tickMsg:
		if m.feed != nil {
			m.status = m.feed.Status()
		}
		var cmd tea.Cmd
		if m.verdictsStale {
			m.verdictsStale = false
			cmd = m.requestDerive()
		}
		return m, tea.Batch(cmd, tick())
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.current().scroll(m, -3)
		case tea.MouseWheelDown:
			m.current().scroll(m, 3)
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

func isPush(t xdsclient.EventType) bool {
	switch t {
	case "cds", "eds", "lds", "rds":
		return true
	}
	return false
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
	cur := m.current()
	if cmd, handled := cur.key(m, k); handled {
		return cmd
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		return tea.Quit
	case key.Matches(k, m.keys.Help):
		m.showHelp = true
	case key.Matches(k, m.keys.Command):
		m.mode, m.input = inputCommand, nil
		m.refreshAll()
	case key.Matches(k, m.keys.Filter):
		if m.currentID() == viewClusters {
			// From the first screen, / searches services: "which service?"
			// is the usual first question, and clusters are few.
			m.push(viewServices)
			cur = m.current()
		}
		if cur.filterable() {
			m.mode = inputFilter
			m.prevText = cur.filterQuery()
			m.input = []rune(m.prevText)
			m.refreshAll()
		}
	case key.Matches(k, m.keys.Back):
		if cur.filterable() && cur.filterQuery() != "" {
			cur.setFilter(m, "")
		} else {
			m.back()
		}
	case key.Matches(k, m.keys.Theme):
		next := themes.Next(themes.Names(), m.themeName)
		if err := m.loadTheme(next); err != nil {
			m.setFlash(err.Error(), true)
		}
	}
	return nil
}

// inputKey edits the command or filter line.
func (m *Model) inputKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		if m.mode == inputFilter {
			m.current().setFilter(m, m.prevText)
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
	m.refreshAll()
}

func (m *Model) inputChanged() {
	if m.mode == inputFilter {
		m.current().setFilter(m, string(m.input))
	}
}

// completions lists the commands that start with prefix.
func completions(prefix string) []string {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	var out []string
	for _, c := range commands {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// complete extends a command prefix: to the command when one matches, to
// the longest common prefix when several do.
func complete(prefix string) string {
	cs := completions(prefix)
	switch len(cs) {
	case 0:
		return prefix
	case 1:
		return cs[0]
	}
	common := cs[0]
	for _, c := range cs[1:] {
		for !strings.HasPrefix(c, common) {
			common = common[:len(common)-1]
		}
	}
	if len(common) > len(strings.TrimSpace(prefix)) {
		return common
	}
	return prefix
}

func (m *Model) runCommand(text string) tea.Cmd {
	if text == "" {
		return nil
	}
	fields := strings.Fields(text)
	name := strings.ToLower(fields[0])
	if a, ok := aliases[name]; ok {
		name = a
	}
	if !contains(commands, name) {
		if cs := completions(name); len(cs) == 1 {
			name = cs[0]
		}
	}
	switch name {
	case "clusters":
		m.push(viewClusters)
	case "svc":
		m.push(viewServices)
	case "problems":
		m.push(viewProblems)
	case "events":
		m.push(viewEvents)
	case "compare":
		return m.openCompare(fields[1:])
	case "diff":
		return m.openDiff(fields[1:])
	case "pc":
		return m.openConfig(fields[1:])
	case "quit":
		return tea.Quit
	default:
		m.setFlash(fmt.Sprintf("unknown command %q (try %s)", text, strings.Join(commands, ", ")), true)
	}
	return nil
}

// completeLine completes the command name, or for :compare the viewpoint
// being typed.
func (m *Model) completeLine(line string) string {
	fields := strings.Fields(line)
	if len(fields) == 0 || (len(fields) == 1 && !strings.HasSuffix(line, " ")) {
		c := complete(line)
		if c == "compare" || c == "diff" || c == "pc" {
			c += " "
		}
		return c
	}
	if aliases[fields[0]] != "compare" && fields[0] != "compare" && fields[0] != "diff" && fields[0] != "pc" {
		return line
	}
	prefix := ""
	if !strings.HasSuffix(line, " ") {
		prefix = fields[len(fields)-1]
		fields = fields[:len(fields)-1]
	}
	var cs []string
	for _, n := range m.viewpointNames() {
		if strings.HasPrefix(n, prefix) {
			cs = append(cs, n)
		}
	}
	if len(cs) == 1 {
		return strings.Join(append(fields, cs[0]), " ") + " "
	}
	return line
}

func (m *Model) viewpointNames() []string {
	var out []string
	for _, vp := range viewpointsFor(m.feed, m.ix.snap) {
		out = append(out, vp.String())
	}
	return out
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
		msg := fmt.Sprintf("terminal too small (need %d×%d, have %d×%d)", minWidth, minHeight, m.width, m.height)
		lines := wrap(msg, max(m.width, 1))
		return padLines(lines, max(m.width, 0), max(m.height, 0))
	}
	w := m.width
	var b strings.Builder
	b.WriteString(m.header(w))
	b.WriteByte('\n')
	h := m.bodyHeight()
	if m.showHelp {
		b.WriteString(m.helpBody(w, h))
	} else {
		b.WriteString(m.current().render(m, w, h))
	}
	b.WriteByte('\n')
	if m.mode != inputNone {
		b.WriteString(m.inputLine(w))
		b.WriteByte('\n')
	}
	b.WriteString(m.statusBar(w))
	return b.String()
}

func (m *Model) header(w int) string {
	title := m.current().title(m)
	if m.showHelp {
		title = "Help"
	}
	left := " meshscope │ " + title
	right := ""
	switch {
	case m.flash != "":
		right = m.flash + " "
	default:
		right = "? help  : command  / filter  q quit "
	}
	lw := ansi.StringWidth(left)
	rw := ansi.StringWidth(right)
	if lw+rw+1 > w {
		if m.flash == "" {
			right, rw = "", 0 // the key hints give way to the title
		} else {
			right = ansi.Truncate(right, max(w-20, 0), "…")
			rw = ansi.StringWidth(right)
		}
	}
	left = fit(left, max(w-rw, 0))
	rst := m.st.Muted
	if m.flash != "" {
		rst = m.st.Warn
		if m.flashErr {
			rst = m.st.Error
		}
	}
	return m.st.Header.Render(left) + rst.Render(right)
}

func (m *Model) inputLine(w int) string {
	prompt := "/"
	hint := ""
	if m.mode == inputCommand {
		prompt = ":"
		if strings.Contains(string(m.input), " ") {
			hint = "  viewpoints: " + strings.Join(m.viewpointNames(), " ")
		} else if cs := completions(string(m.input)); len(cs) > 0 && len(m.input) > 0 {
			hint = "  " + strings.Join(cs, " ") + "  (tab completes)"
		} else if len(m.input) == 0 {
			hint = "  " + strings.Join(commands, " ")
		}
	}
	text := prompt + string(m.input) + "█"
	return m.st.Accent.Render(fit(text, min(ansi.StringWidth(text), w))) + m.st.Muted.Render(fit(hint, max(w-ansi.StringWidth(text), 0)))
}

func (m *Model) helpBody(w, h int) string {
	m.help.SetWidth(w - 2)
	full := m.help.FullHelpView(m.keys.FullHelp())
	lines := []string{""}
	for _, l := range strings.Split(full, "\n") {
		lines = append(lines, " "+l)
	}
	lines = append(lines, "", m.st.Muted.Render(" Views: :clusters (first screen), :svc, :problems, :events. Any key closes help."))
	return padLines(lines, w, h)
}

func (m *Model) statusBar(w int) string {
	var left, right []string
	if len(m.opts.Contexts) > 0 {
		left = append(left, "ctx "+strings.Join(m.opts.Contexts, ","))
	}
	if m.ix.snap == nil {
		left = append(left, "waiting for clusters…")
	} else {
		left = append(left, fmt.Sprintf("clusters %d/%d synced", m.ix.synced, len(m.ix.clusterIDs)))
	}
	if len(m.status) > 0 {
		ok := 0
		var bad []string
		for _, s := range m.status {
			if s.State == xdsclient.StateConnected && !s.Stale {
				ok++
				continue
			}
			st := s.Text()
			if s.Stale {
				st += ",stale"
			}
			bad = append(bad, s.Viewpoint+" "+st)
		}
		t := fmt.Sprintf("xds %d/%d up", ok, len(m.status))
		if len(bad) > 0 {
			t += " (" + strings.Join(bad, "; ") + ")"
		}
		left = append(left, t)
	}
	last := m.lastPush
	for _, s := range m.status {
		if s.LastPush.After(last) {
			last = s.LastPush
		}
	}
	if !last.IsZero() {
		right = append(right, "push "+age(m.now(), last)+" ago")
	}
	if m.events.paused {
		right = append(right, "events paused")
	}
	right = append(right, "theme "+m.themeName)
	r := strings.Join(right, " │ ") + " "
	rw := ansi.StringWidth(r)
	if rw > w-20 {
		return m.st.StatusBar.Render(fit(" "+strings.Join(append(left, right...), " │ "), w))
	}
	return m.st.StatusBar.Render(fit(" "+strings.Join(left, " │ "), w-rw) + r)
}

// stateStyle colours a cluster or stream state.
func (m *Model) stateStyle(state string) lipgloss.Style {
	switch state {
	case string(collector.StateSynced), string(xdsclient.StateConnected):
		return m.st.OK
	case string(collector.StateSyncing), string(collector.StateConnecting), string(xdsclient.StateIdle):
		return m.st.Warn
	case string(collector.StateError), string(collector.StateTimeout), string(xdsclient.StateDisconnected):
		return m.st.Error
	}
	return m.st.Muted
}

// sel returns st for a selected row (with the selection background).
func (m *Model) sel(st lipgloss.Style, selected bool) lipgloss.Style {
	if selected {
		return st.Inherit(m.st.Selection)
	}
	return st
}
