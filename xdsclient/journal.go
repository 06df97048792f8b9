package xdsclient

import "sync"

// Journal is a bounded ring buffer: it keeps the last N items and counts
// what it had to drop, so a reader can say "older events were discarded"
// instead of silently showing a gap. It is generic and depends on nothing in
// this package, so it can move to the collector with the rest of the journal.
// It is safe for concurrent use.
type Journal[T any] struct {
	mu      sync.Mutex
	buf     []T
	next    int    // index of the next write
	full    bool   // buf has wrapped
	total   uint64 // items ever added
	dropped uint64 // items overwritten
}

// NewJournal returns a journal that keeps the last size items (at least 1).
func NewJournal[T any](size int) *Journal[T] {
	if size < 1 {
		size = 1
	}
	return &Journal[T]{buf: make([]T, size)}
}

// Add appends v, dropping the oldest item when full.
func (j *Journal[T]) Add(v T) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.full {
		j.dropped++
	}
	j.buf[j.next] = v
	j.next++
	j.total++
	if j.next == len(j.buf) {
		j.next, j.full = 0, true
	}
}

// Items returns the kept items, oldest first, as a new slice.
func (j *Journal[T]) Items() []T {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.full {
		return append([]T(nil), j.buf[:j.next]...)
	}
	out := make([]T, 0, len(j.buf))
	out = append(out, j.buf[j.next:]...)
	return append(out, j.buf[:j.next]...)
}

// Len is the number of items kept; Total the number ever added; Dropped the
// number overwritten.
func (j *Journal[T]) Len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.full {
		return len(j.buf)
	}
	return j.next
}

// Total is the number of items ever added.
func (j *Journal[T]) Total() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.total
}

// Dropped is the number of items overwritten because the journal was full.
func (j *Journal[T]) Dropped() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.dropped
}
