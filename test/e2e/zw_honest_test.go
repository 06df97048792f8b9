package e2e

// Every command honest about what it could not read (issue #35): each
// command run as a user runs it, against the lab healthy and broken in
// four ways, with its exit code, its text's first line and its JSON's
// "incomplete" list checked; the UI's empty views the same, in tmux. It
// stops an API server and an istiod, so it runs after the quieter tests
// (files run in name order) and restores the lab after each fault.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshscope/meshscope/model"
)

// honestCmd is one command as a user runs it: text, then -o json.
type honestCmd struct {
	name       string
	args, json []string
	// watch runs until interrupted: it gets SIGINT after watchFor.
	watch bool
}

// honestFault is one state of the lab and what every command must say in
// it.
type honestFault struct {
	name string
	// start puts the lab in this state and returns the mesh flags to run
	// with (kubeconfig, contexts) and how to undo it.
	start func(t *testing.T) (args []string, undo func())
	// exit is each command's exit code (README "Exit codes").
	exit map[string]int
	// cluster is the first incomplete read's cluster; words are on the
	// text's first line (and in the first incomplete's sentence).
	cluster string
	words   []string
	// ui are on the UI's services view; uiEmpty are on its empty views
	// (services, events) when nothing could be read.
	ui      []string
	uiEmpty bool
}

const watchFor = 6 * time.Second

func TestHonestMatrix(t *testing.T) {
	whatIfFile := filepath.Join(t.TempDir(), "unrelated.yaml")
	if err := os.WriteFile(whatIfFile, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: honest-e2e, namespace: sample}\ndata: {k: v}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := []honestCmd{
		{name: "snapshot", args: []string{"snapshot"}, json: []string{"-o", "json"}},
		{name: "explain", args: []string{"explain", "helloworld.sample", "--timeout", "8s"}, json: []string{"-o", "json"}},
		{name: "doctor", args: []string{"doctor", "--timeout", "8s"}, json: []string{"-o", "json"}},
		{name: "proxies", args: []string{"proxies"}, json: []string{"-o", "json"}},
		{name: "what-if", args: []string{"what-if", "-f", whatIfFile}, json: []string{"-o", "json"}},
		{name: "watch", args: []string{"watch", "--from", "cluster1/network1", "-o", "table"}, json: []string{"-o", "jsonl"}, watch: true},
	}
	all := func(code int) map[string]int {
		m := map[string]int{}
		for _, c := range cmds {
			m[c.name] = code
		}
		return m
	}
	lab := []string{"--kubeconfig", theLab.Kubeconfig, "--context", "cluster1"}
	ctx := context.Background()
	faults := []honestFault{
		{name: "healthy", exit: all(0), ui: []string{"helloworld.sample", "clusters 2/2 synced"},
			start: func(*testing.T) ([]string, func()) { return lab, func() {} }},
		{name: "API server stopped", cluster: "cluster2", words: []string{"cluster cluster2 is unreachable"},
			// watch needs istiod only: it reads no cluster.
			exit: map[string]int{"snapshot": 3, "explain": 3, "doctor": 3, "proxies": 3, "what-if": 3, "watch": 0},
			ui:   []string{"helloworld.sample", "clusters 1/2 synced"},
			start: func(t *testing.T) ([]string, func()) {
				if err := theLab.StopAPIServer("cluster2"); err != nil {
					t.Fatal(err)
				}
				return lab, func() {
					if err := theLab.StartAPIServer(ctx, "cluster2"); err != nil {
						t.Errorf("restore cluster2's API server: %v", err)
					}
				}
			}},
		{name: "API server silent", cluster: "silent", words: []string{"cluster silent "},
			exit: map[string]int{"snapshot": 3, "explain": 3, "doctor": 3, "proxies": 3, "what-if": 3, "watch": 0},
			ui:   []string{"helloworld.sample", "clusters 2/3 synced"},
			start: func(t *testing.T) ([]string, func()) {
				addr, stop := silentServer(t)
				kc := kubeconfigWith(t, "silent", "https://"+addr)
				return []string{"--kubeconfig", kc, "--context", "cluster1,silent"}, stop
			}},
		{name: "istiod stopped", cluster: "cluster1", words: []string{"istiod cluster1"},
			// snapshot and what-if read the clusters only.
			exit: map[string]int{"snapshot": 0, "explain": 3, "doctor": 3, "proxies": 3, "what-if": 0, "watch": 3},
			ui:   []string{"helloworld.sample", "xds 0/2"},
			start: func(t *testing.T) ([]string, func()) {
				if err := theLab.StopIstiod(0); err != nil {
					t.Fatal(err)
				}
				return lab, func() {
					if err := theLab.StartIstiod(ctx, 0); err != nil {
						t.Errorf("restore istiod cluster1: %v", err)
					}
				}
			}},
		{name: "only cluster unreachable", cluster: "lonely", words: []string{"lonely", "connection refused"}, exit: all(3),
			ui: []string{"clusters 0/1 synced"}, uiEmpty: true,
			start: func(t *testing.T) ([]string, func()) {
				return []string{"--kubeconfig", lonelyKubeconfig(t, "https://"+closedAddress(t))}, func() {}
			}},
	}
	for n, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			args, undo := f.start(t)
			restored := sync.OnceFunc(func() { undo(); waitLabRead(t) })
			defer restored()
			// A tmux server of its own: the last one may still be exiting.
			ui := startTUI(t, fmt.Sprintf("meshscope-e2e-honest%d", n), 140, args...)
			runAll(t, cmds, args, func(c honestCmd, json bool, out, stderr string, code int) {
				checkHonest(t, f, c, json, out, stderr, code)
			})
			checkHonestUI(t, f, ui)
			if f.name == "istiod stopped" {
				checkProgress(t, args)
			}
			restored()
		})
	}
}

