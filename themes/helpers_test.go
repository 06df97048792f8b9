package themes

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"testing"
)

// isolate points the user theme directory at an empty temp dir and clears
// NO_COLOR, so tests never see the developer's own themes or environment.
// It returns the themes directory (not yet created).
func isolate(t *testing.T) string {
	t.Helper()
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("NO_COLOR", "")
	return filepath.Join(cfg, "meshscope", "themes")
}

// writeTheme writes a user theme file into dir and returns its path.
func writeTheme(t *testing.T, dir, name, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hex renders a colour for comparisons and failure messages; "none" for nil.
func hex(c color.Color) string {
	if c == nil {
		return "none"
	}
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}
