package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// command is one ":" command. The table below is the only list of
// commands: completion, the hints of the command line, the "?" help and the
// errors for a bad command are all derived from it.
type command struct {
	name    string
	aliases []string // what k9s users type
	// args is the usage of the arguments ("A B", "A [B]"), "" for none;
	// minArgs and maxArgs bound their number. Every argument is a
	// viewpoint (a name, or a unique part of one: a network, a cluster).
	args             string
	minArgs, maxArgs int
	// raw: the arguments are taken as typed (a file, a cluster), not
	// resolved to viewpoints; tab completes file paths.
	raw  bool
	help string
	// run carries the command out with the arguments resolved to
	// viewpoint names.
	run func(m *Model, args []string) tea.Cmd
}

// usage is how the command is typed: ":diff A B".
func (c *command) usage() string {
	if c.args == "" {
		return ":" + c.name
	}
	return ":" + c.name + " " + c.args
}

// takesViewpoints says whether the command's arguments are viewpoints
// (completed from the feed's viewpoints).
func (c *command) takesViewpoints() bool { return c.maxArgs > 0 && !c.raw }

// takesArgs says whether the command takes arguments of any kind.
func (c *command) takesArgs() bool { return c.maxArgs > 0 }

// commandTable lists the commands in completion order.
var commandTable = []command{
	{name: "clusters", aliases: []string{"cl", "cluster", "ctx"}, help: "clusters, networks and gateways (the first screen)",
		run: func(m *Model, _ []string) tea.Cmd { m.push(viewClusters); return nil }},
	{name: "compare", args: "A B", minArgs: 2, maxArgs: 2, help: "the selected service side by side from two viewpoints",
		run: (*Model).openCompare},
	{name: "diff", args: "A B", minArgs: 2, maxArgs: 2, help: "the services where two viewpoints reach different pods",
		run: (*Model).openDiff},
	{name: "events", aliases: []string{"ev", "event"}, help: "the timeline of xDS pushes and kube changes",
		run: func(m *Model, _ []string) tea.Cmd { m.push(viewEvents); return nil }},
	{name: "map", help: "the mesh drawn: networks, clusters, gateways, what each istiod reads",
		run: func(m *Model, _ []string) tea.Cmd { m.push(viewMap); return m.requestFleet() }},
	{name: "pc", args: "A [B]", minArgs: 1, maxArgs: 2, help: "a viewpoint's clusters, listeners and routes (two: what differs)",
		run: (*Model).openConfig},
	{name: "problems", aliases: []string{"pb", "problem", "doctor"}, help: "every problem found, errors first",
		run: func(m *Model, _ []string) tea.Cmd { m.push(viewProblems); return nil }},
	{name: "proxies", aliases: []string{"px", "fleet"}, help: "every real proxy: in sync, identity, versions",
		run: func(m *Model, _ []string) tea.Cmd { m.push(viewProxies); return m.requestFleet() }},
	{name: "quit", aliases: []string{"q", "q!", "exit"}, help: "leave meshscope",
		run: func(*Model, []string) tea.Cmd { return tea.Quit }},
	{name: "svc", aliases: []string{"services", "service", "s"}, help: "every service across clusters",
		run: func(m *Model, _ []string) tea.Cmd { m.push(viewServices); return nil }},
	{name: "whatif", aliases: []string{"what-if", "wi"}, args: "FILE [CLUSTER]", maxArgs: 12, raw: true,
		help: "a YAML file's change over the mesh, not applied (--delete, --env K=V, off)",
		run:  (*Model).runWhatIf},
}

// The commands that open a view on their arguments.

// openCompare opens ":compare A B" for the service in view, or the one
// selected in the services list.
func (m *Model) openCompare(pair []string) tea.Cmd {
	host := ""
	switch {
	case m.currentID() == viewService || m.currentID() == viewCompare:
		host = m.current().(*serviceView).host
	case m.services.selectedHost() != "":
		host = m.services.selectedHost()
	case m.ix.snap != nil && len(m.ix.snap.Services) > 0:
		host = m.ix.snap.Services[0].Hostname
	}
	if host == "" {
		m.setFlash("no service to compare yet", true)
		return nil
	}
	m.compare.open(m.vc(), host, pair)
	m.push(viewCompare)
	return nil
}

// openDiff handles ":diff A B".
func (m *Model) openDiff(pair []string) tea.Cmd {
	m.diff.open(m.vc(), pair[0], pair[1])
	m.push(viewDiff)
	return nil
}

// openConfig handles ":pc A [B]".
func (m *Model) openConfig(vps []string) tea.Cmd {
	cf, ok := m.feed.(ConfigFeed)
	if !ok {
		m.setFlash("this feed serves no proxy config", true)
		return nil
	}
	for _, vp := range vps {
		cf.WatchListeners(vp)
	}
	*m.config = configView{a: vps[0], stale: true}
	if len(vps) == 2 {
		m.config.b = vps[1]
	}
	m.push(viewConfig)
	return nil
}

// commandNames are the names of the commands, in completion order.
func commandNames() []string {
	out := make([]string, len(commandTable))
	for i := range commandTable {
		out[i] = commandTable[i].name
	}
	return out
}

// lookupCommand finds a command by name, alias or unique prefix of a name.
func lookupCommand(name string) (*command, bool) {
	name = strings.ToLower(name)
	for i := range commandTable {
		c := &commandTable[i]
		if c.name == name || contains(c.aliases, name) {
			return c, true
		}
	}
	if cs := completions(name); len(cs) == 1 {
		return lookupCommand(cs[0])
	}
	return nil, false
}

