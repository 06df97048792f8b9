package xdsclient

import (
	"testing"
	"time"
)

// TestEDSOnly: a one-service client asks EDS for its names and nothing
// else — no CDS request ever reaches the server — and gets them.
func TestEDSOnly(t *testing.T) {
	if _, err := New(Options{Viewpoint: net1, Transport: TransportConfig{Address: "127.0.0.1:1"}, EDSOnly: true}); err == nil {
		t.Fatal("EDSOnly without names was accepted")
	}
	for _, mode := range []Mode{ModeSotW, ModeDelta} {
		t.Run(string(mode), func(t *testing.T) {
			srv := startServer(t, "127.0.0.1:0")
			srv.set(t, net1.NodeID(), "v1", lab(1))
			c, rec := runClient(t, Options{Viewpoint: net1, Mode: mode, Transport: TransportConfig{Address: srv.addr},
				EDSNames: []string{helloEDS}, EDSOnly: true})
			rec.wait(t, 5*time.Second, "hello's EDS", func(ev Event) bool {
				_, ok := c.LoadAssignment(helloEDS)
				return ev.Type == EventEDS && ok
			})
			if cl := c.Clusters(); len(cl) != 0 {
				t.Errorf("an EDS-only client holds CDS: %+v", cl)
			}
			if _, ok := c.LoadAssignment(sleepEDS); ok {
				t.Error("an EDS-only client holds a cluster it did not ask for")
			}
			sotw, delta := srv.requests()
			for _, r := range sotw {
				if r.GetTypeUrl() != endpointTypeURL {
					t.Errorf("request for %s", r.GetTypeUrl())
				}
			}
			for _, r := range delta {
				if r.GetTypeUrl() != endpointTypeURL {
					t.Errorf("request for %s", r.GetTypeUrl())
				}
			}
			if err := c.setEDSNames(nil); err == nil {
				t.Error("an EDS-only client agreed to follow CDS")
			}
		})
	}
}
