package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/internal/uiprobe"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/tui"
	"github.com/meshscope/meshscope/xdsclient"
)

// uiSession is the terminal UI, headless: the live session and feed the
// TUI runs on (collector + one stream per network and control plane), and
// the real tui.Model in a Bubble Tea program without terminal (no input, no
// renderer; View still runs after every update, as on screen). The probe
// hooks report when the model applied a batch of events and when it made
// an index current.
type uiSession struct {
	t0      time.Time
	session *live.Session
	feed    *live.Feed
	cancel  context.CancelFunc
	done    chan struct{}
	restore func()
	// wantClusters and wantEndpoints make the mesh complete.
	wantClusters, wantEndpoints int

	mu sync.Mutex
	// synced: every cluster synced and every endpoint in the snapshot.
	synced time.Time
	snap   *model.Snapshot
	// last is the latest snapshot seen before synced (progress lines say
	// what it still lacks).
	last     *model.Snapshot
	services int // in the UI's index
	known    int // services with a verdict
	indexes  int // indexes applied so far
	allKnown time.Time
	// Push-to-screen: EDS delays recorded while recording; every event's
	// Seq seen (gaps are events the feed dropped).
	recording bool
	delays    []time.Duration
	seqs      []uint64
	progErr   error
}

// startUI opens the session on the lab kubeconfig's cluster1 context with
// the given control planes and debug addresses, and starts the UI on its
// feed. wantEndpoints is the mesh's endpoint count ("synced" waits for it).
func startUI(ctx context.Context, kubeconfig string, cps, debug []live.Target, wantClusters, wantEndpoints int) (*uiSession, error) {
	u := &uiSession{wantClusters: wantClusters, wantEndpoints: wantEndpoints}
	u.restore = uiprobe.Set(&uiprobe.Hooks{EventsApplied: u.eventsApplied, IndexApplied: u.indexApplied})
	ctx, u.cancel = context.WithCancel(ctx)
	u.t0 = time.Now()
	s, err := live.Open(ctx, live.Options{
		Collector:     collector.Options{Kubeconfig: kubeconfig, Contexts: []string{"cluster1"}, SyncTimeout: 5 * time.Minute, Logger: slog.New(slog.DiscardHandler)},
		ControlPlanes: cps, IstiodDebug: debug,
	})
	if err != nil {
		u.restore()
		u.cancel()
		return nil, err
	}
	u.session = s
	// A second subscriber, beside the feed's: when is the mesh synced?
	updates, unsub := s.Registry().Subscribe()
	go func() {
		defer unsub()
		for {
			select {
			case <-ctx.Done():
				return
			case snap := <-updates:
				u.mu.Lock()
				u.last = snap
				u.mu.Unlock()
				if complete(snap, wantClusters, wantEndpoints) {
					u.mu.Lock()
					if u.synced.IsZero() {
						u.synced, u.snap = time.Now(), snap
					}
					u.mu.Unlock()
					return
				}
			}
		}
	}()
	u.feed = s.Feed(ctx, xdsclient.ModeDelta)
	m, err := tui.New(u.feed, tui.Options{})
	if err != nil {
		u.close()
		return nil, err
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(nil), tea.WithOutput(io.Discard),
		tea.WithoutRenderer(), tea.WithoutSignals(), tea.WithWindowSize(160, 48))
	u.done = make(chan struct{})
	go func() {
		defer close(u.done)
		_, err := p.Run()
		if err != nil && !errors.Is(err, tea.ErrProgramKilled) && ctx.Err() == nil {
			u.mu.Lock()
			u.progErr = err
			u.mu.Unlock()
		}
	}()
	return u, nil
}

// complete: every cluster synced and every endpoint in the snapshot.
func complete(s *model.Snapshot, clusters, endpoints int) bool {
	if s == nil || len(s.Clusters) != clusters {
		return false
	}
	for _, c := range s.Clusters {
		if c.State != model.StateSynced {
			return false
		}
	}
	return countEndpoints(s) == endpoints
}

