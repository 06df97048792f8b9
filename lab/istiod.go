package lab

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/meshscope/meshscope/session/istiod"
)

// MeshConfigText is the MeshConfig the lab's istiods start with: the seed
// writes it into key "mesh" of ConfigMap istio in each cluster's system
// namespace, where istiod reads it (SetMeshConfig changes it).
const MeshConfigText = `trustDomain: cluster.local
defaultConfig:
  discoveryAddress: istiod.istio-system.svc:15012
  meshId: mesh1
`

// startIstiod runs pilot-discovery out of cluster as primary of its cluster,
// in its own working directory (it reads ./etc/istio and ./var/lib/istio).
func (l *Lab) startIstiod(is *Istiod) error {
	dir := filepath.Join(l.cfg.Dir, "istiod-"+is.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// istiod reads its mesh config from the --meshConfig file only when that
	// file exists, else from ConfigMap istio (pilot/pkg/bootstrap/mesh.go
	// getConfigurationSources), as in a real cluster: name a file that is
	// never there.
	meshFile := filepath.Join(dir, "no-mesh-file-read-configmap-istio")
	if err := os.Remove(meshFile); err != nil && !os.IsNotExist(err) {
		return err
	}
	netFile := filepath.Join(dir, "meshNetworks.yaml")
	if err := os.WriteFile(netFile, []byte(is.meshNetworks), 0o644); err != nil {
		return err
	}
	ca := CAShared
	if l.cfg.OwnCAs {
		ca = CAOwn
	}
	if err := l.prepareCA(is, ca); err != nil {
		return fmt.Errorf("istiod %s CA: %w", is.Cluster, err)
	}
	addr := func(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
	is.proc = &proc{
		Name: "istiod-" + is.Name(),
		Bin:  filepath.Join(BinDir(l.cfg.Root), "pilot-discovery"),
		Args: []string{
			"discovery",
			"--kubeconfig=" + filepath.Join(l.cfg.Dir, is.Cluster, "admin.kubeconfig"),
			"--clusterID=" + is.Cluster,
			"--meshConfig=" + meshFile,
			"--networksConfig=" + netFile,
			"--grpcAddr=" + addr(is.GRPC),
			"--secureGRPCAddr=" + addr(is.SecureGRPC),
			"--httpAddr=" + addr(is.HTTP),
			"--monitoringAddr=" + addr(is.Monitoring),
			"--httpsAddr=" + addr(is.HTTPS),
			"--ctrlz_port=" + strconv.Itoa(is.Ctrlz),
		},
		Env:     l.istiodEnv(is),
		Dir:     dir,
		LogPath: filepath.Join(l.cfg.Dir, "logs", "istiod-"+is.Name()+".log"),
	}
	if l.cfg.DNS {
		is.proc.Wrap = l.dnsWrap()
	}
	return is.proc.start(l.cfg.Detach)
}

// View reads istiod's own view (/debug/clusterz, /debug/networkz) with
// the reader meshscope uses.
func (i *Istiod) View(ctx context.Context) (istiod.View, error) {
	return istiod.FetchView(ctx, i.Cluster, i.HTTPURL())
}

// waitIstiod waits for /ready and then for /debug/clusterz to list every lab
// cluster as synced.
func (l *Lab) waitIstiod(ctx context.Context, is *Istiod) error {
	what := "istiod " + is.Name()
	timeout := l.cfg.IstiodTimeout
	if timeout <= 0 {
		timeout = 90 * time.Second
	}
	return waitFor(ctx, what, timeout, is.proc, func() error {
		resp, err := http.Get(is.HTTPURL() + "/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/ready: %s", resp.Status)
		}
		v, err := is.View(ctx)
		if err != nil {
			return err
		}
		synced := map[string]bool{}
		for _, e := range v.Clusters {
			synced[e.ID] = e.SyncStatus == "synced"
		}
		for _, c := range l.cfg.Clusters {
			if !synced[c.Name] {
				return fmt.Errorf("/debug/clusterz: %s not synced yet (%v)", c.Name, v.Clusters)
			}
		}
		return nil
	})
}

// RestartIstiod stops istiod (by index in Istiods) and starts it again,
// waiting until it is ready with every cluster synced.
func (l *Lab) RestartIstiod(ctx context.Context, i int) error {
	if err := l.StopIstiod(i); err != nil {
		return err
	}
	return l.StartIstiod(ctx, i)
}

// StopIstiod stops istiod (by index in Istiods; SIGTERM, its graceful
// shutdown) until StartIstiod: its xDS and debug ports refuse connections
// meanwhile, and port-forwards to its pod fail.
func (l *Lab) StopIstiod(i int) error {
	is, err := l.istiod(i)
	if err != nil {
		return err
	}
	return is.proc.stop()
}

// KillIstiod kills istiod (SIGKILL: no graceful shutdown, no GOAWAY to its
// clients) until StartIstiod.
func (l *Lab) KillIstiod(i int) error {
	is, err := l.istiod(i)
	if err != nil {
		return err
	}
	return is.proc.kill()
}

// StartIstiod starts a stopped istiod again and waits until it is ready
// with every cluster synced.
func (l *Lab) StartIstiod(ctx context.Context, i int) error {
	is, err := l.istiod(i)
	if err != nil {
		return err
	}
	if err := is.proc.start(l.cfg.Detach); err != nil {
		return err
	}
	if err := l.saveState(); err != nil {
		return err
	}
	return l.waitIstiod(ctx, is)
}

func (l *Lab) istiod(i int) (*Istiod, error) {
	if i < 0 || i >= len(l.istiods) {
		return nil, fmt.Errorf("no istiod %d", i)
	}
	return l.istiods[i], nil
}

// IstiodVersion is the version the lab's istiod pods carry in their image
// tag: istio.io/istio's master of late August 2026, what became 1.31.
const IstiodVersion = "1.31.0-dev"
