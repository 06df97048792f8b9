package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/model"
)

const (
	legacyHost = "legacy.legacy.svc.cluster.local"
	extHost    = "ext.sample.svc.cluster.local" // exists only after the change
)

// testReport is a what-if on testSnapshot, written by hand: helloworld
// loses network2's gateway for network1 sidecars (every remote endpoint)
// and is re-weighted for network2; legacy loses every endpoint for a proxy
// without NETWORK; a ServiceEntry host appears; one new problem, one
// resolved.
func testReport() *whatif.Report {
	local := whatif.Endpoint{Address: "10.10.0.5", Port: 5000, Weight: 1, Kind: "local", Cluster: "cluster1", Network: "network1"}
	gw := whatif.Endpoint{Address: "192.168.60.9", Port: 15443, Weight: 2, Kind: "gateway", Cluster: "cluster2", Network: "network2"}
	leaked := whatif.Endpoint{Address: "10.10.0.5", Port: 5000, Weight: 1, Kind: "leaked", Cluster: "cluster1", Network: "network1"}
	leaked2 := leaked
	leaked2.Weight = 2
	legacy := whatif.Endpoint{Address: "10.10.0.9", Port: 5000, Weight: 1, Kind: "forced", Cluster: "cluster1", Network: "network1"}
	ext := whatif.Endpoint{Address: "10.10.0.77", Port: 443, Weight: 1, Kind: "local", Cluster: "cluster1", Network: "network1"}
	return &whatif.Report{
		Summary:         []string{"3 services change for some proxy; 2 lose every endpoint or every remote endpoint somewhere; 1 new problem, 1 resolved (1 new error)"},
		SnapshotVersion: 7, SnapshotTime: testNow,
		Changes: []whatif.ServiceChange{
			{Service: extHost, Port: 443, Viewpoint: "cluster1/network1@cluster1", Proxy: "sidecar", After: []whatif.Endpoint{ext}, Added: []whatif.Endpoint{ext},
				SharesAfter: []whatif.Share{{Network: "network1", Share: 1}}, Why: []string{"selected by ServiceEntry sample/ext"}},
			{Service: helloHost, Port: 5000, Viewpoint: "cluster1/network1@cluster1", Proxy: "sidecar",
				Before: []whatif.Endpoint{local, gw}, After: []whatif.Endpoint{local}, Removed: []whatif.Endpoint{gw}, LostRemote: true,
				SharesBefore: []whatif.Share{{Network: "network1", Share: 1.0 / 3}, {Network: "network2", Share: 2.0 / 3}},
				SharesAfter:  []whatif.Share{{Network: "network1", Share: 1}},
				Why:          []string{"cross-network endpoint without mTLS: DestinationRule sample/plain sets TLS mode DISABLE"}},
			{Service: helloHost, Port: 5000, Viewpoint: "cluster2/network2@cluster1", Proxy: "sidecar",
				Before: []whatif.Endpoint{leaked}, After: []whatif.Endpoint{leaked2}, Reweighted: []whatif.Endpoint{leaked2}, Why: []string{}},
			{Service: legacyHost, Port: 5000, Viewpoint: "cluster1/none@cluster1", Proxy: "sidecar",
				Before: []whatif.Endpoint{legacy}, Removed: []whatif.Endpoint{legacy}, LostAll: true, Why: []string{"legacy's pods lose their sidecar"}},
		},
		Problems: whatif.Problems{
			New:      []model.Problem{{Severity: model.SeverityError, Kind: model.ProblemKind("drop"), Service: helloHost, Sentence: "2 endpoints in cluster2 are dropped for network1 proxies: DestinationRule sample/plain sets TLS mode DISABLE"}},
			Resolved: []model.Problem{{Severity: model.SeverityWarning, Kind: model.ProblemKind("skew"), Service: legacyHost, Sentence: "legacy is skewed, and no longer after the change"}},
		},
	}
}

