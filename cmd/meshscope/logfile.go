package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// maxLogSize bounds the log file: past it the file becomes FILE.1 (replacing
// an older FILE.1) and a new FILE starts, so a session left open beside a
// churning mesh for days keeps at most twice this on disk.
const maxLogSize = 10 << 20

// logFile is an append-only log that rotates to PATH.1 once it would grow
// past limit, at open and while running. Logs can name clusters, pods and
// servers, so the file is created readable by its owner only (0600) in a
// directory meshscope creates 0700.
type logFile struct {
	mu    sync.Mutex
	path  string
	limit int64
	f     *os.File
	size  int64
}

// openLogFile opens (or creates) path for appending. Directories it creates
// are 0700; an existing directory is left as it is (it may be /tmp or the
// user's own), except meshscope's own default one, which older versions made
// 0755. An existing file is narrowed to 0600, and rotated first if it is
// already at the limit.
func openLogFile(path string, limit int64, ownDir bool) (*logFile, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if ownDir {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, err
		}
	}
	l := &logFile{path: path, limit: limit}
	if err := l.open(); err != nil {
		return nil, err
	}
	if l.size >= limit {
		if err := l.rotate(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (l *logFile) open() error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if st.Mode().Perm() != 0o600 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return fmt.Errorf("%s is readable by others and cannot be narrowed to 0600: %w", l.path, err)
		}
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past the
// limit. slog handlers write one record per call, so a record is never
// split between the two files.
func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, fs.ErrClosed
	}
	if l.size > 0 && l.size+int64(len(p)) > l.limit {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate moves the file to PATH.1 and starts an empty one. When the rename
// fails (a read-only directory entry, say), the file is emptied instead:
// the bound on its size matters more than what it held.
func (l *logFile) rotate() error {
	l.f.Close()
	l.f = nil
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		if err := os.Truncate(l.path, 0); err != nil {
			return fmt.Errorf("log file %s is past %d bytes and can be neither rotated nor emptied: %w", l.path, l.limit, err)
		}
	}
	return l.open()
}

// Close closes the file; later writes fail.
func (l *logFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
