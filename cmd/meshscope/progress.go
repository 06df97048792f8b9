package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/meshscope/meshscope/model"
)

// progressAfter is how long a wait goes unremarked: most commands answer
// sooner, and a line that flashes by says nothing.
const progressAfter = 2 * time.Second

// progress shows a long wait on stderr when stderr is a terminal: from
// progressAfter on, one line rewritten every second with what is awaited
// (clusters synced, streams waiting), erased before the answer is written.
// When stderr is not a terminal (a pipe, a file, CI) it writes nothing.
type progress struct {
	w       *os.File // nil: not a terminal, nothing is shown
	started time.Time
	mu      sync.Mutex
	status  func() string
	shown   bool
	stopped bool
	done    chan struct{}
}

// startProgress starts showing status (asked once a second) on w, if w is
// a terminal.
func startProgress(w io.Writer, status func() string) *progress {
	p := &progress{started: time.Now(), status: status, done: make(chan struct{})}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.w = f
		go p.run()
	}
	return p
}

func (p *progress) run() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			if time.Since(p.started) >= progressAfter {
				p.draw()
			}
		}
	}
}

// set changes what is awaited.
func (p *progress) set(status func() string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = status
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	line := fmt.Sprintf("meshscope: waiting %s: %s", time.Since(p.started).Round(time.Second), p.status())
	if w, _, err := term.GetSize(int(p.w.Fd())); err == nil && w > 1 && len([]rune(line)) >= w {
		line = string([]rune(line)[:w-2]) + "…" // one line: \r cannot go back up
	}
	fmt.Fprint(p.w, "\r\033[K"+line)
	p.shown = true
}

// stop erases the line and shows nothing more; it may be called again.
func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	close(p.done)
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// stopping is w, stopping the progress line before the first write: the
// answer never shares a line with it.
func (p *progress) stopping(w io.Writer) io.Writer {
	if p.w == nil {
		return w
	}
	return progressOut{w: w, p: p}
}

type progressOut struct {
	w io.Writer
	p *progress
}

func (o progressOut) Write(b []byte) (int, error) {
	o.p.stop()
	return o.w.Write(b)
}

// syncStatus says how far the clusters' sync is: "clusters 1/3 synced
// (cluster2 connecting, cluster3 syncing)".
func syncStatus(snap *model.Snapshot) string {
	if snap == nil || len(snap.Clusters) == 0 {
		return "reading the kubeconfig's clusters"
	}
	synced := 0
	var waiting []string
	for _, c := range snap.Clusters {
		switch c.State {
		case model.StateSynced:
			synced++
		case model.StateRemoved:
		default:
			waiting = append(waiting, c.ID+" "+string(c.State))
		}
	}
	s := fmt.Sprintf("clusters %d/%d synced", synced, synced+len(waiting))
	if len(waiting) > 0 {
		s += " (" + strings.Join(waiting, ", ") + ")"
	}
	return s
}