// whatIfModel is the golden tests' model with a what-if behind it: run
// answers every request with testReport (and records it); dr is a file
// holding a DestinationRule.
func whatIfModel(t *testing.T, w, h int) (m *Model, dr string, reqs *[]whatif.Request) {
	t.Helper()
	m = goldenModel(t, "default", w, h)
	dr = filepath.Join(t.TempDir(), "dr.yaml")
	writeFile(t, dr, "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: plain\n  namespace: sample\nspec:\n  host: helloworld.sample.svc.cluster.local\n  trafficPolicy:\n    tls:\n      mode: DISABLE\n")
	reqs = &[]whatif.Request{}
	m.opts.WhatIf = func(r whatif.Request) (*whatif.Report, error) {
		*reqs = append(*reqs, r)
		return testReport(), nil
	}
	return m, dr, reqs
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runLine types a ":" command and runs it, with the command it returns
// (the what-if's run, synchronously here).
func runLine(m *Model, text string) {
	press(m, ":")
	typeText(m, text)
	press(m, "enter")
}

// statusLine is the last line of the frame.
func statusLine(m *Model) string {
	lines := strings.Split(plain(m), "\n")
	return lines[len(lines)-1]
}

func TestOverlayModel(t *testing.T) {
	ov := newOverlay("dr.yaml", "cluster1", testReport())
	if got := strings.Join(ov.hosts, " "); got != extHost+" "+helloHost+" "+legacyHost {
		t.Errorf("hosts %q", got)
	}
	if ov.lost != 2 {
		t.Errorf("lost %d, want 2 (helloworld every remote, legacy every endpoint)", ov.lost)
	}
	for _, c := range []struct {
		host              string
		changes           int
		lostAll, lostRemo bool
	}{
		{helloHost, 2, false, true},
		{legacyHost, 1, true, false},
		{extHost, 1, false, false},
		{"sleep.sample.svc.cluster.local", 0, false, false},
	} {
		t.Run(c.host, func(t *testing.T) {
			h := ov.of(c.host)
			if c.changes == 0 {
				if h != nil || h.lost() {
					t.Errorf("%s: changed %+v", c.host, h)
				}
				return
			}
			if h == nil || len(h.changes) != c.changes || h.lostAll != c.lostAll || h.lostRemote != c.lostRemo {
				t.Errorf("%s: %+v, want %d changes, lostAll %v, lostRemote %v", c.host, h, c.changes, c.lostAll, c.lostRemo)
			}
		})
	}
	if (*overlay)(nil).of(helloHost) != nil {
		t.Error("no overlay changes something")
	}
	added, resolved := ov.problemsOf(helloHost)
	if len(added) != 1 || len(resolved) != 0 {
		t.Errorf("helloworld's problems: %d new, %d resolved", len(added), len(resolved))
	}
	if n := ov.inIndex(buildIndex(testSnapshot(), nil, nil)); n != 2 {
		t.Errorf("%d changed services in the index, want 2 (ext exists only after)", n)
	}
	// A change that changes nothing says why (its objects' outcomes).
	var nothing whatif.Report
	if err := json.Unmarshal([]byte(`{"objects":[{"action":"put","kind":"Deployment","name":"sample/hello","unread":"it owns no live pod in cluster2"}]}`), &nothing); err != nil {
		t.Fatal(err)
	}
	unchanged := newOverlay("hello.yaml", "cluster2", &nothing)
	// Judged by --fail-on's rules, as the run does (whatIfCmd).
	judged := func(rules []string) *overlay {
		rep := testReport()
		whatif.Judge(rep, rules)
		o := newOverlay("dr.yaml", "cluster1", rep)
		o.failOn = rules
		return o
	}
	for _, c := range []struct {
		ov       *overlay
		escDrops bool
		want     string
	}{
		{ov, true, "WHAT-IF: dr.yaml (3 services change, 2 lose endpoints, 1 new error) — esc to drop"},
		{ov, false, "WHAT-IF: dr.yaml (3 services change, 2 lose endpoints, 1 new error) — :whatif off to drop"},
		{newOverlay("--delete x.yaml", "cluster1", &whatif.Report{Changes: testReport().Changes[:1]}), true, "WHAT-IF: --delete x.yaml (1 service changes) — esc to drop"},
		{unchanged, true, "WHAT-IF: hello.yaml (0 services change; Deployment sample/hello: it owns no live pod in cluster2) — esc to drop"},
		{judged(whatif.DefaultFailOn), true, "WHAT-IF: dr.yaml (3 services change, 2 lose endpoints, 1 new error; FAILS --fail-on error,lost) — esc to drop"},
		{judged([]string{"none"}), true, "WHAT-IF: dr.yaml (3 services change, 2 lose endpoints, 1 new error) — esc to drop"},
	} {
		if got := c.ov.banner(c.escDrops); got != c.want {
			t.Errorf("banner %q, want %q", got, c.want)
		}
	}
}

func TestParseWhatIfArgs(t *testing.T) {
	for _, c := range []struct {
		args                []string
		err                 string
		off, del            bool
		path, cluster, srcC string
		env, what, failOn   string
	}{
		{args: []string{"--env", "AMBIENT_ENABLE_MULTI_NETWORK=true"}, env: "{ AMBIENT_ENABLE_MULTI_NETWORK true}", what: "AMBIENT_ENABLE_MULTI_NETWORK=true"},
		{args: []string{"f.yaml", "--istiod-env=cluster2=PILOT_ENABLE_AMBIENT=false"}, path: "f.yaml", env: "{cluster2 PILOT_ENABLE_AMBIENT false}", what: "f.yaml + cluster2=PILOT_ENABLE_AMBIENT=false"},
		{args: []string{"--delete", "f.yaml", "cluster2"}, del: true, path: "f.yaml", cluster: "cluster2", what: "--delete f.yaml"},
		{args: []string{"--env", "NOPE=true"}, err: "meshscope models"},
		{args: []string{"--env"}, err: "usage: :whatif"},
		{args: []string{"--delete", "--env", "AMBIENT_ENABLE_MULTI_NETWORK=true"}, err: "usage: :whatif"},
		{args: []string{"--force", "f.yaml"}, err: "unknown flag --force"},
		{args: []string{"off"}, off: true},
		{args: []string{"f.yaml"}, path: "f.yaml"},
		{args: []string{"f.yaml", "cluster2"}, path: "f.yaml", cluster: "cluster2"},
		{args: []string{"cluster2=f.yaml"}, path: "f.yaml", cluster: "cluster2", srcC: "cluster2"},
		{args: []string{"cluster2=f.yaml", "cluster2"}, path: "f.yaml", cluster: "cluster2", srcC: "cluster2"},
		{args: []string{"cluster2=f.yaml", "cluster1"}, err: "two clusters given"},
		{args: []string{"--delete", "f.yaml"}, del: true, path: "f.yaml"},
		{args: []string{"--delete"}, err: "usage: :whatif"},
		{args: []string{"a", "b", "c"}, err: "usage: :whatif"},
		{args: []string{"-"}, err: "not stdin"},
		{args: []string{"f.yaml", "--fail-on", "change"}, path: "f.yaml", failOn: "change"},
		{args: []string{"f.yaml", "--fail-on=error,lost-remote"}, path: "f.yaml", failOn: "error,lost-remote"},
		{args: []string{"f.yaml", "--fail-on", "everything"}, err: "one of error, warning"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			a, err := parseWhatIfArgs(c.args)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("%v: error %v, want %q", c.args, err, c.err)
				}
				return
			}
			env := ""
			for _, e := range a.env {
				env += fmt.Sprint(e)
			}
			if err != nil || a.off != c.off || a.delete != c.del || a.src.Path != c.path || a.cluster != c.cluster || a.src.Cluster != c.srcC || env != c.env {
				t.Errorf("%v: %+v, %v", c.args, a, err)
			}
			if got := strings.Join(a.failOn, ","); got != c.failOn {
				t.Errorf("%v: --fail-on %q, want %q", c.args, got, c.failOn)
			}
			if c.what != "" && a.what() != c.what {
				t.Errorf("%v: what %q, want %q", c.args, a.what(), c.what)
			}
		})
	}
	home, err := os.UserHomeDir()
	if err == nil {
		if a, _ := parseWhatIfArgs([]string{"~/x.yaml"}); a.src.Path != filepath.Join(home, "x.yaml") {
			t.Errorf("~/x.yaml read as %q", a.src.Path)
		}
	}
}

