package xdsclient

import (
	"strings"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

var net1 = Viewpoint{Cluster: "cluster1", Network: "network1", Namespace: "sample"}

func hasEndpointChange(ev Event, change, addr string, port, weight uint32) bool {
	for _, c := range ev.Endpoints {
		if c.Change == change && c.Address == addr && c.Port == port && c.Weight == weight {
			return true
		}
	}
	return false
}

// TestStreams runs the same story on SotW and Delta: subscribe CDS then
// EDS for what CDS names, see a weight change as an EDS diff, ACK it.
func TestStreams(t *testing.T) {
	for _, mode := range []Mode{ModeSotW, ModeDelta} {
		t.Run(string(mode), func(t *testing.T) {
			srv := startServer(t, "127.0.0.1:0")
			srv.set(t, net1.NodeID(), "v1", lab(1))
			c, rec := runClient(t, Options{Viewpoint: net1, Mode: mode, Transport: TransportConfig{Address: srv.addr}, ControlPlane: "cluster1"})

			rec.wait(t, 5*time.Second, "connect", isType(EventConnect))
			cds := rec.wait(t, 5*time.Second, "cds event", isType("cds"))
			if len(cds.Added) != 2 || cds.Resources != 2 || cds.Bytes == 0 || cds.Nonce == "" {
				t.Errorf("cds event = %+v", cds)
			}
			eds := rec.wait(t, 5*time.Second, "eds with both clusters", func(ev Event) bool {
				_, ok := c.LoadAssignment(helloEDS)
				_, ok2 := c.LoadAssignment(sleepEDS)
				return ev.Type == "eds" && ok && ok2
			})
			if eds.ControlPlane != "cluster1" || eds.Viewpoint != "cluster1/network1" {
				t.Errorf("event labels: %q %q", eds.ControlPlane, eds.Viewpoint)
			}
			la, _ := c.LoadAssignment(helloEDS)
			if len(la.Endpoints) != 2 {
				t.Fatalf("hello endpoints = %+v", la.Endpoints)
			}
			gw := la.Endpoints[1]
			if gw.Address != "192.168.60.9" || gw.Port != 15443 || gw.Weight != 1 || gw.TLSMode != "istio" ||
				gw.Workload.Cluster != "cluster2" || !gw.Gateway() || la.Endpoints[0].Workload.Name != "helloworld-v1-abc" {
				t.Errorf("decoded endpoints = %+v", la.Endpoints)
			}
			if st := c.Status(); st.State != StateConnected || st.Stale {
				t.Errorf("status = %+v", st)
			}
			cl := c.Clusters()
			if len(cl) != 2 || cl[0].Type != "EDS" || cl[0].TLSMode != "auto" {
				t.Errorf("clusters = %+v", cl)
			}

			// Two more pods behind the cluster2 gateway: weight 1 -> 3.
			srv.set(t, net1.NodeID(), "v2", lab(3))
			ev := rec.wait(t, 5*time.Second, "eds weight change", func(ev Event) bool {
				return ev.Type == "eds" && hasEndpointChange(ev, EndpointWeight, "192.168.60.9", 15443, 3)
			})
			for _, ch := range ev.Endpoints {
				if ch.Change == EndpointWeight && ch.OldWeight != 1 {
					t.Errorf("old weight = %d, want 1", ch.OldWeight)
				}
			}
			if len(ev.Changed) != 1 || ev.Changed[0] != helloEDS {
				t.Errorf("changed = %v, want only hello", ev.Changed)
			}
			// The server must have seen an ACK of that response's nonce.
			waitFor(t, 3*time.Second, "ACK of the EDS push", func() bool {
				sotw, delta := srv.requests()
				for _, r := range sotw {
					if r.GetTypeUrl() == endpointTypeURL && r.GetResponseNonce() == ev.Nonce && r.GetVersionInfo() == ev.Version && r.GetErrorDetail() == nil {
						return true
					}
				}
				for _, r := range delta {
					if r.GetTypeUrl() == endpointTypeURL && r.GetResponseNonce() == ev.Nonce && r.GetErrorDetail() == nil {
						return true
					}
				}
				return false
			})
			// The first request carried the node identity.
			sotw, delta := srv.requests()
			var first string
			if mode == ModeSotW {
				first = sotw[0].GetNode().GetId()
			} else {
				first = delta[0].GetNode().GetId()
			}
			if first != net1.NodeID() {
				t.Errorf("node id on the wire = %q", first)
			}
		})
	}
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if ok() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestExplicitEDS subscribes only the named cluster.
func TestExplicitEDS(t *testing.T) {
	for _, mode := range []Mode{ModeSotW, ModeDelta} {
		t.Run(string(mode), func(t *testing.T) {
			srv := startServer(t, "127.0.0.1:0")
			srv.set(t, net1.NodeID(), "v1", lab(1))
			c, rec := runClient(t, Options{Viewpoint: net1, Mode: mode, Transport: TransportConfig{Address: srv.addr}, EDSNames: []string{helloEDS}})
			rec.wait(t, 5*time.Second, "eds", isType("eds"))
			waitFor(t, 5*time.Second, "clusters", func() bool { return len(c.Clusters()) == 2 })
			las := c.LoadAssignments()
			if len(las) != 1 || las[0].Cluster != helloEDS {
				t.Fatalf("load assignments = %+v", las)
			}
			sotw, delta := srv.requests()
			for _, r := range sotw {
				for _, n := range r.GetResourceNames() {
					if n == sleepEDS {
						t.Errorf("asked for %s", n)
					}
				}
			}
			for _, r := range delta {
				for _, n := range r.GetResourceNamesSubscribe() {
					if n == sleepEDS {
						t.Errorf("asked for %s", n)
					}
				}
			}
			// Back to following CDS picks up the other cluster.
			if err := c.setEDSNames(nil); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "sleep endpoints after SetEDSNames(nil)", func() bool {
				_, ok := c.LoadAssignment(sleepEDS)
				return ok
			})
		})
	}
}

// TestListenersOnDemand turns LDS on later and follows LDS to RDS.
func TestListenersOnDemand(t *testing.T) {
	for _, mode := range []Mode{ModeSotW, ModeDelta} {
		t.Run(string(mode), func(t *testing.T) {
			srv := startServer(t, "127.0.0.1:0")
			srv.set(t, net1.NodeID(), "v1", lab(1))
			c, rec := runClient(t, Options{Viewpoint: net1, Mode: mode, Transport: TransportConfig{Address: srv.addr}})
			rec.wait(t, 5*time.Second, "eds", isType("eds"))
			if len(c.Listeners()) != 0 {
				t.Fatal("listeners before asking")
			}
			if err := c.WatchListeners(); err != nil {
				t.Fatal(err)
			}
			rec.wait(t, 5*time.Second, "rds", isType("rds"))
			ls, rs := c.Listeners(), c.Routes()
			if len(ls) != 1 || ls[0].Port != 80 || len(ls[0].Routes) != 1 || ls[0].Routes[0] != "80" {
				t.Errorf("listeners = %+v", ls)
			}
			if len(rs) != 1 || rs[0].Name != "80" || len(rs[0].VirtualHosts) != 1 || rs[0].VirtualHosts[0].Routes != 1 {
				t.Errorf("routes = %+v", rs)
			}
		})
	}
}

// TestReconnect stops the server (istiod restarting), checks the view goes
// stale with a disconnect event, starts a new server on the same port and
// checks the client resubscribes everything and gets the same EDS again.
func TestReconnect(t *testing.T) {
	for _, mode := range []Mode{ModeSotW, ModeDelta} {
		t.Run(string(mode), func(t *testing.T) {
			srv := startServer(t, "127.0.0.1:0")
			srv.set(t, net1.NodeID(), "v1", lab(1))
			c, rec := runClient(t, Options{Viewpoint: net1, Mode: mode, Transport: TransportConfig{Address: srv.addr}, EDSNames: []string{helloEDS}})
			rec.wait(t, 5*time.Second, "eds", isType("eds"))

			srv.stop()
			dis := rec.wait(t, 5*time.Second, "disconnect", isType(EventDisconnect))
			if dis.Message == "" {
				t.Error("disconnect without a sentence")
			}
			st := c.Status()
			if !st.Stale || st.State == StateConnected {
				t.Errorf("status while down = %+v", st)
			}
			// Data is kept (stale), not thrown away.
			if _, ok := c.LoadAssignment(helloEDS); !ok {
				t.Error("endpoints dropped while disconnected")
			}
			// Failed attempts while down are events with a sentence.
			fail := rec.wait(t, 5*time.Second, "failed attempt", isType(EventError))
			if !strings.Contains(fail.Message, "connection refused") {
				t.Errorf("failed attempt message = %q", fail.Message)
			}

			srv2 := startServer(t, srv.addr)
			srv2.set(t, net1.NodeID(), "v1", lab(1))
			rec.wait(t, 10*time.Second, "reconnect", isType(EventReconnect))
			eds := rec.wait(t, 5*time.Second, "eds after reconnect", isType("eds"))
			if len(eds.Added)+len(eds.Removed)+len(eds.Changed) != 0 || len(eds.Endpoints) != 0 {
				t.Errorf("same EDS after reconnect should be no change, got %+v", eds)
			}
			la, _ := c.LoadAssignment(helloEDS)
			if len(la.Endpoints) != 2 {
				t.Errorf("endpoints after reconnect = %+v", la.Endpoints)
			}
			if st := c.Status(); st.Stale || st.State != StateConnected {
				t.Errorf("status after reconnect = %+v", st)
			}
			// The new server got the full subscription again.
			sotw, delta := srv2.requests()
			asked := map[string]bool{}
			for _, r := range sotw {
				asked[r.GetTypeUrl()] = true
			}
			for _, r := range delta {
				asked[r.GetTypeUrl()] = true
			}
			if !asked[ClusterTypeURL] || !asked[endpointTypeURL] {
				t.Errorf("resubscribed types = %v", asked)
			}
		})
	}
}

// TestRemovedWhileDisconnected: a cluster that vanished while the client
// was away is reported removed by the first CDS after reconnecting.
func TestRemovedWhileDisconnected(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	srv.set(t, net1.NodeID(), "v1", lab(1))
	c, rec := runClient(t, Options{Viewpoint: net1, Transport: TransportConfig{Address: srv.addr}})
	rec.wait(t, 5*time.Second, "eds", func(ev Event) bool { return ev.Type == "eds" && len(c.LoadAssignments()) == 2 })
	srv.stop()
	rec.wait(t, 5*time.Second, "disconnect", isType(EventDisconnect))
	srv2 := startServer(t, srv.addr)
	res := lab(1)
	res["type.googleapis.com/envoy.config.cluster.v3.Cluster"] = res["type.googleapis.com/envoy.config.cluster.v3.Cluster"][:1]
	res["type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"] = res["type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"][:1]
	srv2.set(t, net1.NodeID(), "v2", res)
	cds := rec.wait(t, 10*time.Second, "cds after reconnect", isType("cds"))
	if len(cds.Removed) != 1 || cds.Removed[0] != sleepEDS {
		t.Errorf("removed = %v", cds.Removed)
	}
	waitFor(t, 3*time.Second, "sleep endpoints dropped", func() bool {
		_, ok := c.LoadAssignment(sleepEDS)
		return !ok
	})
}

// TestDialFailures: every failure is a state with a sentence, quickly.
func TestDialFailures(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		srv := startServer(t, "127.0.0.1:0")
		addr := srv.addr
		srv.stop()
		c, rec := runClient(t, Options{Viewpoint: net1, Transport: TransportConfig{Address: addr}})
		ev := rec.wait(t, 5*time.Second, "error", isType(EventError))
		if !strings.Contains(ev.Message, "connection refused") || !strings.Contains(ev.Message, addr) {
			t.Errorf("message = %q", ev.Message)
		}
		if st := c.Status(); !st.Stale || st.Message == "" {
			t.Errorf("status = %+v", st)
		}
	})
	t.Run("silent", func(t *testing.T) {
		// Accepts TCP, never speaks: the dial timeout must fire.
		lis := listenSilent(t)
		_, rec := runClient(t, Options{Viewpoint: net1, Transport: TransportConfig{Address: lis}, DialTimeout: 300 * time.Millisecond})
		ev := rec.wait(t, 5*time.Second, "error", isType(EventError))
		if !strings.Contains(ev.Message, "no answer") && !strings.Contains(ev.Message, "does not speak") && !strings.Contains(ev.Message, "lost the connection") {
			t.Errorf("message = %q", ev.Message)
		}
	})
	t.Run("tls to plaintext", func(t *testing.T) {
		srv := startServer(t, "127.0.0.1:0")
		_, rec := runClient(t, Options{Viewpoint: net1, Transport: TransportConfig{Address: srv.addr, TLS: true}})
		ev := rec.wait(t, 5*time.Second, "error", isType(EventError))
		if !strings.Contains(ev.Message, "TLS") {
			t.Errorf("message = %q", ev.Message)
		}
	})
	t.Run("token without tls", func(t *testing.T) {
		if _, err := Dial(TransportConfig{Address: "127.0.0.1:1", TokenFile: "/nonexistent"}); err == nil || !strings.Contains(err.Error(), "TLS") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("bad ca file", func(t *testing.T) {
		_, err := Dial(TransportConfig{Address: "127.0.0.1:1", TLS: true, CAFile: "/nonexistent/ca.pem"})
		if err == nil || !strings.Contains(err.Error(), "CA file") {
			t.Errorf("err = %v", err)
		}
	})
}

var _ = discovery.DiscoveryRequest{}
