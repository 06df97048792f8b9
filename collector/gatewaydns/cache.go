package gatewaydns

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/meshscope/meshscope/model"
)

// Resolver answers one name; Client is the real one, tests give others.
type Resolver interface {
	Resolve(name string) answer
}

// Cache keeps the answer of every gateway name it is asked about, as
// istiod's networkGatewayNameCache: an answer is reused until its TTL runs
// out; a timer then asks again in the background and calls OnChange when
// the addresses differ (istiod pushes then); a failed query keeps the
// previous addresses; a name no longer asked about is forgotten.
type Cache struct {
	r        Resolver
	onChange func()
	now      func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
	closed  bool
	// refreshing counts the refreshes under way (each runs in its
	// timer's goroutine): Close waits for them.
	refreshing sync.WaitGroup
}

type entry struct {
	ans    answer
	at     time.Time
	expiry time.Time
	timer  *time.Timer
	// prev and changedAt: the addresses before the last change of the
	// answer, and when it changed (doctor says a name moved).
	prev      []string
	changedAt time.Time
}

// NewCache returns a cache that asks r and calls onChange (never under
// the cache's lock) when a refresh changes an answer.
func NewCache(r Resolver, onChange func()) *Cache {
	return &Cache{r: r, onChange: onChange, now: time.Now, entries: map[string]*entry{}}
}

// Resolve returns the answers for names, resolving the ones not cached or
// expired now (istiod does so on the ingestion path too), and forgets
// the names not given.
func (c *Cache) Resolve(names []string) []model.GatewayName {
	c.mu.Lock()
	for name, e := range c.entries {
		if !slices.Contains(names, name) {
			e.timer.Stop()
			delete(c.entries, name)
		}
	}
	var missing []string
	for _, name := range names {
		if e, ok := c.entries[name]; !ok || !e.expiry.After(c.now()) {
			missing = append(missing, name)
		}
	}
	c.mu.Unlock()

	// Ask for the missing names at once and outside the lock: a server
	// that does not answer costs one timeout, not one per name.
	answers := make([]answer, len(missing))
	var wg sync.WaitGroup
	for i, name := range missing {
		wg.Add(1)
		go func() { defer wg.Done(); answers[i] = c.r.Resolve(name) }()
	}
	wg.Wait()

	c.mu.Lock()
	defer c.mu.Unlock()
	for i, name := range missing {
		c.storeLocked(name, answers[i])
	}
	out := make([]model.GatewayName, 0, len(names))
	for _, name := range names {
		if e, ok := c.entries[name]; ok {
			out = append(out, e.gatewayName(name))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup answers names without changing the cache (a what-if build): a
// cached answer as it is, expired or not; a name not cached is asked now
// and its answer not kept.
func (c *Cache) Lookup(names []string) []model.GatewayName {
	out := make([]model.GatewayName, 0, len(names))
	for _, name := range names {
		c.mu.Lock()
		e, ok := c.entries[name]
		c.mu.Unlock()
		if !ok {
			ans := c.r.Resolve(name)
			e = &entry{ans: ans, at: c.now()}
		}
		out = append(out, e.gatewayName(name))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// storeLocked records an answer and arms its refresh. It returns whether
// the addresses changed.
func (c *Cache) storeLocked(name string, ans answer) bool {
	if c.closed {
		return false
	}
	old, had := c.entries[name]
	if had {
		old.timer.Stop()
		if ans.Err != nil {
			// istiod keeps the old addresses while DNS is unavailable.
			ans.Addresses = old.ans.Addresses
		}
	}
	now := c.now()
	e := &entry{ans: ans, at: now, expiry: now.Add(ans.TTL)}
	changed := had && !slices.Equal(old.ans.Addresses, ans.Addresses)
	switch {
	case changed:
		e.prev, e.changedAt = old.ans.Addresses, now
	case had:
		e.prev, e.changedAt = old.prev, old.changedAt
	}
	e.timer = time.AfterFunc(ans.TTL, func() { c.refresh(name) })
	c.entries[name] = e
	return !had || changed
}

// refresh asks again for a name whose TTL ran out.
func (c *Cache) refresh(name string) {
	c.mu.Lock()
	_, ok := c.entries[name]
	if ok {
		c.refreshing.Add(1) // under the lock: never after Close's Wait began
	}
	c.mu.Unlock()
	if !ok {
		return
	}
	defer c.refreshing.Done()
	ans := c.r.Resolve(name)
	c.mu.Lock()
	changed := false
	if _, still := c.entries[name]; still {
		changed = c.storeLocked(name, ans)
	}
	c.mu.Unlock()
	if changed && c.onChange != nil {
		c.onChange()
	}
}

// Close stops every refresh and waits for those under way.
func (c *Cache) Close() {
	c.mu.Lock()
	c.closed = true
	for name, e := range c.entries {
		e.timer.Stop()
		delete(c.entries, name)
	}
	c.mu.Unlock()
	c.refreshing.Wait()
}

func (e *entry) gatewayName(name string) model.GatewayName {
	n := model.GatewayName{Name: name, Addresses: e.ans.Addresses, TTL: e.ans.TTL, ResolvedAt: e.at, By: model.ResolvedByMeshscope,
		Previous: e.prev, ChangedAt: e.changedAt}
	if e.ans.Err != nil {
		n.Err = e.ans.Err.Error()
	}
	return n
}
