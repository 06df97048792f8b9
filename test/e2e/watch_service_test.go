package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshscope/meshscope/xdsclient"
)

// TestWatchServiceOnLab: `meshscope watch --service helloworld.sample`
// reads the Service's ports from the cluster1 context (get only) and asks
// the real istiod EDS for outbound|5000||helloworld... by name, without
// CDS: the first push is the seed article's network1 view, and no cds
// event ever comes.
func TestWatchServiceOnLab(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	is := theLab.Istiods()[0]
	cmd := exec.CommandContext(ctx, meshscopeBinary(t), "watch", "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1",
		"--xds-address", "cluster1="+is.XDSAddress(), "--from", "cluster1/network1", "--service", "helloworld.sample", "--log-file", "-")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got string
	var types []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		var ev xdsclient.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		types = append(types, string(ev.Type))
		if ev.Type == xdsclient.EventCDS {
			t.Errorf("watch --service got CDS: %s", sc.Text())
		}
		if ev.Type != xdsclient.EventEDS {
			continue
		}
		for _, n := range append(append(ev.Added, ev.Changed...), ev.Removed...) {
			if n != helloworldEDS {
				t.Errorf("an eds event about %s", n)
			}
		}
		var eps []string
		for _, e := range ev.Endpoints {
			eps = append(eps, fmt.Sprintf("%s:%d w=%d", e.Address, e.Port, e.Weight))
		}
		sort.Strings(eps)
		got = strings.Join(eps, ",")
		_ = cmd.Process.Signal(syscall.SIGINT)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("watch ended with %v: %s", err, stderr.String())
	}
	if got != seedEDSNetwork1 {
		t.Fatalf("first EDS %q, want %s (events %v; stderr %s)", got, seedEDSNetwork1, types, stderr.String())
	}
}
