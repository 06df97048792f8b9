package meshtest

import (
	"strings"
	"testing"
)

// CheckClearError fails t when err, a parse error of a document a person
// wrote, speaks of Go rather than of the document.
func CheckClearError(t testing.TB, err error) {
	t.Helper()
	msg := err.Error()
	if strings.TrimSpace(msg) == "" {
		t.Fatal("empty error")
	}
	for _, w := range goTypeWords {
		if strings.Contains(msg, w) {
			t.Fatalf("error speaks Go (%q): %s", w, msg)
		}
	}
}

// goTypeWords are what a decoding error says when it speaks of Go instead
// of the user's document.
var goTypeWords = []string{"Go struct field", "Go value", "collector.", "model.", "map[string]", "[]"}
