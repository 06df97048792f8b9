package ambient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/test/e2e/e2eutil"
	"github.com/meshscope/meshscope/xdsclient"
)

// meshArgs are the flags that point the binary at the ambient lab: both
// contexts, and both istiods by address.
func meshArgs() []string {
	var addrs []string
	for _, is := range theLab.Istiods() {
		addrs = append(addrs, is.Cluster+"="+is.XDSAddress())
	}
	return []string{"--kubeconfig", theLab.Kubeconfig, "--context", "cluster1,cluster2", "--xds-address", strings.Join(addrs, ",")}
}

// command is the binary run with args, on the ambient lab, logging to stderr.
func command(ctx context.Context, t *testing.T, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, e2eutil.Binary(t), append(append(args, meshArgs()...), "--log-file", "-")...)
}

// explainResult is the part of explain -o json this test reads.
type explainResult struct {
	Service  string                `json:"service"`
	Views    []json.RawMessage     `json:"views"`
	Ztunnels []ambient.Explanation `json:"ztunnels"`
}

// runExplain runs the binary's explain and returns its JSON and exit code.
func runExplain(t *testing.T, args ...string) (explainResult, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := command(ctx, t, append([]string{"explain"}, args...)...)
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("explain: %v", err)
	}
	var res explainResult
	if strings.Contains(strings.Join(args, " "), "-o json") {
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("explain -o json: %v\n%s", err, out)
		}
	}
	return res, code
}

// ztunnelRows describes an explanation: its verdict and one line per
// workload sent ("kind capacity gateway") and per drop reason.
func ztunnelRows(z ambient.Explanation) string {
	var rows []string
	for _, w := range z.Prediction.Workloads {
		rows = append(rows, fmt.Sprintf("%s cap=%d gw=%s", w.Kind, w.Capacity, w.Gateway))
	}
	for _, d := range z.Prediction.Dropped {
		if len(d.Pods) > 0 {
			rows = append(rows, fmt.Sprintf("dropped %s %d", d.Reason, len(d.Pods)))
		}
	}
	return fmt.Sprintf("%s: %s", z.Verdict, strings.Join(rows, ", "))
}

// explainUntil runs explain until each control plane's ztunnel view of the
// service is want (istiod and the collector may take a moment to follow a
// change), and returns the last result.
func explainUntil(t *testing.T, service string, want map[string]string) explainResult {
	t.Helper()
	var res explainResult
	eventually(t, 60*time.Second, func() string {
		var code int
		start := time.Now()
		res, code = runExplain(t, service, "-o", "json")
		t.Logf("explain %s took %s", service, time.Since(start).Round(time.Millisecond))
		got := map[string]string{}
		for _, z := range res.Ztunnels {
			got[z.ControlPlane] = ztunnelRows(z)
		}
		for cp, w := range want {
			if got[cp] != w {
				return fmt.Sprintf("explain %s: %s is %q, want %q (exit %d)", service, cp, got[cp], w, code)
			}
		}
		if code != 0 {
			return fmt.Sprintf("explain %s exits %d", service, code)
		}
		return ""
	})
	return res
}

// watchZtunnel runs `watch --from ztunnel@cp` in the background and
// collects its JSON lines until the test ends.
type watchZtunnel struct {
	mu     sync.Mutex
	events []xdsclient.Event
}

func startWatch(t *testing.T, cp string) *watchZtunnel {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := command(ctx, t, "watch", "--from", "ztunnel@"+cp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &watchZtunnel{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var e xdsclient.Event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				w.mu.Lock()
				w.events = append(w.events, e)
				w.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done; _ = cmd.Wait() })
	return w
}

// pushed waits for a wds line after the first n whose address changes
// include name with change.
func (w *watchZtunnel) pushed(t *testing.T, n int, name, change string) {
	t.Helper()
	eventually(t, 30*time.Second, func() string {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, e := range w.events[min(n, len(w.events)):] {
			if e.Type == xdsclient.EventWDS && changed(e, name, change) {
				return ""
			}
		}
		return fmt.Sprintf("watch printed no wds push with %s %s among %d lines", change, name, len(w.events))
	})
}

func (w *watchZtunnel) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.events)
}

