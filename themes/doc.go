// Package themes owns meshscope's colours: a fixed set of semantic tokens
// (text, ok, gateway, selection, ...), the built-in themes that give them
// values, and loading a user's own theme from a YAML file.
//
// A theme never knows about views. Views ask for "the style of a leaked
// endpoint" or "the selected row", never for "red" or "the services table",
// so that one YAML file can restyle the whole program and a new view needs no
// new theme work.
//
// The usual flow in the TUI:
//
//	th, err := themes.Load(name, isDark) // isDark from tea.BackgroundColorMsg
//	st := themes.NewStyles(th)
//	st.Leaked.Render("10.0.3.7:8080")
//
// The YAML schema and the token list are documented for users in
// docs/themes.md.
package themes