// runAll runs every command, text and JSON, three at a time, and hands
// each answer to check.
func runAll(t *testing.T, cmds []honestCmd, mesh []string, check func(c honestCmd, json bool, out, stderr string, code int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 3)
	for _, c := range cmds {
		for _, js := range []bool{false, true} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				args := append([]string{}, c.args...)
				if js {
					args = append(args, c.json...)
				}
				out, stderr, code := runHonest(t, append(args, mesh...), c.watch)
				check(c, js, out, stderr, code)
			}()
		}
	}
	wg.Wait()
}

// runHonest runs the binary with a pipe for stderr (not a terminal: no
// progress line may appear); a watch gets SIGINT after watchFor.
func runHonest(t *testing.T, args []string, watch bool) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, meshscopeBinary(t), append(args, "--log-file", "-")...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return "", "", -1
	}
	if watch {
		timer := time.AfterFunc(watchFor, func() { _ = cmd.Process.Signal(syscall.SIGINT) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Errorf("meshscope %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// checkHonest holds one answer to the fault's expectations: the exit code;
// when something was not read, the cause on the text's first line (stdout,
// or stderr when the command printed no answer) and as the first entry of
// JSON's "incomplete"; when everything was read, an empty "incomplete"
// and no cause said.
func checkHonest(t *testing.T, f honestFault, c honestCmd, isJSON bool, out, stderr string, code int) {
	t.Helper()
	what := c.name
	if isJSON {
		what += " -o json"
	}
	fail := func(format string, a ...any) {
		t.Errorf("%s: %s: %s\nstdout:\n%s\nstderr:\n%s", f.name, what, fmt.Sprintf(format, a...), trim(out), trim(stderr))
	}
	want := f.exit[c.name]
	if code != want {
		fail("exit %d, want %d", code, want)
	}
	if strings.Contains(stderr, "meshscope: waiting") {
		fail("a progress line on stderr, which is not a terminal")
	}
	incomplete, first := parseIncomplete(c, isJSON, out, stderr)
	if !isJSON {
		t.Logf("%s: %s: exit %d: %s", f.name, what, code, first)
	}
	if want != 3 {
		if isJSON && (incomplete == nil || len(*incomplete) != 0) {
			fail("want an empty incomplete list, have %v", incomplete)
		}
		if strings.Contains(stderr, "incomplete") {
			fail("stderr says incomplete")
		}
		return
	}
	if !strings.Contains(stderr, "incomplete answer (exit 3)") {
		fail("stderr does not say the answer is incomplete")
	}
	if isJSON {
		if incomplete == nil || len(*incomplete) == 0 {
			fail("no incomplete list")
			return
		}
		i := (*incomplete)[0]
		if i.Cluster != f.cluster || i.Why == "" || !hasAll(i.Sentence(), f.words) {
			fail("the first incomplete read is %+v (%q), want cluster %s saying %q", i, i.Sentence(), f.cluster, f.words)
		}
		return
	}
	if !hasAll(first, f.words) {
		fail("the first line %q does not name the cause %q", first, f.words)
	}
}

// parseIncomplete is the answer's "incomplete" list (JSON; watch: its last
// line, nil when absent) and its text's first line that says the cause
// (watch -o table: the line after its rows).
func parseIncomplete(c honestCmd, isJSON bool, out, stderr string) (*[]model.Incomplete, string) {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !isJSON {
		if c.watch {
			for _, l := range lines {
				if strings.HasPrefix(l, "incomplete: ") {
					return nil, l
				}
			}
			return nil, ""
		}
		if strings.TrimSpace(out) == "" {
			first, _, _ := strings.Cut(strings.TrimPrefix(stderr, "meshscope: "), "\n")
			return nil, first
		}
		return nil, lines[0]
	}
	var res struct {
		Type       string              `json:"type"`
		Incomplete *[]model.Incomplete `json:"incomplete"`
	}
	if c.watch {
		last := lines[len(lines)-1]
		if json.Unmarshal([]byte(last), &res) != nil || res.Type != "incomplete" {
			empty := []model.Incomplete{} // a watch with every stream up ends with its events
			return &empty, ""
		}
		return res.Incomplete, ""
	}
	if json.Unmarshal([]byte(out), &res) != nil {
		return nil, ""
	}
	return res.Incomplete, ""
}

// checkHonestUI: the UI, open on the same mesh, says on its services view
// what it reads; an empty view says why it is empty (the events view too).
func checkHonestUI(t *testing.T, f honestFault, ui interface {
	Keys(...string)
	WaitScreen(string, time.Duration, func(string) bool) string
}) {
	t.Helper()
	ui.Keys(":svc", "Enter")
	s := ui.WaitScreen(fmt.Sprintf("%s: the services view says %q", f.name, f.ui), 60*time.Second, func(s string) bool { return hasAll(s, f.ui) })
	if !f.uiEmpty {
		if strings.Contains(s, "no services") {
			t.Errorf("%s: the services view is empty:\n%s", f.name, s)
		}
		return
	}
	ui.WaitScreen(f.name+": the empty services view says why", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "no services: no cluster synced") && hasAll(s, append([]string{"cluster " + f.cluster + " is unreachable"}, f.words...))
	})
	ui.Keys(":events", "Enter")
	ui.WaitScreen(f.name+": the empty events view says why", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "no events yet: no cluster synced") && strings.Contains(s, "cluster "+f.cluster+" is unreachable")
	})
}