// TestWhatIfCommand: every way :whatif can fail says why in the status
// bar and changes nothing else — the overlay shown stays; a run replaces
// it; off drops it.
func TestWhatIfCommand(t *testing.T) {
	m, dr, reqs := whatIfModel(t, 120, 40)
	dir := filepath.Dir(dr)
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "apiVersion: v1\nkind: Service\nmetadata:\n  name: [oops\n")
	failing := func(whatif.Request) (*whatif.Report, error) {
		return nil, errors.New("DestinationRule sample/plain (dr.yaml:1): cluster cluster2 is a remote secret's view, read-only")
	}
	for _, c := range []struct {
		name, line string
		run        whatIfFunc // nil: the model's
		noRun      bool       // no WhatIf at all
		// err is in the status bar (the run failed); else banner is.
		err, banner string
		reqCluster  string
		reqDelete   bool
		reqEnv      string
	}{
		{name: "off without one", line: "whatif off"},
		{name: "no argument", line: "whatif", err: "usage: :whatif [--delete] FILE|DIR [CLUSTER]"},
		{name: "missing file", line: "whatif " + filepath.Join(dir, "nope.yaml"), err: "nope.yaml: no such file"},
		{name: "bad YAML names file and line", line: "whatif " + bad, err: "bad.yaml:4: not YAML"},
		{name: "unknown cluster", line: "whatif " + dr + " cluster9", err: `no cluster "cluster9" in the mesh (clusters: cluster1, cluster2, cluster3)`},
		{name: "collector refuses", line: "whatif " + dr, run: failing, err: "read-only"},
		{name: "no collector", line: "whatif " + dr, noRun: true, err: "no mesh to try changes on"},
		{name: "default cluster", line: "whatif " + dr, banner: "WHAT-IF: " + dr + " (3 services change, 2 lose endpoints, 1 new error; FAILS", reqCluster: "cluster1"},
		{name: "--fail-on none", line: "whatif " + dr + " --fail-on none", banner: "WHAT-IF: " + dr + " (3 services change, 2 lose endpoints, 1 new error) —", reqCluster: "cluster1"},
		{name: "cluster argument", line: "whatif " + dr + " cluster2", banner: "WHAT-IF: " + dr, reqCluster: "cluster2"},
		{name: "CLUSTER=FILE", line: "wi cluster2=" + dr, banner: "WHAT-IF: " + dr, reqCluster: "cluster2"},
		{name: "delete", line: "whatif --delete " + dr, banner: "WHAT-IF: --delete " + dr, reqCluster: "cluster1", reqDelete: true},
		{name: "settings alone", line: "whatif --env cluster1=AMBIENT_ENABLE_MULTI_NETWORK=true", banner: "WHAT-IF: cluster1=AMBIENT_ENABLE_MULTI_NETWORK=true (3 services change, 2 lose endpoints, 1 new error; FAILS",
			reqEnv: "{cluster1 AMBIENT_ENABLE_MULTI_NETWORK true}"},
		{name: "file and settings", line: "whatif " + dr + " --env PILOT_ENABLE_AMBIENT=false", banner: "WHAT-IF: " + dr + " + PILOT_ENABLE_AMBIENT=false",
			reqCluster: "cluster1", reqEnv: "{ PILOT_ENABLE_AMBIENT false}"},
		{name: "settings of an unknown cluster", line: "whatif --env cluster9=PILOT_ENABLE_AMBIENT=false", err: `no cluster "cluster9"`},
		{name: "bad setting", line: "whatif --env PILOT_ENABLE_AMBIENT=maybe", err: "is a boolean"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := m.wi.ov
			saved := m.opts.WhatIf
			switch {
			case c.noRun:
				m.opts.WhatIf = nil
			case c.run != nil:
				m.opts.WhatIf = c.run
			}
			n := len(*reqs)
			runLine(m, c.line)
			m.opts.WhatIf = saved
			status := statusLine(m)
			switch {
			case c.err != "":
				if !strings.Contains(m.wi.err, c.err) {
					t.Fatalf("error %q, want %q", m.wi.err, c.err)
				}
				// Long errors wrap over the status bar's lines: look at them all.
				if !strings.Contains(strings.Join(strings.Fields(tail(plain(m), 3)), " "), strings.Join(strings.Fields(c.err), " ")) {
					t.Errorf("the status bar does not say %q:\n%s", c.err, tail(plain(m), 3))
				}
				if m.wi.ov != before {
					t.Error("a failed what-if changed the overlay")
				}
				checkSize(t, m.View().Content, 120, 40)
				press(m, "j") // any key clears it
				if m.wi.err != "" || strings.Contains(statusLine(m), c.err) {
					t.Errorf("the error outlives a key: %q", statusLine(m))
				}
			case c.banner != "":
				if m.wi.ov == nil || m.wi.ov == before || !strings.Contains(status, c.banner) {
					t.Fatalf("no new overlay; status %q", status)
				}
				if len(*reqs) != n+1 {
					t.Fatalf("%d requests", len(*reqs)-n)
				}
				r := (*reqs)[n]
				env := ""
				for _, e := range r.Env {
					env += fmt.Sprint(e)
				}
				if env != c.reqEnv {
					t.Errorf("request's settings %q, want %q", env, c.reqEnv)
				}
				if c.reqCluster == "" {
					if len(r.Objects) != 0 {
						t.Errorf("settings alone: %d objects", len(r.Objects))
					}
					return
				}
				if len(r.Objects) != 1 || r.Objects[0].Cluster != c.reqCluster || r.Delete != c.reqDelete || r.Objects[0].Object.GetKind() != "DestinationRule" {
					t.Errorf("request: delete %v, %d objects, %+v", r.Delete, len(r.Objects), r.Objects)
				}
			default:
				if m.wi.ov != before || m.wi.err != "" {
					t.Errorf("changed: overlay %v, error %q", m.wi.ov != before, m.wi.err)
				}
			}
		})
	}
	runLine(m, "whatif off")
	if m.wi.ov != nil || strings.Contains(statusLine(m), "WHAT-IF") || strings.Contains(plain(m), "WHAT-IF") {
		t.Fatalf(":whatif off left the overlay:\n%s", plain(m))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// TestWhatIfAnswersInOrder: an answer of a run that was replaced or
// dropped while it ran is thrown away.
func TestWhatIfAnswersInOrder(t *testing.T) {
	m, dr, _ := whatIfModel(t, 120, 40)
	press(m, ":")
	typeText(m, "whatif "+dr)
	_, first := m.Update(keyMsg("enter"))
	if m.wi.running != dr || !strings.Contains(statusLine(m), "what-if: running "+dr) {
		t.Fatalf("running %q, status %q", m.wi.running, statusLine(m))
	}
	press(m, ":")
	typeText(m, "whatif "+dr+" cluster2")
	_, second := m.Update(keyMsg("enter"))
	m.Update(second())
	latest := m.wi.ov
	if latest == nil || latest.cluster != "cluster2" {
		t.Fatal("the second run did not show")
	}
	m.Update(first()) // the first, replaced, answers late
	if m.wi.ov != latest {
		t.Fatal("a replaced run's late answer replaced the overlay")
	}
	// Dropped while running: the answer is not shown.
	press(m, ":")
	typeText(m, "whatif "+dr)
	_, third := m.Update(keyMsg("enter"))
	runLine(m, "whatif off")
	m.Update(third())
	if m.wi.ov != nil {
		t.Fatal("a dropped run's answer came back")
	}
}

// TestWhatIfOverlayViews: with a what-if laid over the mesh, every screen
// says so; the services view marks the changed rows (lost ones in the
// error style) and filters to them; a service shows before → after per
// viewpoint; the problems view lists the new and resolved problems first,
// marked; all of it at 120×40 and at 80×24.
func TestWhatIfOverlayViews(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			w, h := size[0], size[1]
			m, dr, _ := whatIfModel(t, w, h)
			runLine(m, "whatif "+dr)
			// Every screen says it is not the live mesh alone.
			for _, id := range []viewID{viewClusters, viewServices, viewProblems, viewEvents, viewProxies, viewMap} {
				m.push(id)
				out := plain(m)
				checkSize(t, m.View().Content, w, h)
				if !strings.Contains(strings.SplitN(out, "\n", 2)[0], "WHAT-IF") || !strings.Contains(statusLine(m), "WHAT-IF: "+dr[:min(len(dr), 20)]) {
					t.Fatalf("%dx%d view %d does not show the what-if:\n%s", w, h, id, out)
				}
			}
			press(m, "?")
			if !strings.Contains(statusLine(m), "WHAT-IF") {
				t.Errorf("help hides the banner")
			}
			press(m, "esc")

			// Services: the mark, in the error style for a service that loses
			// endpoints; d shows only the changed ones.
			m.push(viewServices)
			rows := map[string]string{}
			for _, l := range strings.Split(m.View().Content, "\n") {
				for _, host := range []string{helloHost, legacyHost, "sleep.sample"} {
					if p := ansi.Strip(l); strings.Contains(p, host[:12]) {
						rows[host] = p
					}
				}
			}
			// Lost ones show without colour too.
			for host, mark := range map[string]string{helloHost: "Δ! hello", legacyHost: "Δ! legacy", "sleep.sample": "   sleep"} {
				if !strings.Contains(rows[host], mark) {
					t.Errorf("%dx%d row %q: not marked %q", w, h, rows[host], mark)
				}
			}
			vc := m.vc()
			if vc.st.Error.Render("Δ") == vc.st.Warn.Render("Δ") {
				t.Fatal("the theme draws errors and warnings alike: the test cannot tell the marks apart")
			}
			for host, st := range map[string]string{helloHost: vc.st.Error.Render("Δ!"), legacyHost: vc.st.Error.Render("Δ!"), extHost: vc.st.Warn.Render("Δ ")} {
				if got := whatIfMark(vc, m.wi.ov.of(host), false); got != st {
					t.Errorf("%s's mark %q, want %q", host, got, st)
				}
			}
			if !strings.Contains(plain(m), "Δ what-if changes its endpoints, Δ! loses them all") {
				t.Errorf("%dx%d: no legend of the mark", w, h)
			}
			press(m, "d")
			if n := len(m.services.list.rows); n != 2 || !strings.Contains(m.services.title(m.vc()), "only the 2 the what-if changes") {
				t.Errorf("%dx%d: d shows %d rows:\n%s", w, h, n, plain(m))
			}
			checkSize(t, m.View().Content, w, h)

			// A changed service opens on its before → after.
			press(m, "g", "enter")
			if m.currentID() != viewService || m.service.host != helloHost || !m.service.showWhatIf() {
				t.Fatalf("%dx%d: enter opened view %d on %q, what-if %v", w, h, m.currentID(), m.service.host, m.service.showWhatIf())
			}
			out := plain(m)
			checkSize(t, m.View().Content, w, h)
			for _, want := range []string{":5000 from cluster1/network1@cluster1 (sidecar) LOSES EVERY REMOTE ENDPOINT", "endpoints 2 → 1 (−1)",
				"− 192.168.60.9:15443 ×2 (gateway, network2)", "10.10.0.5:5000 (local, network1)", "network1 33.3% → 100%, network2 66.7% → 0%",
				"why   cross-network endpoint without mTLS"} {
				if !strings.Contains(out, want) {
					t.Errorf("%dx%d: the before → after lacks %q:\n%s", w, h, want, out)
				}
			}
			press(m, "G") // scrolls to the end: the re-weighted view and the new problem
			out = plain(m)
			for _, want := range []string{"~ 10.10.0.5:5000 ×2 (leaked, network1), was 10.10.0.5:5000 (leaked, network1)", "NEW PROBLEMS (what-if) (1)"} {
				if !strings.Contains(out, want) {
					t.Errorf("%dx%d: the end of the before → after lacks %q:\n%s", w, h, want, out)
				}
			}
			press(m, "d") // the live columns, marked
			if out := plain(m); !strings.Contains(out, "Δ what-if: d") || !strings.Contains(out, "verdict") || m.service.showWhatIf() {
				t.Errorf("%dx%d: d did not show the live columns:\n%s", w, h, out)
			}
			// esc goes back to the list, the overlay stays.
			press(m, "esc")
			if m.currentID() != viewServices || m.wi.ov == nil {
				t.Fatalf("%dx%d: esc from the service: view %d, overlay %v", w, h, m.currentID(), m.wi.ov != nil)
			}

			// Problems: the what-if's first, marked, with their sentence.
			m.push(viewProblems)
			out = plain(m)
			checkSize(t, m.View().Content, w, h)
			if !strings.Contains(out, "what-if: 1 new, 1 resolved") {
				t.Errorf("%dx%d: problems title:\n%s", w, h, out)
			}
			var marks []string
			for _, l := range strings.Split(out, "\n")[2:] {
				if f := strings.Fields(strings.TrimPrefix(l, ">")); len(f) > 0 && (f[0] == whatIfNew || f[0] == whatIfResolved) {
					marks = append(marks, f[0]+" "+f[2])
				}
			}
			if strings.Join(marks, ", ") != "NEW drop, RESOLVED skew" {
				t.Errorf("%dx%d: what-if rows %q:\n%s", w, h, marks, out)
			}
			if !strings.Contains(out, "What-if "+dr[:min(len(dr), 10)]) {
				t.Errorf("%dx%d: the selected what-if problem does not say it is one:\n%s", w, h, out)
			}
			press(m, "enter")
			if m.currentID() != viewService || m.service.host != helloHost {
				t.Errorf("%dx%d: enter on the new problem opened %d %q", w, h, m.currentID(), m.service.host)
			}
		})
	}
}

