package collector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeKubeconfig(t *testing.T, dir, name, current string, ctxs map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\ncurrent-context: " + current + "\nclusters:\n")
	for c, server := range ctxs {
		b.WriteString("- name: " + c + "\n  cluster: {server: \"" + server + "\"}\n")
	}
	b.WriteString("users:\n- name: u-" + name + "\n  user: {token: t}\ncontexts:\n")
	for c := range ctxs {
		b.WriteString("- name: " + c + "\n  context: {cluster: " + c + ", user: u-" + name + "}\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadContexts(t *testing.T) {
	dir := t.TempDir()
	a := writeKubeconfig(t, dir, "a", "cluster1", map[string]string{"cluster1": "https://127.0.0.1:6443/"})
	b := writeKubeconfig(t, dir, "b", "", map[string]string{"cluster2": "https://127.0.0.1:6444"})
	t.Setenv("HOME", dir) // no ~/.kube/config to fall back on
	t.Setenv("KUBECONFIG", a+string(os.PathListSeparator)+b)

	src, err := loadContexts("", nil, false)
	if err != nil || len(src) != 1 || src[0].Name != "cluster1" || src[0].Server != "https://127.0.0.1:6443" {
		t.Fatalf("current context from $KUBECONFIG: %+v %v", src, err)
	}
	src, err = loadContexts("", []string{"cluster2"}, false)
	if err != nil || len(src) != 1 || src[0].Config.BearerToken != "t" {
		t.Fatalf("context from the second $KUBECONFIG file: %+v %v", src, err)
	}
	src, err = loadContexts("", nil, true)
	if err != nil || len(src) != 2 || src[0].Name != "cluster1" || src[1].Name != "cluster2" {
		t.Fatalf("all contexts: %+v %v", src, err)
	}
	if _, err := loadContexts(b, nil, false); err == nil || !strings.Contains(err.Error(), "no current context") {
		t.Fatalf("explicit file without current context: %v", err)
	}
	if _, err := loadContexts(a, []string{"nope"}, false); err == nil || !strings.Contains(err.Error(), `context "nope" not found`) {
		t.Fatalf("missing context: %v", err)
	}
	// No kubeconfig at all: where meshscope looked, not "no current context".
	missing := filepath.Join(dir, "missing")
	if _, err := loadContexts(missing, nil, false); err == nil || err.Error() != "no kubeconfig: "+missing+" (--kubeconfig) does not exist" {
		t.Fatalf("missing file: %v", err)
	}
	t.Setenv("KUBECONFIG", missing)
	if _, err := loadContexts("", nil, false); err == nil || !strings.Contains(err.Error(), "no kubeconfig: $KUBECONFIG ("+missing+") names no file that exists") {
		t.Fatalf("$KUBECONFIG names a missing file: %v", err)
	}
	t.Setenv("KUBECONFIG", a+string(os.PathListSeparator)+b)
	garbage := filepath.Join(dir, "garbage")
	_ = os.WriteFile(garbage, []byte("{{{"), 0o600)
	if _, err := loadContexts(garbage, nil, false); err == nil {
		t.Fatal("garbage kubeconfig loaded")
	}
}

func TestNormalizeServer(t *testing.T) {
	same := [][]string{
		{"https://127.0.0.1:6444", "https://127.0.0.1:6444/", " HTTPS://127.0.0.1:6444 ", "127.0.0.1:6444"},
		{"https://api.example.com", "https://API.Example.com:443/", "api.example.com", "api.example.com:443"},
		{"http://10.0.0.1", "http://10.0.0.1:80/"},
		{"https://[::1]:6443", "https://[::1]:6443/", "[::1]:6443"},
		{"https://proxy.example.com/k8s/clusters/c-1", "https://proxy.example.com:443/k8s/clusters/c-1/"},
	}
	for _, group := range same {
		want := normalizeServer(group[0])
		for _, s := range group[1:] {
			if got := normalizeServer(s); got != want {
				t.Errorf("normalizeServer(%q) = %q, want %q (same server as %q)", s, got, want, group[0])
			}
		}
	}
	different := [][2]string{
		{"https://127.0.0.1:6443", "https://127.0.0.1:6444"},
		{"http://10.0.0.1", "https://10.0.0.1"},
		{"https://proxy.example.com/k8s/clusters/c-1", "https://proxy.example.com/k8s/clusters/c-2"},
		{"https://10.0.0.1:8443", "https://10.0.0.1"},
	}
	for _, d := range different {
		if normalizeServer(d[0]) == normalizeServer(d[1]) {
			t.Errorf("%q and %q normalize alike (%q): they are different servers", d[0], d[1], normalizeServer(d[0]))
		}
	}
	if got := normalizeServer(""); got != "" {
		t.Errorf(`normalizeServer("") = %q`, got)
	}
}