// checkProgress: a command that waits long for istiod shows what it waits
// for on stderr when stderr is a terminal, and erases it before its answer.
func checkProgress(t *testing.T, mesh []string) {
	t.Helper()
	ts := startTUI(t, "meshscope-e2e-honest-progress", 160, append([]string{"explain", "helloworld.sample", "--timeout", "8s"}, mesh...)...)
	s := ts.WaitScreen("explain shows what it waits for", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "meshscope: waiting") && strings.Contains(s, "clusters 2/2 synced; asking istiod for the service's endpoints")
	})
	t.Logf("the progress line: %s", row(s, "meshscope: waiting"))
	ts.WaitScreen("explain's answer, the progress line gone", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "no answer from istiod cluster1") && !strings.Contains(s, "meshscope: waiting")
	})
}

// waitLabRead waits until meshscope reads the whole lab again (the next
// fault, and the tests after this one, need it whole).
func waitLabRead(t *testing.T) {
	t.Helper()
	eventually(t, 90*time.Second, func() string {
		out, stderr, code := runHonest(t, []string{"snapshot", "-o", "json", "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1,cluster2"}, false)
		if code != 0 {
			return fmt.Sprintf("snapshot exit %d: %s%s", code, trim(out), stderr)
		}
		return ""
	})
	waitIstiodReads(t, "cluster1", "cluster2", true)
	waitIstiodReads(t, "cluster2", "cluster1", true)
}

// silentServer listens on loopback, accepts every connection and never
// answers: an API server that hangs. stop closes it and its connections.
func silentServer(t *testing.T) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return ln.Addr().String(), func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
}

// closedAddress is a loopback address nothing listens on (a port just
// freed).
func closedAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// kubeconfigWith is the lab's kubeconfig with one more context, name, for
// a cluster at server.
func kubeconfigWith(t *testing.T, name, server string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(theLab.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	addContext(cfg, name, server)
	return writeKubeconfigFile(t, cfg)
}

// lonelyKubeconfig is a kubeconfig whose only cluster, lonely (its
// current context), is at server.
func lonelyKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	addContext(cfg, "lonely", server)
	cfg.CurrentContext = "lonely"
	return writeKubeconfigFile(t, cfg)
}

func addContext(cfg *clientcmdapi.Config, name, server string) {
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "honest-e2e"}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
}

func writeKubeconfigFile(t *testing.T, cfg *clientcmdapi.Config) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func hasAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// trim keeps the start of a long output for a failure message.
func trim(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}