// TestWhatIfEscAndLiveUpdates: the live mesh keeps updating under the
// overlay; esc walks back through the views and drops the overlay on the
// first screen, where the banner says so.
func TestWhatIfEscAndLiveUpdates(t *testing.T) {
	m, dr, _ := whatIfModel(t, 120, 40)
	m.push(viewServices)
	runLine(m, "whatif "+dr)
	ov := m.wi.ov
	// A new snapshot: the rows follow it, the overlay stays and still marks.
	next := testSnapshot()
	next.Version = 8
	next.Services = append(next.Services, svc("sample", "zeta", httpPort, nil))
	sortServices(next.Services)
	m.snap = next
	m.Update(indexMsg{ix: buildIndex(next, nil, m.doc)})
	if m.wi.ov != ov || len(m.services.list.rows) != 5 {
		t.Fatalf("after a snapshot: overlay kept %v, %d rows", m.wi.ov == ov, len(m.services.list.rows))
	}
	press(m, "d")
	if len(m.services.list.rows) != 2 {
		t.Fatalf("changed only: %d rows", len(m.services.list.rows))
	}
	press(m, "enter")
	if out := plain(m); !strings.Contains(out, "as of snapshot 7") || !strings.Contains(out, "live: 8") {
		t.Errorf("the before → after does not say the live mesh moved on:\n%s", out)
	}
	if b, _ := m.whatIfStatus(); !strings.HasSuffix(b, ":whatif off to drop") {
		t.Errorf("deep in the stack, the banner promises esc: %q", b)
	}
	press(m, "esc", "esc")
	if m.currentID() != viewClusters || m.wi.ov == nil {
		t.Fatalf("esc esc: view %d, overlay %v", m.currentID(), m.wi.ov != nil)
	}
	if b, _ := m.whatIfStatus(); !strings.HasSuffix(b, "esc to drop") {
		t.Errorf("on the first screen the banner does not say esc drops it: %q", b)
	}
	press(m, "esc")
	if m.wi.ov != nil || strings.Contains(plain(m), "WHAT-IF") {
		t.Fatalf("esc on the first screen did not drop the overlay:\n%s", plain(m))
	}
	// Without the overlay the views are as they were: no mark, no filter.
	m.push(viewServices)
	if len(m.services.list.rows) != 5 || strings.Contains(plain(m), "Δ") {
		t.Errorf("after the drop: %d rows\n%s", len(m.services.list.rows), plain(m))
	}
	press(m, "d")
	if !strings.Contains(m.flash, "no what-if shown") {
		t.Errorf("d without a what-if: flash %q", m.flash)
	}
}

