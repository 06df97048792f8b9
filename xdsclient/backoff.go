package xdsclient

import (
	"math/rand/v2"
	"time"
)

// Backoff is the reconnect policy: exponential with jitter, so many
// viewpoints that lost the same istiod do not all come back at once.
type Backoff struct {
	Initial time.Duration // first delay (default 500ms)
	Max     time.Duration // cap (default 30s)
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = 500 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 30 * time.Second
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	return b
}

// Delay returns the wait before attempt n (n = 1 is the first retry):
// Initial·2^(n-1) capped at Max, then "equal jitter": half fixed, half
// random, so the delay never collapses to zero yet is spread out.
func (b Backoff) Delay(n int) time.Duration {
	b = b.withDefaults()
	d := b.Initial
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}
