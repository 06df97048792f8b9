package demo

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/collector"
)

// Options configure the demo mesh.
type Options struct {
	// Seed makes pod names, IPs and churn repeatable.
	Seed int64
	// Churn turns on live changes (scaling, rollouts, the flapping
	// gateway) every Interval (default 2s).
	Churn    bool
	Interval time.Duration
	Logger   *slog.Logger
}

// Demo is a running demo mesh.
type Demo struct {
	// Registry is the collector over the simulated clusters, started.
	Registry *collector.Registry
	// XDSAddress is the demo control plane's plaintext xDS address.
	XDSAddress string
	// ControlPlane names it (it plays istiod, primary of cluster1).
	ControlPlane string
	// DebugAddress is its istiod debug endpoint (/debug/syncz, clusterz,
	// networkz; debug.go), plain HTTP on loopback.
	DebugAddress string

	cancel   context.CancelFunc
	xds      *xdsServer
	debug    *debugServer
	clusters map[string]*cluster
	rnd      *rand.Rand
	opts     Options
	// loops counts the demo's goroutines (the collector, the xDS
	// updates, the churn, forgetActions): Stop waits for them.
	loops sync.WaitGroup
}

// Collector is the demo's Registry (live.InProcess).
func (d *Demo) Collector() *collector.Registry { return d.Registry }

// XDS names the demo's control plane and gives its xDS address
// (live.InProcess).
func (d *Demo) XDS() (controlPlane, address string) { return d.ControlPlane, d.XDSAddress }

// Debug names its control plane and gives its istiod debug endpoint.
func (d *Demo) Debug() (controlPlane, address string) { return d.ControlPlane, d.DebugAddress }

// Start builds the simulated clusters, starts the collector on them (from
// cluster1, like a user with one kube context) and the demo xDS server.
func Start(ctx context.Context, opts Options) (*Demo, error) {
	if opts.Interval <= 0 {
		opts.Interval = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(ctx)
	d := &Demo{cancel: cancel, clusters: map[string]*cluster{}, rnd: rand.New(rand.NewSource(opts.Seed)), opts: opts,
		ControlPlane: "cluster1"}
	// fail ends what started so far.
	fail := func(err error) (*Demo, error) {
		cancel()
		d.loops.Wait()
		return nil, err
	}
	byServer := map[string]*cluster{}
	for _, def := range clusters {
		c := newCluster(def)
		if err := c.seed(ctx, d.rnd); err != nil {
			return fail(fmt.Errorf("demo %s: %w", def.ID, err))
		}
		d.clusters[def.ID] = c
		byServer[def.Server] = c
	}
	// cluster1 reads the others through remote secrets, like istiod.
	c1 := d.clusters["cluster1"]
	for _, def := range clusters[1:] {
		sec, err := remoteSecret(def, time.Now())
		if err != nil {
			return fail(err)
		}
		if _, err := c1.client.CoreV1().Secrets(systemNamespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			return fail(err)
		}
	}
	if err := addIstioConfig(c1.dyn); err != nil {
		return fail(fmt.Errorf("demo Istio config: %w", err))
	}
	reg, err := collector.NewRegistry(collector.Options{
		Sources: []collector.Source{{Name: "cluster1", Server: c1.def.Server, Client: c1.client, Dynamic: c1.dyn}},
		NewClient: func(id string, cfg *rest.Config) (kubernetes.Interface, error) {
			c := byServer[cfg.Host]
			if c == nil {
				return nil, fmt.Errorf("demo: no simulated cluster at %s", cfg.Host)
			}
			return c.client, nil
		},
		NewDynamicClient: func(id string, cfg *rest.Config) (dynamic.Interface, error) {
			if c := byServer[cfg.Host]; c != nil && c.dyn != nil {
				return c.dyn, nil
			}
			return nil, nil
		},
		TestCredential: testCredential,
		SyncTimeout:    5 * time.Second,
		HealthInterval: time.Second,
		Logger:         opts.Logger,
	})
	if err != nil {
		return fail(err)
	}
	d.Registry = reg
	d.loops.Go(func() { _ = reg.Run(ctx) })

	d.xds, err = newXDSServer(ctx, d.ControlPlane, opts.Logger)
	if err != nil {
		return fail(err)
	}
	d.XDSAddress = d.xds.address()
	if d.debug, err = newDebugServer(d); err != nil {
		d.xds.stop()
		return fail(fmt.Errorf("demo istiod debug endpoint: %w", err))
	}
	d.DebugAddress = d.debug.address()
	updates, stop := reg.Subscribe()
	d.loops.Go(func() {
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-updates:
				if s != nil {
					d.xds.update(s)
				}
			}
		}
	})
	if opts.Churn {
		d.loops.Go(func() { d.churn(ctx) })
	}
	d.loops.Go(func() { d.forgetActions(ctx) })
	return d, nil
}

// forgetEvery is how often the simulated clusters forget the requests
// they served.
var forgetEvery = 10 * time.Second

// forgetActions empties, every forgetEvery, the list of requests each
// fake clientset records (for tests' assertions, which the demo never
// makes): it would grow with every request the collector and the churn
// make, for as long as the demo runs.
func (d *Demo) forgetActions(ctx context.Context) {
	t := time.NewTicker(forgetEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, c := range d.clusters {
			c.client.ClearActions()
			if c.dyn != nil { // the churn updates ambient Gateways too
				c.dyn.ClearActions()
			}
		}
	}
}

// WaitServed returns once the demo's control plane serves what the
// snapshot of version v (or a later one) predicts, or ctx ends.
func (d *Demo) WaitServed(ctx context.Context, v uint64) error { return d.xds.waitServed(ctx, v) }

// Stop ends the churn, the collector and the xDS server, and waits for
// every goroutine the demo started.
func (d *Demo) Stop() {
	d.cancel()
	d.loops.Wait()
	d.debug.stop()
	d.xds.stop()
}

// planted are the pods whose proxy has a planted fault, by
// "cluster/namespace/name" (fleet.go).
func (d *Demo) planted() map[string]plant {
	out := map[string]plant{}
	for _, c := range d.clusters {
		c.mu.Lock()
		for k, p := range c.planted {
			out[k] = p
		}
		c.mu.Unlock()
	}
	return out
}
