package xdsclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// PortForward is a local listener forwarded to a port of a Pod through the
// Kubernetes API (what `kubectl port-forward` and istioctl do).
type PortForward struct {
	// Address is the local host:port to dial (e.g. 127.0.0.1:41234).
	Address string
	// Pod is namespace/name of the Pod forwarded to.
	Pod  string
	stop func()
}

// Close stops the forward.
func (p *PortForward) Close() {
	if p != nil && p.stop != nil {
		p.stop()
	}
}

// StartPortForward forwards a free local port on 127.0.0.1 to remotePort
// of the given Pod, as kubectl port-forward and istioctl do (SPDY through
// the API server's pods/portforward subresource), and returns once the
// forward is ready, or with an error within timeout.
func StartPortForward(ctx context.Context, cfg *rest.Config, namespace, pod string, remotePort int, timeout time.Duration) (*PortForward, error) {
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	return startPortForward(ctx, cfg, namespace, pod, remotePort, timeout)
}

func startPortForward(ctx context.Context, cfg *rest.Config, namespace, pod string, remotePort int, timeout time.Duration) (*PortForward, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("port-forward: %w", err)
	}
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward")
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("port-forward: %w", err)
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, req.URL())
	stop := make(chan struct{})
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", remotePort)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return nil, fmt.Errorf("port-forward to %s/%s: %w", namespace, pod, err)
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	closeOnce := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ready:
	case err := <-done:
		return nil, fmt.Errorf("port-forward to %s/%s: %w", namespace, pod, err)
	case <-t.C:
		closeOnce()
		return nil, fmt.Errorf("port-forward to %s/%s: not ready within %s", namespace, pod, timeout)
	case <-ctx.Done():
		closeOnce()
		return nil, ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		closeOnce()
		return nil, fmt.Errorf("port-forward to %s/%s: no local port: %v", namespace, pod, err)
	}
	return &PortForward{
		Address: fmt.Sprintf("127.0.0.1:%d", ports[0].Local),
		Pod:     namespace + "/" + pod,
		stop:    closeOnce,
	}, nil
}
