package xdsclient

import "sync"

// journal is a bounded ring buffer: it keeps the last N items and counts
// what it had to drop, so a reader can say "older events were discarded"
// instead of silently showing a gap. It is generic and depends on nothing in
// this package, so it can move to the collector with the rest of the journal.
// It is safe for concurrent use.
type journal[T any] struct {
	mu      sync.Mutex
	buf     []T
	next    int    // index of the next write
	full    bool   // buf has wrapped
	total   uint64 // items ever added
	dropped uint64 // items overwritten
}

// newJournal returns a journal that keeps the last size items (at least 1).
func newJournal[T any](size int) *journal[T] {
	if size < 1 {
		size = 1
	}
	return &journal[T]{buf: make([]T, size)}
}

// add appends v, dropping the oldest item when full.
func (j *journal[T]) add(v T) {
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

// items returns the kept items, oldest first, as a new slice.
func (j *journal[T]) items() []T {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.full {
		return append([]T(nil), j.buf[:j.next]...)
	}
	out := make([]T, 0, len(j.buf))
	out = append(out, j.buf[j.next:]...)
	return append(out, j.buf[:j.next]...)
}

// len is the number of items kept.
func (j *journal[T]) len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.full {
		return len(j.buf)
	}
	return j.next
}

// totalAdded is the number of items ever added.
func (j *journal[T]) totalAdded() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.total
}

// droppedCount is the number of items overwritten because the journal was full.
func (j *journal[T]) droppedCount() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.dropped
}
