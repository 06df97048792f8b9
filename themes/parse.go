package themes

import (
	"image/color"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The YAML is read as a node tree rather than into structs: nodes carry line
// numbers, so every problem can be reported as file:line, and unknown names
// can be caught with a list of the known ones instead of silently ignored
// (which is what decoding into a struct would do).

// attrNames are the text attributes a token may switch on, in doc order.
var attrNames = []string{"bold", "faint", "italic", "underline", "reverse", "strikethrough"}

// patch is what one file says about one token. Nil/absent fields are "not
// said", so extending a theme changes only what the file mentions: writing
// `accent: "#f00"` over a bold accent keeps it bold.
type patch struct {
	fg, bg *adaptive
	attrs  map[string]bool
}

// themeFile is a parsed, checked, not yet resolved theme file.
type themeFile struct {
	file        string
	description string
	extends     string
	extendsLine int
	tokens      map[Token]patch
}

// yamlLine pulls the line number out of go.yaml.in/yaml/v3 syntax errors
// ("yaml: line 3: mapping values are not allowed in this context").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseFile checks a theme file and returns everything wrong with it at once.
func parseFile(src []byte, file string) (*themeFile, error) {
	ps := &problems{file: file}
	tf := &themeFile{file: file, tokens: map[Token]patch{}}

	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			ps.add(line, "%s", m[2])
		} else {
			ps.add(0, "%s", strings.TrimPrefix(msg, "yaml: "))
		}
		return nil, ps.err()
	}
	// An empty file is a valid theme: it is its base (default) unchanged.
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return tf, nil
	}
	root := deref(doc.Content[0])
	if isNull(root) {
		return tf, nil
	}
	if root.Kind != yaml.MappingNode {
		ps.add(root.Line, "a theme file is a mapping with the fields description, extends and tokens")
		return nil, ps.err()
	}

	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], deref(root.Content[i+1])
		if first, dup := seen[k.Value]; dup {
			ps.add(k.Line, "field %q is set twice (first on line %d)", k.Value, first)
			continue
		}
		seen[k.Value] = k.Line
		switch k.Value {
		case "description":
			if v.Kind != yaml.ScalarNode {
				ps.add(v.Line, "description: expected a line of text")
				continue
			}
			tf.description = v.Value
		case "extends":
			if v.Kind != yaml.ScalarNode || v.Value == "" || isNull(v) {
				ps.add(v.Line, "extends: expected the name of a built-in theme (%s)", strings.Join(builtinNames, ", "))
				continue
			}
			tf.extends, tf.extendsLine = v.Value, v.Line
		case "tokens":
			parseTokens(ps, tf, v)
		default:
			if known(k.Value) {
				// The commonest slip: tokens written at the top level.
				ps.add(k.Line, "%q is a token: put it under tokens:", k.Value)
			} else {
				ps.add(k.Line, "unknown field %q (known: description, extends, tokens)", k.Value)
			}
		}
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return tf, nil
}

func parseTokens(ps *problems, tf *themeFile, v *yaml.Node) {
	if isNull(v) {
		return
	}
	if v.Kind != yaml.MappingNode {
		ps.add(v.Line, "tokens: expected a mapping of token name to color (known tokens: %s)", tokenList())
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		name := k.Value
		if !known(name) {
			ps.add(k.Line, "unknown token %q (known: %s)", name, tokenList())
			continue
		}
		if first, dup := seen[name]; dup {
			ps.add(k.Line, "token %s is set twice (first on line %d)", name, first)
			continue
		}
		seen[name] = k.Line
		if p, ok := parseSpec(ps, name, k, val); ok {
			tf.tokens[Token(name)] = p
		}
	}
}