func TestCompletePathLine(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"dr-tls.yaml", "dr-lb.yaml", "sidecar.yaml"} {
		writeFile(t, filepath.Join(dir, f), "x")
	}
	if err := os.Mkdir(filepath.Join(dir, "more"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"one file", "whatif " + dir + "/si", "whatif " + dir + "/sidecar.yaml "},
		{"common prefix", "whatif " + dir + "/d", "whatif " + dir + "/dr-"},
		{"no longer prefix", "whatif " + dir + "/dr-", "whatif " + dir + "/dr-"},
		{"directory", "whatif " + dir + "/mo", "whatif " + dir + "/more/"},
		{"CLUSTER=FILE", "whatif cluster2=" + dir + "/si", "whatif cluster2=" + dir + "/sidecar.yaml "},
		{"no such file", "whatif " + dir + "/zz", "whatif " + dir + "/zz"},
		{"nothing yet", "whatif ", "whatif "},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := completePathLine(c.in); got != c.want {
				t.Errorf("complete %q = %q, want %q", c.in, got, c.want)
			}
		})
	}
	// Through the command line: tab after the name leaves room, then
	// completes the file.
	m := goldenModel(t, "default", 120, 40)
	press(m, ":")
	typeText(m, "whati")
	press(m, "tab")
	typeText(m, dir+"/si")
	press(m, "tab")
	if got := string(m.input); got != "whatif "+dir+"/sidecar.yaml " {
		t.Errorf("tab completed %q", got)
	}
	if hint := m.commandHint(string(m.input)); !strings.Contains(hint, ":whatif FILE [CLUSTER] · clusters: cluster1 cluster2 cluster3") {
		t.Errorf("hint %q", hint)
	}
}

