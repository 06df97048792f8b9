package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/meshscope/meshscope/tui"
)

// headless is the real terminal UI — tui.Model in a Bubble Tea program
// with its renderer — drawing into nothing: the model reads the live feed,
// derives its index and draws every frame as it would in a terminal, and a
// scripted user moves through the views.
type headless struct {
	p    *tea.Program
	done chan error
	// input queues the scripted user's keys and resizes, in order, for
	// one sender: a stuck program must not stop the soak, nor may keys of
	// two steps mix.
	input chan tea.Msg

	mu       sync.Mutex
	messages int           // handled since the last stats call
	probeMax time.Duration // the slowest probe since then
	probes   int           // answered since then
	sent     int           // probes sent, in all
	answered int           // probes answered, in all
}

// uiStats is how the UI loop answered in one sampling interval.
type uiStats struct {
	messages int
	probes   int
	probeMax time.Duration
	// pending is how many probes wait for an answer (one a second is sent).
	pending int
}

// stalled is how many probes may wait before the UI counts as stuck.
const stalled = 3

// peekMsg asks for the frame the model draws now, from the program's own
// goroutine (the model is not safe to read from another).
type peekMsg struct{ reply chan string }

// probeMsg is sent through the program's queue; the time it takes to
// reach Update is how responsive the UI is.
type probeMsg struct{ sent time.Time }

func startUI(ctx context.Context, feed tui.Feed, width, height int) (*headless, error) {
	m, err := tui.New(feed, tui.Options{Theme: "default"})
	if err != nil {
		return nil, err
	}
	h := &headless{done: make(chan error, 1), input: make(chan tea.Msg, 256)}
	h.p = tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(nil),
		tea.WithOutput(io.Discard),
		tea.WithWindowSize(width, height),
		tea.WithColorProfile(colorprofile.TrueColor),
		tea.WithoutSignalHandler(),
		tea.WithFilter(h.filter),
	)
	go func() { _, err := h.p.Run(); h.done <- err }()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case msg := <-h.input:
				h.p.Send(msg)
			}
		}
	}()
	return h, nil
}

// send queues a message of the scripted user; when the queue is full (the
// program has not read for a long while) it is dropped.
func (h *headless) send(msg tea.Msg) {
	select {
	case h.input <- msg:
	default:
	}
}

// filter counts what the program handles and times the probes (which the
// model never sees).
func (h *headless) filter(m tea.Model, msg tea.Msg) tea.Msg {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.messages++
	switch msg := msg.(type) {
	case probeMsg:
		h.probes++
		h.answered++
		h.probeMax = max(h.probeMax, time.Since(msg.sent))
		return nil
	case peekMsg:
		msg.reply <- m.View().Content
		return nil
	}
	return msg
}

// probe sends a probe without waiting: a stuck program must not stop the
// soak, it must show as probes pending.
func (h *headless) probe() {
	h.mu.Lock()
	h.sent++
	h.mu.Unlock()
	go h.p.Send(probeMsg{sent: time.Now()})
}

// stats returns and resets the interval's counts.
func (h *headless) stats() uiStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := uiStats{messages: h.messages, probes: h.probes, probeMax: h.probeMax, pending: h.sent - h.answered}
	h.messages, h.probes, h.probeMax = 0, 0, 0
	return s
}

// typeKeys queues keys as a person types them: text rune by rune, and the
// named keys.
func (h *headless) typeKeys(keys ...string) {
	for _, k := range keys {
		if code, ok := namedKeys[k]; ok {
			h.send(tea.KeyPressMsg{Code: code})
			continue
		}
		for _, r := range k {
			h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
}

var namedKeys = map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "right": tea.KeyRight, "left": tea.KeyLeft, "tab": tea.KeyTab, "down": tea.KeyDown}

// userScript is what the scripted user does, one step every few seconds,
// round and round: every view and command of the UI, so each keeps its
// state up to date through the whole run.
var userScript = [][]string{
	{":svc", "enter"},
	{"s"},                        // sort by namespace
	{"/hello", "enter", "enter"}, // helloworld's service view
	{"right"},
	{":compare network1 network2", "enter"},
	{":events", "enter"},
	{"/eds", "enter"},
	{"esc"}, // clears the filter
	{":problems", "enter"},
	{"down", "down"},
	{":diff network1 network2", "enter"},
	{":pc network1", "enter"},
	{":pc network1 network2", "enter"},
	{"?"}, {"esc"},
	{":clusters", "enter"},
	{"tab", "down"},
	{":svc", "enter", "esc"}, // the filter stays until esc
	{"s", "s", "s"},          // back to sorting by hostname
}

// step does step i of the scripted user — the script, round and round,
// then the terminal shrunk below the smallest size the UI draws in, and
// back — and says what it did. It only queues (see input).
func (h *headless) step(i int) string {
	n := len(userScript)
	switch i %= n + 2; {
	case i < n:
		keys := userScript[i]
		h.typeKeys(keys...)
		return strings.Join(keys, " ")
	case i == n:
		h.send(tea.WindowSizeMsg{Width: smallWidth, Height: smallHeight})
		return fmt.Sprintf("resize %d×%d", smallWidth, smallHeight)
	default:
		h.send(tea.WindowSizeMsg{Width: uiWidth, Height: uiHeight})
		return fmt.Sprintf("resize %d×%d", uiWidth, uiHeight)
	}
}

// stop quits the program and waits for it.
func (h *headless) stop() error {
	h.p.Quit()
	return <-h.done
}

// screen is the frame the model draws now, or "" when the program does
// not answer within a few seconds.
func (h *headless) screen() string {
	reply := make(chan string, 1)
	go h.p.Send(peekMsg{reply: reply})
	select {
	case s := <-reply:
		return s
	case <-time.After(5 * time.Second):
		return ""
	}
}