func countEndpoints(s *model.Snapshot) int {
	n := 0
	for _, svc := range s.Services {
		for _, sc := range svc.Clusters {
			if sc != nil {
				n += len(sc.Endpoints)
			}
		}
	}
	return n
}

func (u *uiSession) eventsApplied(evs []xdsclient.Event) {
	now := time.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	for i := range evs {
		u.seqs = append(u.seqs, evs[i].Seq)
		if u.recording && evs[i].Type == xdsclient.EventEDS {
			u.delays = append(u.delays, now.Sub(evs[i].Time))
		}
	}
}

// indexApplied records the UI's latest index. Every verdict is known
// when an index of the complete mesh has them all: judged on the index's
// own snapshot, not on whether the subscriber above has seen a complete
// one yet (which it might see only after the UI's last index, and then
// wait for another that a quiet mesh never brings).
func (u *uiSession) indexApplied(snap *model.Snapshot, services, known int) {
	whole := complete(snap, u.wantClusters, u.wantEndpoints)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.services, u.known = services, known
	u.indexes++
	if u.allKnown.IsZero() && services > 0 && known == services && whole {
		u.allKnown = time.Now()
	}
}

// fullEDS is when every viewpoint's stream held the EDS of every EDS
// cluster its CDS names (zero: not yet), and how many viewpoints there are.
func (u *uiSession) fullEDS() (bool, int) {
	vps := u.feed.Viewpoints()
	if len(vps) == 0 {
		return false, 0
	}
	for _, vp := range vps {
		if have, want := u.edsOf(vp.String()); want == 0 || have < want {
			return false, len(vps)
		}
	}
	return true, len(vps)
}

// edsOf is how many of the EDS clusters its CDS names a viewpoint holds
// the EDS of (want 0: no CDS yet).
func (u *uiSession) edsOf(vp string) (have, want int) {
	cfg, ok := u.feed.Config(vp)
	if !ok {
		return 0, 0
	}
	for _, c := range cfg.Clusters {
		if c.Type != "EDS" {
			continue
		}
		want++
		if _, _, ok := u.feed.Actual(vp, c.EDSName()); ok {
			have++
		}
	}
	return have, want
}

// uiTimes are the session's milestones, from live.Open.
type uiTimes struct {
	synced, fullEDS, verdicts time.Duration
	viewpoints                int
	services, known           int
}

// progress says where the session is: synced or what is missing, each
// viewpoint's EDS held of its CDS's, the verdicts known, and every
// stream's state and last push.
func (u *uiSession) progress() string {
	var b strings.Builder
	u.mu.Lock()
	synced, last, services, known, indexes := !u.synced.IsZero(), u.last, u.services, u.known, u.indexes
	u.mu.Unlock()
	if synced {
		b.WriteString("synced")
	} else {
		b.WriteString("not synced (")
		if last == nil {
			b.WriteString("no snapshot yet")
		} else {
			for i, c := range last.Clusters {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%s %s", c.ID, c.State)
			}
			fmt.Fprintf(&b, "; %d endpoints", countEndpoints(last))
		}
		b.WriteString(")")
	}
	vps := u.feed.Viewpoints()
	full := 0
	eds := map[string]string{}
	for _, vp := range vps {
		have, want := u.edsOf(vp.String())
		if want > 0 && have == want {
			full++
		}
		eds[vp.String()] = fmt.Sprintf(", EDS %d of %d", have, want)
	}
	fmt.Fprintf(&b, "; full EDS at %d of %d viewpoints; verdicts known %d of %d (%d indexes applied); streams:", full, len(vps), known, services, indexes)
	for _, st := range u.feed.Status() {
		push := "never"
		if !st.LastPush.IsZero() {
			push = time.Since(st.LastPush).Round(time.Millisecond).String() + " ago"
		}
		fmt.Fprintf(&b, " [%s %s%s, last push %s]", st.Viewpoint, st.Text(), eds[st.Viewpoint], push)
	}
	return b.String()
}

