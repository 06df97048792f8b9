package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/internal/kubesim"
	"github.com/meshscope/meshscope/lab"
)

// labChurn changes a real lab the way the demo's churn changes the demo
// mesh: a Service "soak" in namespace sample of every cluster of the
// kubeconfig (through the context named after it), its pods scaled between one and four and made ready or not,
// one change every interval. The lab has no controllers, so kubesim writes
// the pod status and EndpointSlice; istiod pushes each change. What it
// created is deleted when it stops. (The soak driver writes to the lab;
// meshscope itself only reads.)
type labChurn struct {
	clusters []*churnCluster
	rnd      *rand.Rand
}

type churnCluster struct {
	name    string
	index   int
	network string
	cs      kubernetes.Interface
	pods    []string // the soak pods, by name
	serial  int
}

const (
	churnService = "soak"
	churnPort    = 7070
)

func newLabChurn(ctx context.Context, kubeconfig string, seed int64) (_ *labChurn, err error) {
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, err
	}
	// One context per cluster: the one named after it (the lab's admin;
	// CLUSTER-readonly may not write), else the first by name.
	byCluster := map[string]string{}
	for n, c := range raw.Contexts {
		if cur, ok := byCluster[c.Cluster]; !ok || n == c.Cluster || (cur != c.Cluster && n < cur) {
			byCluster[c.Cluster] = n
		}
	}
	names := make([]string, 0, len(byCluster))
	for _, n := range byCluster {
		names = append(names, n)
	}
	sort.Strings(names)
	lc := &labChurn{rnd: rand.New(rand.NewSource(seed))}
	defer func() {
		if err != nil {
			_ = lc.cleanup(context.WithoutCancel(ctx))
		}
	}()
	for i, n := range names {
		cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, n, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("context %s: %w", n, err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		ns, err := cs.CoreV1().Namespaces().Get(ctx, lab.SystemNamespace, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("context %s: %w", n, err)
		}
		c := &churnCluster{name: n, index: i, network: ns.Labels[lab.NetworkLabel], cs: cs}
		lc.clusters = append(lc.clusters, c)
		if err := c.removeLeftovers(ctx); err != nil {
			return nil, fmt.Errorf("context %s: %w", n, err)
		}
		if err := c.createService(ctx); err != nil {
			return nil, fmt.Errorf("context %s: %w", n, err)
		}
		if err := c.addPod(ctx); err != nil {
			return nil, fmt.Errorf("context %s: %w", n, err)
		}
	}
	return lc, nil
}

// run changes the lab every interval until ctx ends; errors are logged
// (an API server may be slow), not fatal.
func (lc *labChurn) run(ctx context.Context, every time.Duration, logf func(string, ...any)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c := lc.clusters[lc.rnd.Intn(len(lc.clusters))]
		var err error
		switch lc.rnd.Intn(3) {
		case 0:
			if len(c.pods) < 4 {
				err = c.addPod(ctx)
			}
		case 1:
			if len(c.pods) > 1 {
				err = c.removePod(ctx, c.pods[lc.rnd.Intn(len(c.pods))])
			}
		case 2:
			err = c.toggleReady(ctx, c.pods[lc.rnd.Intn(len(c.pods))])
		}
		if err != nil && ctx.Err() == nil {
			logf("lab churn in %s: %v", c.name, err)
		}
	}
}

// cleanup deletes every pod, the Service and its EndpointSlice.
func (lc *labChurn) cleanup(ctx context.Context) error {
	var errs []error
	for _, c := range lc.clusters {
		for _, p := range c.pods {
			errs = append(errs, ignoreNotFound(c.cs.CoreV1().Pods(lab.SampleNamespace).Delete(ctx, p, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})))
		}
		errs = append(errs,
			ignoreNotFound(c.cs.CoreV1().Services(lab.SampleNamespace).Delete(ctx, churnService, metav1.DeleteOptions{})),
			ignoreNotFound(c.cs.DiscoveryV1().EndpointSlices(lab.SampleNamespace).Delete(ctx, churnService+"-sim", metav1.DeleteOptions{})))
	}
	return errors.Join(errs...)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// removeLeftovers deletes the pods of an interrupted soak.
func (c *churnCluster) removeLeftovers(ctx context.Context) error {
	api := c.cs.CoreV1().Pods(lab.SampleNamespace)
	pods, err := api.List(ctx, metav1.ListOptions{LabelSelector: "app=" + churnService})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		if err := ignoreNotFound(api.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})); err != nil {
			return err
		}
	}
	return nil
}

func (c *churnCluster) createService(ctx context.Context) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: churnService, Namespace: lab.SampleNamespace, Labels: map[string]string{"app": churnService}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": churnService},
			Ports:    []corev1.ServicePort{{Name: "http", Port: churnPort, TargetPort: intstr.FromInt32(churnPort), Protocol: corev1.ProtocolTCP}},
		},
	}
	_, err := c.cs.CoreV1().Services(lab.SampleNamespace).Create(ctx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil // left by an interrupted soak: reused
	}
	return err
}

func (c *churnCluster) addPod(ctx context.Context) error {
	c.serial++
	name := fmt.Sprintf("soak-%d", c.serial)
	// 10.(210+cluster).x.y: apart from the fixture's pod IPs.
	ip := fmt.Sprintf("10.%d.%d.%d", 210+c.index, c.serial/250%250, c.serial%250+1)
	if err := kubesim.CreatePod(ctx, c.cs, kubesim.Pod{Namespace: lab.SampleNamespace, Name: name, IP: ip,
		Labels: lab.AppLabels(churnService, "v1", c.network)}); err != nil {
		return err
	}
	c.pods = append(c.pods, name)
	return kubesim.Sync(ctx, c.cs, lab.SampleNamespace, churnService)
}

func (c *churnCluster) removePod(ctx context.Context, name string) error {
	for i, p := range c.pods {
		if p == name {
			c.pods = append(c.pods[:i], c.pods[i+1:]...)
			break
		}
	}
	err := c.cs.CoreV1().Pods(lab.SampleNamespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err := ignoreNotFound(err); err != nil {
		return err
	}
	return kubesim.Sync(ctx, c.cs, lab.SampleNamespace, churnService)
}

func (c *churnCluster) toggleReady(ctx context.Context, name string) error {
	api := c.cs.CoreV1().Pods(lab.SampleNamespace)
	p, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	p.Status = kubesim.PodStatus(p.Status.PodIP, !kubesim.PodReady(p))
	if _, err := api.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return kubesim.Sync(ctx, c.cs, lab.SampleNamespace, churnService)
}
