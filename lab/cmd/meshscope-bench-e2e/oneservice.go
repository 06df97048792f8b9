package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/meshscope/meshscope/xdsclient"
)

// oneService is what one one-service command cost: its wall time and the
// xDS bytes istiod sent it (through counting proxies).
type oneService struct {
	Wall   time.Duration `json:"-"`
	WallMS float64       `json:"wallMs"`
	Bytes  int64         `json:"bytes"`
	// Streams is how many xDS streams it opened.
	Streams int `json:"streams"`
}

func newOneService(wall time.Duration, bytes int64, streams int) oneService {
	return oneService{Wall: wall, WallMS: toMS(wall), Bytes: bytes, Streams: streams}
}

// buildMeshscope builds the meshscope binary the one-service commands run.
func buildMeshscope(root, out string) error {
	cmd := exec.Command("go", "build", "-o", out, "./cmd/meshscope")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/meshscope: %w\n%s", err, b)
	}
	return nil
}

// runExplain runs `meshscope explain SERVICE` against the two control
// planes through proxies, as a user would (it syncs the clusters, then asks
// each network's viewpoint for the service's EDS), and checks it explained
// every view.
func runExplain(ctx context.Context, bin, kubeconfig, host string, proxies []*countingProxy) (oneService, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var addrs []string
	for i, p := range proxies {
		addrs = append(addrs, fmt.Sprintf("cluster%d=%s", i+1, p.addr()))
	}
	cmd := exec.CommandContext(cctx, bin, "explain", host, "--kubeconfig", kubeconfig, "--context", "cluster1",
		"--xds-address", strings.Join(addrs, ","), "-o", "json", "--timeout", "60s", "--sync-timeout", "2m", "--log-file", os.DevNull)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: a view differs, still explained
		return oneService{}, fmt.Errorf("explain %s: %w: %s", host, err, stderr.String())
	}
	var res struct {
		Views []struct {
			Verdict string `json:"verdict"`
			Error   string `json:"error"`
		} `json:"views"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return oneService{}, fmt.Errorf("explain %s: output: %w", host, err)
	}
	if len(res.Views) == 0 {
		return oneService{}, fmt.Errorf("explain %s explained no view", host)
	}
	for _, v := range res.Views {
		if v.Verdict == "pending" || v.Error != "" {
			return oneService{}, fmt.Errorf("explain %s: a view without EDS: %s %s", host, v.Verdict, v.Error)
		}
	}
	var n int64
	for _, p := range proxies {
		n += p.received()
	}
	return newOneService(wall, n, len(res.Views)), nil
}

// runWatchService runs `meshscope watch --from VIEWPOINT --service SERVICE`
// until its first EDS event holds the service's endpoints, then interrupts
// it: the wall time to that event and the bytes received until then.
func runWatchService(ctx context.Context, bin, kubeconfig, from, service string, proxy *countingProxy) (oneService, error) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, "watch", "--kubeconfig", kubeconfig, "--context", "cluster1",
		"--xds-address", "cluster1="+proxy.addr(), "--from", from, "--service", service, "--log-file", os.DevNull)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return oneService{}, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return oneService{}, err
	}
	var (
		wall  time.Duration
		bytes int64
		once  sync.Once
	)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var ev xdsclient.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev.Type == xdsclient.EventEDS && len(ev.Endpoints) > 0 {
			once.Do(func() {
				wall, bytes = time.Since(start), proxy.received()
				_ = cmd.Process.Signal(syscall.SIGINT)
			})
		}
	}
	werr := cmd.Wait()
	if wall == 0 {
		return oneService{}, fmt.Errorf("watch --service %s: no EDS event (%v): %s", service, werr, stderr.String())
	}
	return newOneService(wall, bytes, 1), nil
}

// fetchLikeBefore subscribes the way explain did before it asked EDS by
// name only: CDS (the whole mesh's) and EDS for the service's names, one
// stream per viewpoint, through proxies; it returns when every stream holds
// the names.
func fetchLikeBefore(ctx context.Context, vps []xdsclient.Viewpoint, proxies []*countingProxy, names []string) (oneService, error) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(vps))
	for i, vp := range vps {
		c, err := xdsclient.New(xdsclient.Options{Viewpoint: vp, Transport: xdsclient.TransportConfig{Address: proxies[i].addr()}, EDSNames: names})
		if err != nil {
			return oneService{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, stop := context.WithCancel(cctx)
			defer stop()
			go func() { _ = c.Run(sctx) }()
			for {
				all := true
				for _, n := range names {
					if _, ok := c.LoadAssignment(n); !ok {
						all = false
					}
				}
				if all {
					return
				}
				select {
				case <-sctx.Done():
					errs[i] = fmt.Errorf("%s: EDS did not arrive: %s", vp, c.Status().Message)
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return oneService{}, err
	}
	var n int64
	for _, p := range proxies {
		n += p.received()
	}
	return newOneService(wall, n, len(vps)), nil
}