// dumpGoroutines writes every goroutine's stack to a file in dir and
// returns its path.
func dumpGoroutines(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "goroutines-*.txt")
	if err != nil {
		return "", err
	}
	defer f.Close()
	return f.Name(), pprof.Lookup("goroutine").WriteTo(f, 2)
}

// Progress lines while waiting, and a goroutine dump once it is long.
const (
	progressEvery = 15 * time.Second
	dumpAfter     = time.Minute
)

// waitReady waits until the mesh is synced, every viewpoint (want of them)
// has its full EDS and every service's verdict is known, or timeout. Every
// 15 s it says where it is; past a minute it dumps the goroutines to a
// file in dumpDir (once).
func (u *uiSession) waitReady(ctx context.Context, wantViewpoints int, timeout time.Duration, dumpDir string) (uiTimes, error) {
	var t uiTimes
	start := time.Now()
	deadline := start.Add(timeout)
	nextProgress := start.Add(progressEvery)
	dumped := false
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if t.fullEDS == 0 {
			if ok, n := u.fullEDS(); ok && n == wantViewpoints {
				t.fullEDS, t.viewpoints = time.Since(u.t0), n
			}
		}
		u.mu.Lock()
		if !u.synced.IsZero() {
			t.synced = u.synced.Sub(u.t0)
		}
		if !u.allKnown.IsZero() {
			t.verdicts = u.allKnown.Sub(u.t0)
		}
		t.services, t.known = u.services, u.known
		err := u.progErr
		u.mu.Unlock()
		if err != nil {
			return t, fmt.Errorf("the UI stopped: %w", err)
		}
		if t.synced > 0 && t.fullEDS > 0 && t.verdicts > 0 {
			return t, nil
		}
		now := time.Now()
		if now.After(nextProgress) {
			nextProgress = now.Add(progressEvery)
			say("UI after %s: %s", now.Sub(start).Round(time.Second), u.progress())
		}
		if !dumped && dumpDir != "" && now.Sub(start) > dumpAfter {
			dumped = true
			if path, err := dumpGoroutines(dumpDir); err != nil {
				say("goroutine dump: %v", err)
			} else {
				say("UI not ready after %s: goroutines dumped to %s", now.Sub(start).Round(time.Second), path)
			}
		}
		if now.After(deadline) {
			return t, fmt.Errorf("not ready after %s: %s", timeout, u.progress())
		}
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-tick.C:
		}
	}
}

// record starts (or stops) recording push-to-screen delays.
func (u *uiSession) record(on bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.recording = on
	if on {
		u.delays = nil
	}
}

// pushes are the recorded delays, and how many events the feed dropped
// over the whole session (gaps in the sequence numbers the UI saw).
func (u *uiSession) pushes() ([]time.Duration, int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	seqs := slices.Clone(u.seqs)
	slices.Sort(seqs)
	dropped := 0
	for i := 1; i < len(seqs); i++ {
		if d := seqs[i] - seqs[i-1]; d > 1 {
			dropped += int(d - 1)
		}
	}
	return slices.Clone(u.delays), dropped
}

// endpoints is the snapshot's endpoint count once synced.
func (u *uiSession) endpoints() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.snap == nil {
		return 0
	}
	return countEndpoints(u.snap)
}

// close stops the UI, the feed and the session.
func (u *uiSession) close() {
	u.cancel()
	if u.feed != nil {
		u.feed.Close()
	}
	if u.session != nil {
		u.session.Close()
	}
	if u.done != nil {
		select {
		case <-u.done:
		case <-time.After(10 * time.Second):
		}
	}
	u.restore()
}

// heapAlloc is the live heap after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// indexCount is how many indexes the UI has derived and applied so far.
func (u *uiSession) indexCount() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.indexes
}
