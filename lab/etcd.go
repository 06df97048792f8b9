package lab

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"
)

// startEtcd starts the one etcd every lab cluster shares; each apiserver
// keeps its objects under its own --etcd-prefix.
func (l *Lab) startEtcd(ctx context.Context) error {
	client := fmt.Sprintf("http://127.0.0.1:%d", l.cfg.EtcdPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", l.cfg.EtcdPeerPort)
	p := &proc{
		Name: "etcd",
		Bin:  filepath.Join(BinDir(l.cfg.Root), "etcd"),
		Args: []string{
			"--name=lab",
			"--data-dir=" + filepath.Join(l.cfg.Dir, "etcd"),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=lab=" + peer,
			"--log-level=warn",
		},
		Dir:     l.cfg.Dir,
		LogPath: filepath.Join(l.cfg.Dir, "logs", "etcd.log"),
	}
	if err := mkLogDir(l.cfg.Dir); err != nil {
		return err
	}
	if err := p.start(l.cfg.Detach); err != nil {
		return err
	}
	l.etcd = p
	return waitFor(ctx, "etcd", 30*time.Second, p, func() error {
		resp, err := http.Get(client + "/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/health: %s", resp.Status)
		}
		return nil
	})
}

// waitFor polls check until it passes, the process dies (its log tail is in
// the error), or the timeout passes.
func waitFor(ctx context.Context, what string, timeout time.Duration, p *proc, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		if p != nil {
			if dead, why := p.exited(); dead {
				return fmt.Errorf("%s exited while starting (log %s):\n%s", what, p.LogPath, why)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %v (log %s)", what, timeout, last, logOf(p))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func logOf(p *proc) string {
	if p == nil {
		return "-"
	}
	return p.LogPath
}