// completions lists the command names that start with prefix.
func completions(prefix string) []string {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	var out []string
	for _, c := range commandNames() {
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

// commandHelp is the "?" help's list of commands, one line each.
func commandHelp() []string {
	w := 0
	for i := range commandTable {
		w = max(w, len(commandTable[i].usage()))
	}
	var out []string
	for i := range commandTable {
		c := &commandTable[i]
		line := fmt.Sprintf("%-*s  %s", w, c.usage(), c.help)
		if len(c.aliases) > 0 {
			line += " (also :" + strings.Join(c.aliases, " :") + ")"
		}
		out = append(out, line)
	}
	return out
}

// runCommand runs a command line: the command by name, alias or unique
// prefix, with its arguments checked and resolved to viewpoints.
func (m *Model) runCommand(text string) tea.Cmd {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return nil
	}
	c, ok := lookupCommand(fields[0])
	if !ok {
		m.setFlash(fmt.Sprintf("unknown command %q (try %s)", text, strings.Join(commandNames(), ", ")), true)
		return nil
	}
	args := fields[1:]
	if c.raw {
		if len(args) < c.minArgs || len(args) > c.maxArgs {
			m.setFlash("usage: "+c.usage(), true)
			return nil
		}
		return c.run(m, args)
	}
	if c.takesViewpoints() || len(args) > 0 {
		var ok bool
		if args, ok = m.viewpointArgs(c, args); !ok {
			return nil
		}
	}
	return c.run(m, args)
}

// viewpointArgs resolves a command's arguments to viewpoint names, or
// flashes its usage.
func (m *Model) viewpointArgs(c *command, args []string) ([]string, bool) {
	names := m.viewpointNames()
	if len(args) < c.minArgs || len(args) > c.maxArgs {
		if c.maxArgs == 0 {
			m.setFlash(c.usage()+" takes no arguments", true)
			return nil, false
		}
		m.setFlash("usage: "+c.usage()+" (viewpoints: "+strings.Join(names, ", ")+")", true)
		return nil, false
	}
	vps := viewpointsFor(m.feed, m.ix.snap)
	var out []string
	for _, a := range args {
		if c.name == "pc" && strings.HasPrefix(a, "gateway") {
			g, ok := m.gatewayArg(a)
			if !ok {
				return nil, false
			}
			out = append(out, g)
			continue
		}
		vp, ok := findViewpoint(vps, a)
		if !ok {
			m.setFlash(fmt.Sprintf("no single viewpoint %q (viewpoints: %s)", a, strings.Join(names, ", ")), true)
			return nil, false
		}
		out = append(out, vp.String())
	}
	return out, true
}

// completeLine completes the command name, or the viewpoint being typed
// as an argument of a command that takes viewpoints.
func (m *Model) completeLine(line string) string {
	fields := strings.Fields(line)
	if len(fields) == 0 || (len(fields) == 1 && !strings.HasSuffix(line, " ")) {
		name := complete(line)
		if c, ok := lookupCommand(name); ok && c.name == name && c.takesArgs() {
			name += " "
		}
		return name
	}
	c, ok := lookupCommand(fields[0])
	if !ok || !c.takesArgs() {
		return line
	}
	if c.raw {
		return completePathLine(line)
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

// commandHint is what the command line shows after the text typed so far.
func (m *Model) commandHint(input string) string {
	fields := strings.Fields(input)
	switch {
	case input == "":
		return "  " + strings.Join(commandNames(), " ")
	case strings.Contains(input, " "):
		c, ok := lookupCommand(fields[0])
		switch {
		case !ok:
			return "  unknown command"
		case c.raw:
			return "  " + c.usage() + " · clusters: " + strings.Join(m.ix.clusterIDs, " ") + " · tab completes files"
		case !c.takesViewpoints():
			return "  " + c.usage() + " takes no arguments"
		}
		return "  " + c.usage() + " · viewpoints: " + strings.Join(m.viewpointNames(), " ")
	}
	if cs := completions(input); len(cs) > 0 {
		return "  " + strings.Join(cs, " ") + "  (tab completes)"
	}
	return ""
}

func (m *Model) viewpointNames() []string {
	var out []string
	for _, vp := range viewpointsFor(m.feed, m.ix.snap) {
		out = append(out, vp.String())
	}
	return out
}

// completePathLine completes the file path being typed as the last word
// of a command line: to the one file that matches (a directory gets its
// "/"), or to the longest prefix several share.
func completePathLine(line string) string {
	if strings.HasSuffix(line, " ") {
		return line
	}
	i := strings.LastIndex(line, " ")
	head, word := line[:i+1], line[i+1:]
	cluster := ""
	if c, p, ok := strings.Cut(word, "="); ok && !strings.ContainsAny(c, `/\`) {
		cluster, word = c+"=", p // CLUSTER=FILE
	}
	matches, err := filepath.Glob(expandHome(word) + "*")
	if err != nil || len(matches) == 0 {
		return line
	}
	if strings.HasPrefix(word, "~/") {
		// Keep the ~ the person typed.
		home := strings.TrimSuffix(expandHome("~/"), "/")
		for j := range matches {
			matches[j] = "~" + strings.TrimPrefix(matches[j], home)
		}
	}
	if len(matches) == 1 {
		m := matches[0]
		if st, err := os.Stat(expandHome(m)); err == nil && st.IsDir() {
			return head + cluster + m + "/"
		}
		return head + cluster + m + " "
	}
	common := matches[0]
	for _, m := range matches[1:] {
		for !strings.HasPrefix(m, common) {
			common = common[:len(common)-1]
		}
	}
	if len(common) > len(word) {
		return head + cluster + common
	}
	return line
}
