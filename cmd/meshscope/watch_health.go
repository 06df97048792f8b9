package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// streamHealth follows each stream of a watch from its events: up after
// a connect, a reconnect or any response; down after a disconnect or a
// failed attempt, with why. What is not up when watch ends is what it
// could not read (exit 3).
type streamHealth struct {
	mu      sync.Mutex
	streams map[streamKey]*streamState
	order   []streamKey
}

type streamKey struct{ controlPlane, viewpoint string }

type streamState struct {
	up  bool
	why string
}

func newStreamHealth() *streamHealth {
	return &streamHealth{streams: map[streamKey]*streamState{}}
}

// see follows one event (from any stream's goroutine).
func (h *streamHealth) see(ev xdsclient.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := streamKey{ev.ControlPlane, ev.Viewpoint}
	st, ok := h.streams[k]
	if !ok {
		st = &streamState{}
		h.streams[k] = st
		h.order = append(h.order, k)
	}
	switch ev.Type {
	case xdsclient.EventError, xdsclient.EventDisconnect:
		st.up = false
		st.why = ev.Message
		if st.why == "" {
			st.why = ev.Error
		}
	default: // connect, reconnect, a response, a NACK: the stream works
		st.up = true
	}
}

// unread are the streams not up: each with its last cause.
func (h *streamHealth) unread() []model.Incomplete {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []model.Incomplete
	for _, k := range h.order {
		if st := h.streams[k]; !st.up {
			out = append(out, model.Incomplete{Cluster: k.controlPlane, What: model.IncompleteXDS,
				Why: fmt.Sprintf("stream %s: %s", k.viewpoint, orText(st.why, "no answer yet"))})
		}
	}
	return out
}

// status says how many streams are up, for the progress line: "streams up
// 0/2 (cluster1/network1 on cluster1: connection refused)".
func (h *streamHealth) status() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	up := 0
	var down []string
	for _, k := range h.order {
		if st := h.streams[k]; st.up {
			up++
		} else {
			down = append(down, fmt.Sprintf("%s on %s: %s", k.viewpoint, k.controlPlane, orText(st.why, "connecting")))
		}
	}
	if len(h.order) == 0 {
		return "waiting for istiod's first answer"
	}
	s := fmt.Sprintf("streams up %d/%d", up, len(h.order))
	if len(down) > 0 {
		s += " (" + strings.Join(down, "; ") + ")"
	}
	return s
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
