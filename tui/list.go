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

// scrollKey handles the keys every list scrolls with (up, down, page
// up/down, top, bottom); it reports false for any other key.
func (m *Model) scrollKey(k tea.KeyPressMsg, page int, scroll func(delta int)) bool {
	switch {
	case key.Matches(k, m.keys.Up):
		scroll(-1)
	case key.Matches(k, m.keys.Down):
		scroll(1)
	case key.Matches(k, m.keys.PageUp):
		scroll(-page)
	case key.Matches(k, m.keys.PageDown):
		scroll(page)
	case key.Matches(k, m.keys.Top):
		scroll(-1 << 30)
	case key.Matches(k, m.keys.Bottom):
		scroll(1 << 30)
	default:
		return false
	}
	return true
}
