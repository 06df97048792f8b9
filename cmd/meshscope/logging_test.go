package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// TestKubeLogsGoToTheLogFile: what client-go reports through klog (here
// an unhandled error, as its port-forward reports a refused connection)
// lands in the log file, never on stderr, where it would scribble over
// the terminal UI.
func TestKubeLogsGoToTheLogFile(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "meshscope.log")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = stderr }()

	root := newRootCmd()
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	root.SetArgs([]string{"version", "--log-file", logFile})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	utilruntime.HandleError(errors.New("error forwarding port 8080: connection refused"))

	os.Stderr = stderr
	w.Close()
	onStderr, _ := io.ReadAll(r)
	if len(onStderr) > 0 {
		t.Errorf("klog wrote to stderr: %q", onStderr)
	}
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "error forwarding port 8080") {
		t.Errorf("the log file lacks client-go's error:\n%s", b)
	}
}
