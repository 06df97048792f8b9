package istiod

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshscope/meshscope/xdsclient"
)

// Kube reaches istiod and real pods through the kubeconfig, read like
// kubectl reads it, and lazily: a caller with an xDS address and plain
// viewpoints never touches it.
type Kube struct {
	// Kubeconfig is an explicit path; empty means $KUBECONFIG (merged),
	// else ~/.kube/config.
	Kubeconfig string
	// Contexts are the contexts given; the first one is where istiod is
	// looked for (empty: the current context).
	Contexts []string
	// Revision narrows the istiod pod to port-forward to (istio.io/rev).
	Revision string
}

// config is the rest.Config of a kube context ("" means the first of
// Contexts, else the current one) and the context's name.
func (k Kube) config(kctx string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if k.Kubeconfig != "" {
		rules.ExplicitPath = k.Kubeconfig
	}
	if kctx == "" && len(k.Contexts) > 0 {
		kctx = k.Contexts[0]
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kctx})
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	if kctx == "" {
		kctx = raw.CurrentContext
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kube context %q: %w", kctx, err)
	}
	cfg.Timeout = 15 * time.Second
	return cfg, kctx, nil
}

// ViewpointFromPod reads one Pod (get only) and copies its identity. The
// ref's Cluster names the kube context; the cluster ID comes from the pod's
// ISTIO_META_CLUSTER_ID, else the context name.
func (k Kube) ViewpointFromPod(ctx context.Context, ref xdsclient.PodRef) (xdsclient.Viewpoint, error) {
	cfg, kctx, err := k.config(ref.Cluster)
	if err != nil {
		return xdsclient.Viewpoint{}, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return xdsclient.Viewpoint{}, err
	}
	pod, err := cs.CoreV1().Pods(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return xdsclient.Viewpoint{}, fmt.Errorf("pod %s/%s in context %q: %w", ref.Namespace, ref.Name, kctx, err)
	}
	vp, err := xdsclient.ViewpointFromPod(pod, "")
	if err != nil {
		return vp, err
	}
	if vp.Cluster == "" {
		vp.Cluster = kctx
	}
	return vp, nil
}

// PortForward finds istiod in namespace of the first kube context and
// forwards a local port to one of its ports (xDS 15010, 15012 with TLS;
// debug 8080). It returns the forward and the context's name (the cluster
// that istiod is primary of, as far as the kubeconfig says).
func (k Kube) PortForward(ctx context.Context, namespace string, port int, timeout time.Duration) (*PortForward, string, error) {
	return k.PortForwardIn(ctx, "", namespace, port, timeout)
}

// PortForwardIn is PortForward to the istiod of kube context kctx ("" is
// the first context): in multi-primary each primary's istiod runs in its
// own cluster, and its debug endpoint is reached only through that
// cluster's API server.
func (k Kube) PortForwardIn(ctx context.Context, kctx, namespace string, port int, timeout time.Duration) (*PortForward, string, error) {
	cfg, kctx, err := k.config(kctx)
	if err != nil {
		return nil, "", fmt.Errorf("no kube context to port-forward through: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", err
	}
	// The Pod is found again whenever the forward must be re-established
	// (istiod rolled out while the UI or watch runs).
	find := func(ctx context.Context) (string, string, error) {
		lctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		pod, err := FindPod(lctx, cs, namespace, k.Revision)
		if err != nil {
			return "", "", fmt.Errorf("context %q: %w", kctx, err)
		}
		return pod.Namespace, pod.Name, nil
	}
	pf, err := StartPortForwardTo(ctx, PortForwardOptions{
		Config: cfg, RemotePort: port, Timeout: timeout, Find: find,
		Logf: func(format string, args ...any) { slog.Info(fmt.Sprintf(format, args...), "context", kctx) },
	})
	if err != nil {
		return nil, "", err
	}
	return pf, kctx, nil
}
