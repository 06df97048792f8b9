package themes

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/themes.md is the users' reference: it must name every token and every
// built-in, and its YAML examples must load as written.
func TestDocsMatchTheCode(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "docs", "themes.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	for _, tok := range allTokens {
		if !strings.Contains(doc, "| `"+string(tok)+"` |") {
			t.Errorf("docs/themes.md has no table row for token %s", tok)
		}
	}
	for _, name := range builtinNames {
		if !strings.Contains(doc, "| `"+name+"` |") {
			t.Errorf("docs/themes.md has no table row for built-in %s", name)
		}
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("no yaml example in docs/themes.md")
	}
	for i, b := range blocks {
		dir := isolate(t)
		writeTheme(t, dir, "example", b[1])
		tf, err := parseFile([]byte(b[1]), "example.yaml")
		if err != nil {
			t.Fatalf("example %d: %v", i+1, err)
		}
		for _, tok := range allTokens {
			if _, ok := tf.tokens[tok]; !ok {
				t.Errorf("example %d does not set %s (the doc promises every token)", i+1, tok)
			}
		}
		for _, dark := range []bool{false, true} {
			if _, err := Load("example", dark); err != nil {
				t.Errorf("example %d: %v", i+1, err)
			}
		}
	}
}
