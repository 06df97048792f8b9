package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// tool is one lab binary, built from its own tools module under lab/tools.
type tool struct {
	Name   string // binary name under .lab/bin
	Module string // folder under lab/tools holding go.mod and go.sum
	Pkg    string // package to build
}

var tools = []tool{
	{Name: "etcd", Module: "etcd", Pkg: "go.etcd.io/etcd/server/v3"},
	{Name: "kube-apiserver", Module: "kube-apiserver", Pkg: "k8s.io/kubernetes/cmd/kube-apiserver"},
	{Name: "pilot-discovery", Module: "istiod", Pkg: "istio.io/istio/pilot/cmd/pilot-discovery"},
	// kubectl is not needed by the lab itself; it is built for people poking
	// at a running lab (.lab/bin/kubectl --kubeconfig .lab/run/kubeconfig ...).
	{Name: "kubectl", Module: "kube-apiserver", Pkg: "k8s.io/kubernetes/cmd/kubectl"},
}

// crdFile is istio's CRD bundle, copied out of the istio.io/istio module at
// build time so that starting the lab needs no Go toolchain lookups.
const crdFile = "crd-all.gen.yaml"

// BinDir is where the lab's binaries are cached.
func BinDir(root string) string { return filepath.Join(root, ".lab", "bin") }

// EnsureBinaries builds etcd, kube-apiserver and pilot-discovery unless a
// binary built from the same tools module (same go.mod and go.sum) is cached.
// Progress lines go to log. A failed build names the step and shows the tail of
// the compiler's output.
func EnsureBinaries(root string, log io.Writer) error {
	bin := BinDir(root)
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	for _, t := range tools {
		modDir := filepath.Join(root, "lab", "tools", t.Module)
		stamp, err := moduleStamp(modDir)
		if err != nil {
			return fmt.Errorf("lab build %s: %w", t.Name, err)
		}
		out := filepath.Join(bin, t.Name)
		stampFile := out + ".stamp"
		if old, err := os.ReadFile(stampFile); err == nil && string(old) == stamp && fileExists(out) {
			continue
		}
		fmt.Fprintf(log, "lab: building %s from %s (cached in %s; first build takes minutes)\n", t.Name, t.Pkg, bin)
		start := time.Now()
		if err := goCmd(modDir, "build", "-o", out+".tmp", t.Pkg); err != nil {
			return fmt.Errorf("lab build %s failed (go build %s in lab/tools/%s): %w", t.Name, t.Pkg, t.Module, err)
		}
		if err := os.Rename(out+".tmp", out); err != nil {
			return err
		}
		if t.Name == "pilot-discovery" {
			if err := copyCRDs(modDir, filepath.Join(bin, crdFile)); err != nil {
				return fmt.Errorf("lab build: istio CRDs: %w", err)
			}
		}
		if err := os.WriteFile(stampFile, []byte(stamp), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(log, "lab: built %s in %s\n", t.Name, time.Since(start).Round(time.Second))
	}
	// The kubelet stand-in is meshscope's own code: go build's cache makes
	// this a relink when nothing changed.
	if err := goCmd(root, "build", "-o", filepath.Join(bin, kubeletBin), "./lab/cmd/lab-kubelet"); err != nil {
		return fmt.Errorf("lab build %s failed (go build ./lab/cmd/lab-kubelet): %w", kubeletBin, err)
	}
	return nil
}

// moduleStamp identifies a tools module's exact build inputs.
func moduleStamp(modDir string) (string, error) {
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(modDir, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyCRDs(modDir, dst string) error {
	dir, err := goOutput(modDir, "list", "-m", "-f", "{{.Dir}}", "istio.io/istio")
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(dir), "manifests", "charts", "base", "files", crdFile))
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

func goCmd(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w\n%s", err, tail(string(out), 40))
	}
	return nil
}

func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
