package lab

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckPortsNamesBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	err = checkPorts(map[int]string{port: "kube-apiserver cluster9"})
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver cluster9") || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("checkPorts on a busy port = %v, want an error naming the port's role", err)
	}
	l.Close()
	if err := checkPorts(map[int]string{port: "free again"}); err != nil {
		t.Fatalf("checkPorts on a free port = %v", err)
	}
}

func TestDownWithoutStateIsNoError(t *testing.T) {
	if err := Down(t.TempDir(), os.Stderr); err != nil {
		t.Fatal(err)
	}
}

func TestPidAliveRejectsOtherBinaries(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !pidAlive(os.Getpid(), self) {
		t.Error("pidAlive(self, own binary) = false")
	}
	// A PID reused by another program must never be taken for a lab process.
	if pidAlive(os.Getpid(), "/nonexistent/etcd") {
		t.Error("pidAlive(self, etcd) = true")
	}
	if pidAlive(0, self) {
		t.Error("pidAlive(0) = true")
	}
}

func TestDownSkipsDeadPIDs(t *testing.T) {
	dir := t.TempDir()
	st := `{"procs":[{"name":"etcd","bin":"/nonexistent/etcd","pid":1}]}`
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(st), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Down(dir, os.Stderr); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "state.json")); !os.IsNotExist(err) {
		t.Error("state.json should be removed once nothing runs")
	}
}

func TestDefaultConfigPortsDistinct(t *testing.T) {
	for _, multi := range []bool{false, true} {
		cfg := DefaultConfig("/repo")
		cfg.MultiPrimary = multi
		// etcd ×2, an apiserver per cluster, the kubelet stand-in, 6 per istiod.
		want := 3 + len(cfg.Clusters) + 6*len(cfg.istiods())
		if got := len(cfg.ports()); got != want {
			t.Errorf("multi=%v: %d distinct ports, want %d (a port is used twice)", multi, got, want)
		}
	}
}

func TestAppLabels(t *testing.T) {
	m := AppLabels("helloworld", "v2", "network2")
	for k, v := range map[string]string{"app": "helloworld", "version": "v2", TLSModeLabel: "istio", NetworkLabel: "network2"} {
		if m[k] != v {
			t.Errorf("AppLabels[%s] = %q, want %q", k, m[k], v)
		}
	}
}

// TestRemoteSecretPairs: each primary holds a remote secret for every other
// cluster; without istiod the first cluster is the one that reads the rest.
func TestRemoteSecretPairs(t *testing.T) {
	three := append(DefaultConfig("/repo").Clusters, ClusterSpec{Name: "cluster3", Network: "network2", Port: 6445})
	for _, tc := range []struct {
		name     string
		clusters []ClusterSpec
		multi    bool
		noIstiod bool
		want     string
	}{
		{name: "default lab", want: "cluster1>cluster2"},
		{name: "multi-primary", multi: true, want: "cluster1>cluster2 cluster2>cluster1"},
		{name: "three clusters, one primary", clusters: three, want: "cluster1>cluster2 cluster1>cluster3"},
		{name: "three clusters, multi-primary", clusters: three, multi: true,
			want: "cluster1>cluster2 cluster1>cluster3 cluster2>cluster1 cluster2>cluster3"},
		{name: "three clusters, no istiod", clusters: three, noIstiod: true, want: "cluster1>cluster2 cluster1>cluster3"},
	} {
		cfg := DefaultConfig("/repo")
		cfg.MultiPrimary = tc.multi
		if tc.clusters != nil {
			cfg.Clusters = tc.clusters
		}
		if tc.noIstiod {
			cfg.Istiods = nil
		}
		var got []string
		for _, p := range cfg.remoteSecretPairs() {
			got = append(got, p[0]+">"+p[1])
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("%s: remote secrets %q, want %q", tc.name, s, tc.want)
		}
	}
}
