package gatewaydns

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeResolver answers from a settable answer and counts the questions.
type fakeResolver struct {
	mu    sync.Mutex
	ans   answer
	calls int
}

func (f *fakeResolver) Resolve(string) answer {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.ans
}

func (f *fakeResolver) set(a answer) {
	f.mu.Lock()
	f.ans = a
	f.mu.Unlock()
}

func (f *fakeResolver) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func TestCache(t *testing.T) {
	const ttl = 30 * time.Millisecond
	r := &fakeResolver{ans: answer{Addresses: []string{"192.0.2.1", "192.0.2.2"}, TTL: time.Hour}}
	changed := make(chan struct{}, 10)
	c := NewCache(r, func() { changed <- struct{}{} })
	defer c.Close()

	got := c.Resolve([]string{"gw.example.test"})
	if len(got) != 1 || !slices.Equal(got[0].Addresses, []string{"192.0.2.1", "192.0.2.2"}) || got[0].TTL != time.Hour {
		t.Fatalf("first answer %+v", got)
	}
	c.Resolve([]string{"gw.example.test"})
	if n := r.count(); n != 1 {
		t.Fatalf("a cached answer was asked again: %d questions", n)
	}

	// An expired answer is asked again on the next build.
	setNow(c, func() time.Time { return time.Now().Add(2 * time.Hour) })
	r.set(answer{Addresses: []string{"192.0.2.3"}, TTL: ttl})
	if got := c.Resolve([]string{"gw.example.test"}); !slices.Equal(got[0].Addresses, []string{"192.0.2.3"}) {
		t.Fatalf("expired answer not refreshed: %+v", got)
	}
	setNow(c, time.Now)

	// When the TTL runs out the name is asked again in the background; a
	// changed answer calls back.
	r.set(answer{Addresses: []string{"192.0.2.4"}, TTL: ttl})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no callback after the TTL")
	}
	if got := c.Resolve([]string{"gw.example.test"}); !slices.Equal(got[0].Addresses, []string{"192.0.2.4"}) ||
		!slices.Equal(got[0].Previous, []string{"192.0.2.3"}) || got[0].ChangedAt.IsZero() {
		t.Fatalf("refreshed answer %+v (want the previous addresses and when they changed)", got)
	}

	// A failed query keeps the old addresses (and says why); no callback.
	r.set(answer{TTL: ttl, Err: errors.New("no DNS server answered")})
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := c.Resolve([]string{"gw.example.test"})
		if got[0].Err != "" {
			if !slices.Equal(got[0].Addresses, []string{"192.0.2.4"}) {
				t.Fatalf("a failure dropped the addresses: %+v", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the failure was never seen")
		}
		time.Sleep(ttl / 2)
	}
	select {
	case <-changed:
		t.Fatal("a failure that kept the addresses called back")
	default:
	}

	// A name no longer asked about is forgotten: no more questions.
	c.Resolve(nil)
	n := r.count()
	time.Sleep(4 * ttl)
	if r.count() != n {
		t.Errorf("a forgotten name was asked again")
	}
}

func setNow(c *Cache, now func() time.Time) {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}

// TestCacheLookup: a what-if's lookup answers from the cache and keeps
// nothing new.
func TestCacheLookup(t *testing.T) {
	r := &fakeResolver{ans: answer{Addresses: []string{"192.0.2.1"}, TTL: time.Hour}}
	c := NewCache(r, nil)
	defer c.Close()
	c.Resolve([]string{"a.example.test"})
	r.set(answer{Addresses: []string{"192.0.2.9"}, TTL: time.Hour})
	got := c.Lookup([]string{"a.example.test", "b.example.test"})
	if len(got) != 2 || got[0].Addresses[0] != "192.0.2.1" || got[1].Addresses[0] != "192.0.2.9" {
		t.Fatalf("Lookup = %+v", got)
	}
	c.mu.Lock()
	_, kept := c.entries["b.example.test"]
	c.mu.Unlock()
	if kept || r.count() != 2 {
		t.Errorf("a lookup changed the cache (kept %t, %d questions)", kept, r.count())
	}
}
