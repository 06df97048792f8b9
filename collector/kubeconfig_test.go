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

	src, err := LoadContexts("", nil, false)
	if err != nil || len(src) != 1 || src[0].Name != "cluster1" || src[0].Server != "https://127.0.0.1:6443" {
		t.Fatalf("current context from $KUBECONFIG: %+v %v", src, err)
	}
	src, err = LoadContexts("", []string{"cluster2"}, false)
	if err != nil || len(src) != 1 || src[0].Config.BearerToken != "t" {
		t.Fatalf("context from the second $KUBECONFIG file: %+v %v", src, err)
	}
	src, err = LoadContexts("", nil, true)
	if err != nil || len(src) != 2 || src[0].Name != "cluster1" || src[1].Name != "cluster2" {
		t.Fatalf("all contexts: %+v %v", src, err)
	}
	if _, err := LoadContexts(b, nil, false); err == nil || !strings.Contains(err.Error(), "no current context") {
		t.Fatalf("explicit file without current context: %v", err)
	}
	if _, err := LoadContexts(a, []string{"nope"}, false); err == nil || !strings.Contains(err.Error(), `context "nope" not found`) {
		t.Fatalf("missing context: %v", err)
	}
	if _, err := LoadContexts(filepath.Join(dir, "missing"), nil, false); err == nil || !strings.Contains(err.Error(), "cannot load kubeconfig") {
		t.Fatalf("missing file: %v", err)
	}
	garbage := filepath.Join(dir, "garbage")
	_ = os.WriteFile(garbage, []byte("{{{"), 0o600)
	if _, err := LoadContexts(garbage, nil, false); err == nil {
		t.Fatal("garbage kubeconfig loaded")
	}
}
