package live

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc"

	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/xdsclient"
)

// WatchOptions configure Watch.
type WatchOptions struct {
	Viewpoints []xdsclient.Viewpoint
	// Ztunnels are control planes to impersonate a ztunnel against (the
	// workload API, WDS: one view per istiod); "" means each one watched.
	Ztunnels []string
	// ControlPlanes to watch on. Empty means a port-forward to the istiod
	// pod of Kube's first context, in IstiodNamespace (its xDS port, 15012
	// with TLS).
	ControlPlanes   []Target
	Kube            istiod.Kube
	IstiodNamespace string
	// Transport is how to reach every control plane (TLS, CA, token,
	// server name, dial timeout); its Address is ignored.
	Transport xdsclient.TransportConfig
	Mode      xdsclient.Mode
	// EDSNames to watch (nil: every EDS cluster CDS names); Listeners
	// adds LDS and RDS. EDSOnly asks EDS for EDSNames without CDS (watch
	// --service: one service's pushes, whatever the size of the mesh).
	EDSNames  []string
	EDSOnly   bool
	Listeners bool
	// OnEvent hears every event of every stream, from their goroutines.
	OnEvent func(xdsclient.Event)
	// OnForward, if set, hears of the port-forward once it is up.
	OnForward func(pod, address string)
}

// ErrForward marks a Watch that could not port-forward to istiod (no
// istiod pod found, its API server or its port unreachable): istiod was
// not reached, which is not the caller's input being wrong.
var ErrForward = errors.New("cannot port-forward to istiod")

// watchTarget is one control plane with its shared connection.
type watchTarget struct {
	cluster, address string
	conn             *grpc.ClientConn
}

// Watch runs one stream per viewpoint on each control plane that serves
// it (pickTargets), and one ztunnel per control plane asked for, until ctx
// ends, and returns the streams' errors. A
// failed port-forward or a bad transport fails it before any stream runs.
func Watch(ctx context.Context, o WatchOptions) error {
	var tgs []*watchTarget
	if len(o.ControlPlanes) == 0 {
		port := istiodXDSPort
		if o.Transport.TLS {
			port = 15012
		}
		pf, kctx, err := o.Kube.PortForward(ctx, o.IstiodNamespace, port, o.Transport.DialTimeout)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrForward, err)
		}
		defer pf.Close()
		if o.OnForward != nil {
			o.OnForward(pf.Pod, pf.Address)
		}
		tgs = append(tgs, &watchTarget{cluster: kctx, address: pf.Address})
	}
	for _, t := range o.ControlPlanes {
		tgs = append(tgs, &watchTarget{cluster: t.Cluster, address: t.Address})
	}
	for _, t := range tgs {
		tc := o.Transport
		tc.Address = t.address
		conn, err := xdsclient.Dial(tc)
		if err != nil {
			return err
		}
		defer conn.Close()
		t.conn = conn
	}

	var clients []interface{ Run(context.Context) error }
	for _, vp := range o.Viewpoints {
		for _, t := range pickTargets(tgs, vp) {
			cp := t.cluster
			if cp == "" {
				cp = t.address
			}
			c, err := xdsclient.New(xdsclient.Options{
				Viewpoint: vp, ControlPlane: cp, Conn: t.conn,
				Transport: xdsclient.TransportConfig{Address: t.address},
				Mode:      o.Mode, EDSNames: o.EDSNames, EDSOnly: o.EDSOnly, Listeners: o.Listeners,
				DialTimeout: o.Transport.DialTimeout, OnEvent: o.OnEvent,
			})
			if err != nil {
				return err
			}
			clients = append(clients, c)
		}
	}
	ztunnels := map[*watchTarget]bool{}
	for _, z := range o.Ztunnels {
		for _, t := range pickTargets(tgs, ztunnelViewpoint(z)) {
			if ztunnels[t] {
				continue
			}
			ztunnels[t] = true
			cp := t.cluster
			if cp == "" {
				cp = orText(z, t.address)
			}
			c, err := xdsclient.NewWDS(xdsclient.WDSOptions{Identity: xdsclient.ZtunnelIdentity{Cluster: t.cluster}, ControlPlane: cp, Conn: t.conn,
				Transport: xdsclient.TransportConfig{Address: t.address}, DialTimeout: o.Transport.DialTimeout, OnEvent: o.OnEvent})
			if err != nil {
				return err
			}
			clients = append(clients, c)
		}
	}

	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	for i, c := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.Run(ctx) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// pickTargets chooses the control planes a viewpoint is watched on: the one
// that is primary of its ControlPlane or Cluster, else the only one, else
// all of them (to compare what each istiod sends to the same proxy).
func pickTargets(tgs []*watchTarget, vp xdsclient.Viewpoint) []*watchTarget {
	want := vp.ControlPlane
	if want == "" {
		want = vp.Cluster
	}
	for _, t := range tgs {
		if t.cluster != "" && t.cluster == want {
			return []*watchTarget{t}
		}
	}
	return tgs
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
