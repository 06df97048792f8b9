package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// cursor is a list position remembered by key (a hostname, a cluster ID),
// so that a new snapshot that inserts or removes rows never moves the
// selection to another item. top is the first visible row.
type cursor struct {
	key string
	cur int
	top int
}

// relocate finds the selected key in a rebuilt list of n rows (keyAt gives
// the key of row i) and keeps the selected row at the same screen line when
// it can. A key that is gone leaves the cursor at the same index, clamped.
func (c *cursor) relocate(n int, keyAt func(i int) string, h int) {
	screen := c.cur - c.top
	if c.key != "" {
		// Look near the old index first: most updates move rows little.
		found := -1
		if c.cur < n && keyAt(c.cur) == c.key {
			found = c.cur
		} else {
			for i := 0; i < n; i++ {
				if keyAt(i) == c.key {
					found = i
					break
				}
			}
		}
		if found >= 0 {
			c.cur = found
		}
	}
	c.clamp(n)
	c.top = c.cur - screen
	c.visible(n, h)
	if n > 0 {
		c.key = keyAt(c.cur)
	}
}

func (c *cursor) clamp(n int) {
	if c.cur >= n {
		c.cur = n - 1
	}
	if c.cur < 0 {
		c.cur = 0
	}
}

// move moves the cursor by delta rows in a list of n rows, h visible.
func (c *cursor) move(delta, n, h int, keyAt func(i int) string) {
	c.cur += delta
	c.clamp(n)
	c.visible(n, h)
	if n > 0 {
		c.key = keyAt(c.cur)
	}
}

// visible scrolls so that the cursor row is among the h visible rows.
func (c *cursor) visible(n, h int) {
	if h < 1 {
		h = 1
	}
	if c.cur < c.top {
		c.top = c.cur
	}
	if c.cur >= c.top+h {
		c.top = c.cur - h + 1
	}
	if c.top > n-h {
		c.top = n - h
	}
	if c.top < 0 {
		c.top = 0
	}
}

// window returns the rows [start, end) to draw in h lines.
func (c *cursor) window(n, h int) (int, int) {
	c.visible(n, h)
	return c.top, min(n, c.top+h)
}

// listState is what every list view shares: the rows shown (ids into the
// view's own data, in display order, after its filter), the cursor and
// scroll (remembered by key, so live updates never move the selection),
// and the filter text of the views that filter.
type listState struct {
	cursor
	rows  []int32
	query string
	// keyOf is the key of the row with an id (a hostname, a cluster ID...).
	keyOf func(id int32) string
}

func (l *listState) keyAt(i int) string { return l.keyOf(l.rows[i]) }

// show replaces the rows (h of them visible) and puts the cursor back on
// its key.
func (l *listState) show(rows []int32, h int) {
	l.rows = rows
	l.relocate(len(rows), l.keyAt, h)
}

// selectKey puts the cursor on the row with key k, when there is one.
func (l *listState) selectKey(k string, h int) {
	l.key = k
	l.relocate(len(l.rows), l.keyAt, h)
}

// selected is the id of the row under the cursor.
func (l *listState) selected() (int32, bool) {
	if l.cur < 0 || l.cur >= len(l.rows) {
		return 0, false
	}
	return l.rows[l.cur], true
}

// moveBy moves the cursor by d rows, h visible.
func (l *listState) moveBy(d, h int) {
	if len(l.rows) > 0 {
		l.move(d, len(l.rows), h, l.keyAt)
	}
}

// scrollKey moves the cursor for the keys every list scrolls with (up,
// down, page up/down, top, bottom; a page is h rows); it reports false for
// any other key.
func (l *listState) scrollKey(keys *keyMap, k tea.KeyPressMsg, h int) bool {
	d, ok := scrollDelta(keys, k, h)
	if ok {
		l.moveBy(d, h)
	}
	return ok
}

// scrollDelta is how many rows a scrolling key moves (a page is page rows).
func scrollDelta(keys *keyMap, k tea.KeyPressMsg, page int) (int, bool) {
	switch {
	case key.Matches(k, keys.Up):
		return -1, true
	case key.Matches(k, keys.Down):
		return 1, true
	case key.Matches(k, keys.PageUp):
		return -page, true
	case key.Matches(k, keys.PageDown):
		return page, true
	case key.Matches(k, keys.Top):
		return -1 << 30, true
	case key.Matches(k, keys.Bottom):
		return 1 << 30, true
	}
	return 0, false
}

// identity is the rows 0..n-1 in order, reusing buf.
func identity(buf []int32, n int) []int32 {
	if cap(buf) >= n {
		buf = buf[:n]
	} else {
		buf = make([]int32, n)
	}
	for i := range buf {
		buf[i] = int32(i)
	}
	return buf
}
