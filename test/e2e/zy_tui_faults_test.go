package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshscope/meshscope/lab"
)

// TestTUIFaultMatrix opens the UI on the lab as a user starts it (one
// context, istiod through a port-forward) and breaks the mesh under it:
// istiod killed and started again, cluster2's API server stopped and
// started (with the terminal shrunk to 60×15 meanwhile), cluster2's remote
// secret deleted and created again, the terminal resized. After each fault
// the UI is still up, says on screen what is wrong, recovers, and shows no
// data as fresher than it is: the stale marks while the streams are down,
// a push age that keeps growing, cluster2's state and "as last seen" while
// its API server is away, cluster2 gone from the services' presence while
// its secret is. Nothing but the UI may appear on screen (client-go's own
// logging used to).
func TestTUIFaultMatrix(t *testing.T) {
	ctx := context.Background()
	gatewayStandIns(ctx, t) // the gateways' proxies are connected, as in a real mesh
	ts := startTUI(t, "meshscope-e2e-faults", 140, "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1")
	wait := func(what string, timeout time.Duration, ok func(string) bool) string {
		t.Helper()
		return ts.WaitScreen(what, timeout, func(s string) bool {
			if junk := notUI(s); junk != "" {
				t.Fatalf("not the UI's own output on screen (%s):\n%s", junk, s)
			}
			return ok(s)
		})
	}
	// The faults run one after the other on one UI; each undoes itself
	// (deferred, also on failure) before the next.
	section := func(name string, fault func()) {
		t.Logf("fault: %s", name)
		fault()
	}
	healthy := func(s string) bool {
		return strings.Contains(s, "clusters 2/2 synced") && strings.Contains(s, "xds 2/2 up") && !strings.Contains(s, "stale")
	}
	wait("both clusters synced and both streams up", 60*time.Second, healthy)
	ts.Keys(":svc", "Enter")
	wait("helloworld matches from both viewpoints", 30*time.Second, func(s string) bool {
		return strings.HasSuffix(row(s, "helloworld.sample"), " match") && strings.Contains(s, "✓✓")
	})

	section("istiod killed", func() {
		started := sync.OnceFunc(func() {
			if err := theLab.StartIstiod(ctx, 0); err != nil {
				t.Fatal(err)
			}
		})
		defer started()
		if err := theLab.KillIstiod(0); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		s := wait("both streams down, helloworld's verdict marked stale", 60*time.Second, func(s string) bool {
			return strings.Contains(s, "xds 0/2 up") && strings.HasSuffix(row(s, "helloworld.sample"), "match,stale")
		})
		t.Logf("%s after the kill: %s", time.Since(killed).Round(time.Millisecond), statusBar(s))
		ts.Keys("Enter") // helloworld's service view
		s = wait("each column says its EDS is stale", 20*time.Second, func(s string) bool {
			return strings.Contains(s, "Service helloworld") && strings.Count(s, "stale: stream ") == 2
		})
		t.Logf("the service view's columns: %s", row(s, "stale: stream "))
		// No push can come from a dead istiod: the age the status bar
		// gives the last push must keep up with the time since the kill.
		time.Sleep(3 * time.Second)
		s = ts.Screen()
		if age, ok := pushAge(s); !ok || age < time.Since(killed)-2*time.Second {
			t.Errorf("the status bar claims a push %s ago, %s after istiod was killed:\n%s", age, time.Since(killed).Round(time.Second), statusBar(s))
		}
		started()
		restarted := time.Now()
		s = wait("both streams up again, no stale mark", 120*time.Second, func(s string) bool {
			return healthy(s) && strings.Count(s, "verdict match") == 2
		})
		t.Logf("recovered %s after istiod was ready again: %s", time.Since(restarted).Round(time.Millisecond), statusBar(s))
		ts.Keys("Escape")
	})

	section("API server stopped", func() {
		started := sync.OnceFunc(func() {
			if err := theLab.StartAPIServer(ctx, "cluster2"); err != nil {
				t.Fatal(err)
			}
		})
		defer started()
		if err := theLab.StopAPIServer("cluster2"); err != nil {
			t.Fatal(err)
		}
		wait("the services list says cluster2's marks are as last seen", 60*time.Second, func(s string) bool {
			return strings.Contains(s, "clusters 1/2 synced") && strings.Contains(s, "2=cluster2 (error: as last seen)")
		})
		ts.Keys(":clusters", "Enter", "Down")
		s := wait("cluster2 in error, unreachable", 20*time.Second, func(s string) bool {
			return strings.Contains(row(s, "cluster2 secret"), "error") && strings.Contains(s, "unreachable")
		})
		t.Logf("cluster2 while its API server is down: %s", row(s, "cluster2 secret"))
		ts.Resize(60, 15)
		s = wait("at 60×15: too small, and still that a cluster is out of sync", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "terminal too small (need 80×24, have 60×15)") && strings.Contains(s, "press q to quit") &&
				strings.Contains(s, "clusters 1/2 synced")
		})
		t.Logf("the 60×15 screen:\n%s", s)
		started()
		wait("at 60×15: cluster2 synced again", 60*time.Second, func(s string) bool { return strings.Contains(s, "clusters 2/2 synced") })
		ts.Resize(140, 40)
		wait("back at 140×40: the clusters view, both synced", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "Clusters — 2 of 2 synced") && !strings.Contains(s, "too small") &&
				!strings.Contains(row(s, "cluster2 secret"), "error")
		})
	})

	section("remote secret deleted", func() {
		name := lab.RemoteSecretName("cluster2")
		recreated := sync.OnceFunc(func() {
			if err := theLab.RotateRemoteSecret(ctx, "cluster1", "cluster2"); err != nil {
				t.Fatal(err)
			}
		})
		defer func() {
			recreated()
			waitIstiodReads(t, "cluster1", "cluster2", true)
		}()
		if err := theLab.DeleteRemoteSecret(ctx, "cluster1", name); err != nil {
			t.Fatal(err)
		}
		wait("cluster2 removed", 30*time.Second, func(s string) bool { return strings.Contains(row(s, "cluster2 secret"), "removed") })
		ts.Keys(":svc", "Enter")
		s := wait("cluster2 gone from helloworld's presence and endpoint counts", 20*time.Second, func(s string) bool {
			r := row(s, "helloworld.sample")
			return strings.Contains(r, "✓·") && strings.Contains(s, "EPS network1 ") && !strings.Contains(s, "network1/network2")
		})
		t.Logf("helloworld without cluster2: %s", row(s, "helloworld.sample"))
		recreated()
		wait("cluster2 back in helloworld's presence, both synced", 60*time.Second, func(s string) bool {
			return strings.Contains(row(s, "helloworld.sample"), "✓✓") && strings.Contains(s, "clusters 2/2 synced")
		})
	})

	section("resized", func() {
		ts.Resize(60, 15)
		wait("at 60×15: too small, healthy", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "terminal too small") && strings.Contains(s, "clusters 2/2 synced") && strings.Contains(s, "xds 2/2 up")
		})
		ts.Keys("?") // keys other than q do nothing while too small
		ts.Resize(140, 40)
		wait("back at 140×40: the services view as it was", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "Services (") && healthy(s) && strings.HasSuffix(row(s, "helloworld.sample"), " match")
		})
	})
	ts.Quit()
}

// row is the screen line that contains key, trimmed ("" if none).
func row(screen, key string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, key) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// statusBar is the screen's last line, trimmed.
func statusBar(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

var pushAgeRE = regexp.MustCompile(`push (\d+)([smhd]) ago`)

// pushAge is the age of the last push the status bar gives.
func pushAge(screen string) (time.Duration, bool) {
	m := pushAgeRE.FindStringSubmatch(statusBar(screen))
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
	return time.Duration(n) * unit, true
}

// notUI says what on screen is not the UI's (a log line written over it),
// or "".
func notUI(screen string) string {
	for _, junk := range []string{"Unhandled Error", "portforward.go", "level=", "panic:"} {
		if strings.Contains(screen, junk) {
			return junk
		}
	}
	return ""
}
