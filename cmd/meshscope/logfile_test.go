package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// TestLogFilePrivate: the file is 0600 and the directories meshscope creates
// are 0700, whatever the umask; an existing 0644 file (an older version's)
// is narrowed; an existing directory that is not meshscope's own is left
// alone.
func TestLogFilePrivate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "meshscope.log")
	l, err := openLogFile(p, 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if m := mode(t, p); m != 0o600 {
		t.Errorf("new log file mode %o, want 600", m)
	}
	for _, d := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "a", "b")} {
		if m := mode(t, d); m != 0o700 {
			t.Errorf("created directory %s mode %o, want 700", d, m)
		}
	}

	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(shared, "old.log")
	if err := os.WriteFile(old, []byte("from an older meshscope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	l, err = openLogFile(old, 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if m := mode(t, old); m != 0o600 {
		t.Errorf("existing log file mode %o, want narrowed to 600", m)
	}
	if m := mode(t, shared); m != 0o755 {
		t.Errorf("someone else's directory changed to %o", m)
	}
	l, err = openLogFile(old, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if m := mode(t, shared); m != 0o700 {
		t.Errorf("meshscope's own directory mode %o, want 700", m)
	}
}

// TestLogFileRotates: the file never grows past the limit (a record that
// would cross it starts a new file), the previous file is kept as .1 and
// replaces an older .1, records are never split, and a file already past
// the limit at start is rotated before the first write.
func TestLogFileRotates(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.log")
	l, err := openLogFile(p, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(i int) []byte { return []byte(strings.Repeat(string(rune('a'+i)), 29) + "\n") } // 30 bytes
	for i := 0; i < 7; i++ {
		if n, err := l.Write(rec(i)); err != nil || n != 30 {
			t.Fatalf("write %d: %d %v", i, n, err)
		}
		if st, _ := os.Stat(p); st.Size() > 100 {
			t.Fatalf("after record %d the file is %d bytes, past the limit", i, st.Size())
		}
	}
	l.Close()
	// 7 records of 30 bytes, 3 per file: a b c | d e f | g.
	cur, _ := os.ReadFile(p)
	prev, _ := os.ReadFile(p + ".1")
	if want := string(rec(6)); string(cur) != want {
		t.Errorf("current file %q, want %q", cur, want)
	}
	if want := string(rec(3)) + string(rec(4)) + string(rec(5)); string(prev) != want {
		t.Errorf(".1 %q, want %q (the older .1 replaced)", prev, want)
	}
	if m := mode(t, p+".1"); m != 0o600 {
		t.Errorf(".1 mode %o", m)
	}

	// A record larger than the limit still goes somewhere, alone.
	l, _ = openLogFile(p, 100, false)
	big := bytes.Repeat([]byte("x"), 150)
	if _, err := l.Write(big); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if cur, _ := os.ReadFile(p); !bytes.Equal(cur, big) {
		t.Errorf("big record: file holds %d bytes", len(cur))
	}

	// At start: the file left at 150 bytes is rotated before anything is written.
	l, _ = openLogFile(p, 100, false)
	if _, err := l.Write([]byte("new\n")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if cur, _ := os.ReadFile(p); string(cur) != "new\n" {
		t.Errorf("not rotated at start: %q", cur)
	}
	if prev, _ := os.ReadFile(p + ".1"); !bytes.Equal(prev, big) {
		t.Errorf(".1 after rotation at start holds %d bytes", len(prev))
	}
	if _, err := l.Write([]byte("late\n")); err == nil {
		t.Error("write after Close succeeded")
	}
}

// TestLogFileRotateFallback: when the file cannot be renamed to .1 (here
// .1 is a non-empty directory), it is emptied instead, so it stays bounded.
func TestLogFileRotateFallback(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.log")
	if err := os.MkdirAll(filepath.Join(p+".1", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := openLogFile(p, 50, false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 5; i++ {
		if _, err := l.Write(bytes.Repeat([]byte("y"), 20)); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := os.Stat(p); st.Size() > 50 {
		t.Errorf("file %d bytes, past the limit", st.Size())
	}
}

// TestSetupLogging: --log-file goes through the private, bounded writer.
func TestSetupLogging(t *testing.T) {
	p := filepath.Join(t.TempDir(), "logs", "meshscope.log")
	if err := setupLogging(p); err != nil {
		t.Fatal(err)
	}
	defer setupLogging("-")
	slog.Info("hello", "cluster", "cluster1")
	b, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(b), "msg=hello cluster=cluster1") {
		t.Fatalf("log: %q %v", b, err)
	}
	if m := mode(t, p); m != 0o600 {
		t.Errorf("mode %o", m)
	}
	if m := mode(t, filepath.Dir(p)); m != 0o700 {
		t.Errorf("dir mode %o", m)
	}
}
