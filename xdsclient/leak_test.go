package xdsclient

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestStopReleasesEverything: clients sharing a connection, stopped,
// leave no goroutines, streams or connections behind (OpenNow counted them
// while they ran), and a shared journal holds their events.
func TestStopReleasesEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	openBefore := OpenNow()
	func() {
		srv := startServer(t, "127.0.0.1:0")
		defer srv.stop()
		srv.set(t, net1.NodeID(), "v1", lab(1))
		conn, err := Dial(TransportConfig{Address: srv.addr})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		j := newJournal[Event](100)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{}, 5)
		var clients []*Client
		for i := 0; i < 5; i++ {
			c, err := New(Options{Viewpoint: net1, Conn: conn, Journal: j})
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, c)
			go func() { _ = c.Run(ctx); done <- struct{}{} }()
		}
		waitFor(t, 5*time.Second, "all synced", func() bool {
			for _, c := range clients {
				if len(c.LoadAssignments()) != 2 {
					return false
				}
			}
			return true
		})
		if got := OpenNow(); got.Streams != openBefore.Streams+5 || got.Connections != openBefore.Connections+1 {
			t.Errorf("OpenNow with 5 streams on one connection = %+v, before %+v", got, openBefore)
		}
		cancel()
		for range clients {
			<-done
		}
		for _, c := range clients {
			if st := c.Status(); st.State != StateStopped || !st.Stale {
				t.Errorf("status after stop = %+v", st)
			}
		}
		connects := 0
		for _, ev := range j.items() {
			if ev.Type == EventConnect {
				connects++
			}
		}
		if connects != 5 {
			t.Errorf("journal has %d connect events, want 5", connects)
		}
	}()
	waitFor(t, 5*time.Second, "goroutines back to the start", func() bool {
		return runtime.NumGoroutine() <= before
	})
	if got := OpenNow(); got != openBefore {
		t.Errorf("OpenNow after stop = %+v, want %+v", got, openBefore)
	}
}
