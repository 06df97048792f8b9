package istiod

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	streamhttp "k8s.io/streaming/pkg/httpstream"

	"github.com/meshscope/meshscope/xdsclient"
)

// PortForward is a local listener forwarded to a port of a Pod through the
// Kubernetes API (what `kubectl port-forward` and istioctl do).
type PortForward struct {
	// Address is the local host:port to dial (e.g. 127.0.0.1:41234). It
	// stays the same when the forward heals.
	Address string
	// Pod is namespace/name of the Pod first forwarded to.
	Pod string

	mu      sync.Mutex
	current string // namespace/name forwarded to now
	heals   int
	stop    func()
	done    chan struct{}
}

// Close stops the forward (and its healing).
func (p *PortForward) Close() {
	if p != nil && p.stop != nil {
		p.stop()
		if p.done != nil {
			<-p.done
		}
	}
}

// Current is the Pod forwarded to now (namespace/name), and how many times
// the forward was re-established.
func (p *PortForward) Current() (pod string, heals int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.current, p.heals
}

// PortForwardOptions configure StartPortForwardTo.
type PortForwardOptions struct {
	Config     *rest.Config
	RemotePort int
	// Timeout bounds each attempt to establish the forward.
	Timeout time.Duration
	// Find names the Pod to forward to. It is asked again each time the
	// forward must be re-established, so a replaced Pod (istiod rolled out,
	// rescheduled) is followed.
	Find func(ctx context.Context) (namespace, pod string, err error)
	// Backoff between attempts to re-establish (defaults 500ms to 30s).
	Backoff xdsclient.Backoff
	// Logf, if set, hears when the forward is lost and re-established.
	Logf func(format string, args ...any)
}

// StartPortForward forwards a free local port on 127.0.0.1 to remotePort
// of the given Pod, as kubectl port-forward and istioctl do (SPDY through
// the API server's pods/portforward subresource), and returns once the
// forward is ready, or with an error within timeout. The forward heals:
// see StartPortForwardTo.
func StartPortForward(ctx context.Context, cfg *rest.Config, namespace, pod string, remotePort int, timeout time.Duration) (*PortForward, error) {
	return StartPortForwardTo(ctx, PortForwardOptions{Config: cfg, RemotePort: remotePort, Timeout: timeout,
		Find: func(context.Context) (string, string, error) { return namespace, pod, nil }})
}

// StartPortForwardTo is StartPortForward with the Pod found by o.Find. The
// first forward must succeed within o.Timeout. After that the forward
// heals: a forward through the API server ends whenever that connection
// does (the API server restarts, a load balancer drops an idle
// connection, the Pod goes away), and long-lived users — the UI, watch —
// would otherwise dial a dead port forever. It is re-established on the
// same local port, with backoff, finding the Pod again each time; clients
// see refused connections meanwhile and reconnect with their own backoff.
func StartPortForwardTo(ctx context.Context, o PortForwardOptions) (*PortForward, error) {
	if o.Timeout <= 0 {
		o.Timeout = xdsclient.DefaultDialTimeout
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	ns, pod, err := o.Find(ctx)
	if err != nil {
		return nil, err
	}
	f, err := startPortForward(ctx, o.Config, ns, pod, 0, o.RemotePort, o.Timeout)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pf := &PortForward{
		Address: fmt.Sprintf("127.0.0.1:%d", f.localPort),
		Pod:     types.NamespacedName{Namespace: ns, Name: pod}.String(),
		current: types.NamespacedName{Namespace: ns, Name: pod}.String(),
		done:    make(chan struct{}),
	}
	pf.stop = cancel
	go pf.heal(hctx, o, f)
	return pf, nil
}

// heal waits for the forward to end and re-establishes it until ctx ends.
func (p *PortForward) heal(ctx context.Context, o PortForwardOptions, f *forward) {
	defer close(p.done)
	local := f.localPort
	for {
		select {
		case <-ctx.Done():
			f.close()
			<-f.ended // ForwardPorts returns once stopped
			return
		case err := <-f.ended:
			o.Logf("port-forward to %s ended: %v; re-establishing on 127.0.0.1:%d", f.pod, err, local)
		}
		for attempt := 1; ; attempt++ {
			t := time.NewTimer(o.Backoff.Delay(attempt))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			ns, pod, err := o.Find(ctx)
			if err == nil {
				f, err = startPortForward(ctx, o.Config, ns, pod, local, o.RemotePort, o.Timeout)
			}
			if err != nil {
				o.Logf("port-forward: attempt %d to re-establish: %v", attempt, err)
				continue
			}
			p.mu.Lock()
			p.current = f.pod
			p.heals++
			p.mu.Unlock()
			o.Logf("port-forward to %s re-established on 127.0.0.1:%d", f.pod, local)
			break
		}
	}
}

// forward is one established client-go port-forward.
type forward struct {
	pod       string
	localPort uint16
	ended     chan error // receives once when the forward ends
	close     func()
}

func startPortForward(ctx context.Context, cfg *rest.Config, namespace, pod string, localPort uint16, remotePort int, timeout time.Duration) (*forward, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("port-forward: %w", err)
	}
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward")
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("port-forward: %w", err)
	}
	// As kubectl 1.31+ does: SPDY tunnelled over a WebSocket first (it
	// crosses HTTPS proxies that drop SPDY upgrades), plain SPDY when the
	// API server or a proxy refuses the upgrade.
	dialer := spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: transport}, http.MethodPost, req.URL())
	if ws, err := portforward.NewSPDYOverWebsocketDialerForStreaming(req.URL(), cfg); err == nil {
		dialer = portforward.NewFallbackDialerForStreaming(ws, dialer, func(err error) bool {
			return streamhttp.IsUpgradeFailure(err) || streamhttp.IsHTTPSProxyError(err)
		})
	}
	stop := make(chan struct{})
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddressesForStreaming(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("%d:%d", localPort, remotePort)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return nil, fmt.Errorf("port-forward to %s/%s: %w", namespace, pod, err)
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	var once sync.Once
	closeOnce := func() { once.Do(func() { close(stop) }) }
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ready:
	case err := <-done:
		return nil, fmt.Errorf("port-forward to %s/%s: %w", namespace, pod, err)
	case <-t.C:
		// Not waited for: ForwardPorts may be in client-go's dial, which
		// takes no context; stopped, it returns when the dial does.
		closeOnce()
		return nil, fmt.Errorf("port-forward to %s/%s: not ready within %s", namespace, pod, timeout)
	case <-ctx.Done():
		closeOnce()
		return nil, ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		closeOnce()
		<-done
		return nil, fmt.Errorf("port-forward to %s/%s: no local port: %v", namespace, pod, err)
	}
	return &forward{pod: types.NamespacedName{Namespace: namespace, Name: pod}.String(), localPort: ports[0].Local, ended: done, close: closeOnce}, nil
}
