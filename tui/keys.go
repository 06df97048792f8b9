package tui

import "charm.land/bubbles/v2/key"

// keyMap is every key binding of the program; the help screen (?) is drawn
// from it, so a binding documented here is a binding that works.
type keyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Left, Right                             key.Binding
	Enter, Back, Tab                        key.Binding
	Command, Filter, Help, Theme, Quit      key.Binding
	Sort, Pause, NextPort, PrevPort, Subset key.Binding
	Ztunnel, WhatIf, Fix                    key.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Left:     key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "previous viewpoint")),
		Right:    key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "next viewpoint")),
		Enter:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back / clear filter")),
		Tab:      key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "next pane")),
		Command:  key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "command (see Commands below)")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Theme:    key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "next theme")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort (services)")),
		Pause:    key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause (events)")),
		NextPort: key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next port (service)")),
		PrevPort: key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous port (service)")),
		Subset:   key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "next DestinationRule subset (service)")),
		Ztunnel:  key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "ztunnel view (service)")),
		WhatIf:   key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "what-if: Δ only / before → after")),
		Fix:      key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "lay the problem's fix over the mesh (problems)")),
	}
}

// ShortHelp implements help.KeyMap.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Command, k.Filter, k.Enter, k.Back, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Enter, k.Back, k.Tab, k.Left, k.Right, k.NextPort, k.PrevPort, k.Subset, k.Ztunnel},
		{k.Command, k.Filter, k.Sort, k.WhatIf, k.Fix, k.Pause, k.Theme, k.Help, k.Quit},
	}
}