// TestAmbientCommands: the built binary against the ambient lab, as a user
// runs it. explain of the global and the non-global service asks both
// istiods as ztunnels and matches the prediction (helloworld: the own pods
// and one split-horizon workload per other network with the pods' number
// as capacity; sleep: the other cluster's pod dropped as not global);
// doctor finds no ambient problem and no difference. Then cluster2's
// east-west Gateway loses its address and cluster2's helloworld its
// istio.io/global label: `watch --from ztunnel@cluster1` prints each push,
// explain follows with the changed prediction (and still matches istiod),
// doctor reports the missing gateway; both are undone.
func TestAmbientCommands(t *testing.T) {
	ctx := context.Background()
	gw1, gw2 := lab.AmbientGatewayIP("cluster1")+":15008", lab.AmbientGatewayIP("cluster2")+":15008"
	res := explainUntil(t, "helloworld.ambient", map[string]string{
		"cluster1": "match: pod cap=0 gw=, split-horizon cap=2 gw=" + gw2,
		"cluster2": "match: pod cap=0 gw=, pod cap=0 gw=, split-horizon cap=1 gw=" + gw1,
	})
	if len(res.Views) != 0 || len(res.Ztunnels) != 2 {
		t.Errorf("helloworld.ambient (all pods in ambient mode): %d sidecar views, %d ztunnel views; want 0 and 2", len(res.Views), len(res.Ztunnels))
	}
	explainUntil(t, "sleep.ambient", map[string]string{
		"cluster1": "match: pod cap=0 gw=, dropped not-global 1",
		"cluster2": "match: pod cap=0 gw=, dropped not-global 1",
	})
	out, _ := command(ctx, t, "explain", "sleep.ambient", "--from", "ztunnel@cluster2").Output()
	for _, want := range []string{"from ztunnel@cluster2 (control plane cluster2, network network2): MATCH", "WDS is per istiod", "DROPPED  not-global"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("explain sleep --from ztunnel@cluster2 lacks %q:\n%s", want, out)
		}
	}
	doctor := func() string {
		// A short timeout keeps the test quick: the sidecar part (xDS)
		// is TestAmbientSidecarEDS's.
		out, _ := command(ctx, t, "doctor", "--timeout", "5s").Output()
		return string(out)
	}
	start := time.Now()
	d := doctor()
	t.Logf("doctor took %s", time.Since(start).Round(time.Millisecond))
	for _, kind := range []string{"ambient-no-gateway", "ambient-several-gateways", "ambient-gateway-ignored", "ambient-scope-mismatch", "wds-differs"} {
		if strings.Contains(d, kind) {
			t.Errorf("doctor on the ambient lab reports %s:\n%s", kind, d)
		}
	}

	w := startWatch(t, "cluster1")
	sh := "network2/SplitHorizonWorkload/istio-system/istio-eastwestgateway/" + lab.AmbientGatewayIP("cluster2") + "/" + helloKey
	w.pushed(t, 0, sh, xdsclient.AddressAdded) // the first, full push

	// The gateway loses its address.
	t.Cleanup(func() { _ = theLab.SetAmbientGatewayAddresses(ctx, "cluster2", lab.AmbientGatewayIP("cluster2")) })
	n := w.count()
	if err := theLab.SetAmbientGatewayAddresses(ctx, "cluster2"); err != nil {
		t.Fatal(err)
	}
	w.pushed(t, n, sh, xdsclient.AddressRemoved)
	explainUntil(t, "helloworld.ambient", map[string]string{"cluster1": "match: pod cap=0 gw=, dropped no-gateway 2"})
	if d := doctor(); !strings.Contains(d, "ambient-no-gateway") || strings.Contains(d, "wds-differs") {
		t.Errorf("doctor does not report the gateway without address:\n%s", d)
	}
	n = w.count()
	if err := theLab.SetAmbientGatewayAddresses(ctx, "cluster2", lab.AmbientGatewayIP("cluster2")); err != nil {
		t.Fatal(err)
	}
	w.pushed(t, n, sh, xdsclient.AddressAdded)

	// cluster2's helloworld is no longer global.
	global := "true"
	t.Cleanup(func() {
		_ = theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.AmbientNamespace, "helloworld", lab.GlobalLabel, &global)
	})
	n = w.count()
	if err := theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.AmbientNamespace, "helloworld", lab.GlobalLabel, nil); err != nil {
		t.Fatal(err)
	}
	w.pushed(t, n, sh, xdsclient.AddressRemoved)
	explainUntil(t, "helloworld.ambient", map[string]string{
		"cluster1": "match: pod cap=0 gw=, dropped not-global 2",
		"cluster2": "match: pod cap=0 gw=, pod cap=0 gw=, dropped local-not-global 1",
	})
	n = w.count()
	if err := theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.AmbientNamespace, "helloworld", lab.GlobalLabel, &global); err != nil {
		t.Fatal(err)
	}
	w.pushed(t, n, sh, xdsclient.AddressAdded)
}

// TestAmbientTUI: the terminal UI on the ambient lab (tmux): the services
// view shows the data-plane mode; helloworld.ambient opens on its ztunnel
// view, one column per istiod, each matching what that istiod sent.
func TestAmbientTUI(t *testing.T) {
	ts := e2eutil.StartTUI(t, "meshscope-e2e-ambient", 160, meshArgs()...)
	ts.WaitScreen("both clusters synced and every stream up (4 sidecars, 2 ztunnels)", 40*time.Second, func(s string) bool {
		return strings.Contains(s, "clusters 2/2 synced") && strings.Contains(s, "xds 6/6 up")
	})
	ts.Keys("/")
	ts.Keys("helloworld.ambient")
	s := ts.WaitScreen("the services view with the MODE column", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "MODE") && strings.Contains(s, "ambient")
	})
	t.Logf("services:\n%s", s)
	ts.Keys("Enter")
	ts.Keys("Enter")
	s = ts.WaitScreen("helloworld's ztunnel view from both istiods, matching", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "ztunnel @ cluster1 (network1)") && strings.Contains(s, "ztunnel @ cluster2 (network2)") &&
			strings.Count(s, "verdict match") == 2 && strings.Contains(s, "via "+lab.AmbientGatewayIP("cluster2")+":15008 cap 2")
	})
	t.Logf("ztunnel view on the ambient lab:\n%s", s)
	ts.Quit()
}