// parseSpec reads one token's value: a colour (the foreground), a light/dark
// pair (also the foreground), or a mapping of fg, bg and attributes.
func parseSpec(ps *problems, path string, key, v *yaml.Node) (patch, bool) {
	raw := v
	v = deref(v)
	if v.Kind == yaml.MappingNode && onlyKeys(v, "light", "dark") {
		c, ok := parseAdaptive(ps, path, key, raw)
		return patch{fg: c}, ok
	}
	switch v.Kind {
	case yaml.ScalarNode:
		c, ok := parseAdaptive(ps, path, key, raw)
		return patch{fg: c}, ok
	case yaml.MappingNode:
		p, ok := patch{}, true
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := v.Content[i], v.Content[i+1]
			switch name := k.Value; {
			case name == "fg" || name == "bg":
				c, cok := parseAdaptive(ps, path+"."+name, k, val)
				ok = ok && cok
				if name == "fg" {
					p.fg = c
				} else {
					p.bg = c
				}
			case contains(attrNames, name):
				b, bok := parseBool(ps, path+"."+name, deref(val))
				ok = ok && bok
				if p.attrs == nil {
					p.attrs = map[string]bool{}
				}
				p.attrs[name] = b
			default:
				ps.add(k.Line, "token %s: unknown key %q (known: fg, bg, %s; or light and dark for a color)",
					path, name, strings.Join(attrNames, ", "))
				ok = false
			}
		}
		return p, ok
	default:
		ps.add(v.Line, "token %s: expected a color, a light/dark pair, or a mapping of fg, bg and attributes", path)
		return patch{}, false
	}
}

// parseAdaptive reads a colour or a {light, dark} pair.
func parseAdaptive(ps *problems, path string, key, v *yaml.Node) (*adaptive, bool) {
	v = deref(v)
	switch v.Kind {
	case yaml.ScalarNode:
		c, ok := parseScalarColor(ps, path, key, v)
		if !ok {
			return nil, false
		}
		return &adaptive{light: c, dark: c}, true
	case yaml.MappingNode:
		var a adaptive
		var haveLight, haveDark, ok = false, false, true
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := v.Content[i], deref(v.Content[i+1])
			switch k.Value {
			case "light", "dark":
				if val.Kind != yaml.ScalarNode {
					ps.add(val.Line, "token %s.%s: expected a color %s", path, k.Value, colorHelp)
					ok = false
					continue
				}
				c, cok := parseScalarColor(ps, path+"."+k.Value, k, val)
				ok = ok && cok
				if k.Value == "light" {
					a.light, haveLight = c, true
				} else {
					a.dark, haveDark = c, true
				}
			default:
				ps.add(k.Line, "token %s: unknown key %q (known: light, dark)", path, k.Value)
				ok = false
			}
		}
		if ok && (!haveLight || !haveDark) {
			// One half alone would leave the other background with a
			// colour nobody chose.
			ps.add(v.Line, "token %s: a light/dark pair needs both light and dark", path)
			ok = false
		}
		if !ok {
			return nil, false
		}
		return &a, true
	default:
		ps.add(v.Line, "token %s: expected a color %s or a light/dark pair", path, colorHelp)
		return nil, false
	}
}

func parseScalarColor(ps *problems, path string, key, v *yaml.Node) (color.Color, bool) {
	if isNull(v) {
		// `accent: #ff0000` parses as an empty value followed by a
		// comment; say so, because the file looks right to its author.
		if comment := firstNonEmpty(v.LineComment, key.LineComment); strings.HasPrefix(comment, "#") {
			ps.add(v.Line, "token %s: no value; quote hex colors (%q): unquoted, # starts a YAML comment",
				path, strings.Fields(comment)[0])
		} else {
			ps.add(v.Line, "token %s: no value %s", path, colorHelp)
		}
		return nil, false
	}
	if tag := v.ShortTag(); tag != "!!str" && tag != "!!int" {
		ps.add(v.Line, "token %s: %q is not a color %s", path, v.Value, colorHelp)
		return nil, false
	}
	col, ok := parseColor(v.Value)
	if !ok {
		ps.add(v.Line, "token %s: %q is not a color %s", path, v.Value, colorHelp)
		return nil, false
	}
	return col, true
}

func parseBool(ps *problems, path string, v *yaml.Node) (bool, bool) {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool" {
		var b bool
		if err := v.Decode(&b); err == nil {
			return b, true
		}
	}
	ps.add(v.Line, "token %s: %q is not true or false", path, v.Value)
	return false, false
}

// deref follows YAML aliases, so a theme can name a colour once with an
// anchor (&blue "#89b4fa") and reuse it (*blue).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 32; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// onlyKeys reports whether mapping m is non-empty and uses no key outside allowed.
func onlyKeys(m *yaml.Node, allowed ...string) bool {
	if len(m.Content) == 0 {
		return false
	}
	for i := 0; i < len(m.Content); i += 2 {
		if !contains(allowed, m.Content[i].Value) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