// TestGoldenWhatIf: the overlay's screens at 80×24, the smallest the UI
// draws (plain): the services marked and filtered, a service's before →
// after, the problems with the what-if's first, and the mono theme's
// services (the marks without colour).
func TestGoldenWhatIf(t *testing.T) {
	open := func(theme string) *Model {
		m := newTestModel(t, theme, 80, 24, testSnapshot(), testFeed(testSnapshot()))
		m.wi.seq = 1
		m.onWhatIf(whatIfMsg{seq: 1, ov: newOverlay("dr.yaml", "cluster1", testReport())})
		m.push(viewServices)
		return m
	}
	for _, c := range []struct {
		name  string
		theme string
		keys  []string
		view  viewID
	}{
		{"Services", "default", nil, viewServices},
		{"ServicesChangedOnly", "default", []string{"d"}, viewServices},
		{"Service", "default", []string{"d", "enter"}, viewService},
		{"Problems", "default", []string{":", "p", "b", "enter"}, viewProblems},
		{"ServicesMono", "mono", nil, viewServices},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := open(c.theme)
			press(m, c.keys...)
			if m.currentID() != c.view {
				t.Fatalf("view %d, want %d", m.currentID(), c.view)
			}
			out := plain(m)
			if c.theme == "mono" {
				out = m.View().Content
			}
			checkSize(t, m.View().Content, 80, 24)
			golden.RequireEqual(t, out)
		})
	}
}
