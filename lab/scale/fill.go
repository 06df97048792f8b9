package scale

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/meshscope/meshscope/internal/kubesim"
	"github.com/meshscope/meshscope/lab"
)

// Logf reports progress (a benchmark's stderr); nil is silent.
type Logf func(format string, args ...any)

func (f Logf) say(format string, args ...any) {
	if f != nil {
		f(format, args...)
	}
}

// WriterClient is an admin client for writers, with client-side rate
// limiting lifted (the API servers' own max-in-flight still applies).
func WriterClient(c *lab.Cluster) (kubernetes.Interface, error) {
	rc := c.RESTConfig()
	rc.QPS, rc.Burst = 5000, 10000
	rc.Timeout = 60 * time.Second
	return kubernetes.NewForConfig(rc)
}

// Fill counts what the fixture holds, creates the namespaces (with their
// default ServiceAccount: no controller does it in the lab), then, with
// parallel writers, every Service, its Pods (Running and Ready, via
// kubesim) and its EndpointSlice.
func (p *Plan) Fill(ctx context.Context, writers int, logf Logf) error {
	start := time.Now()
	clients := make([]kubernetes.Interface, len(p.Clusters))
	for i, c := range p.Clusters {
		cs, err := WriterClient(c)
		if err != nil {
			return err
		}
		clients[i] = cs
		svcs, slices, pods, err := ListAll(ctx, cs)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		p.FixtureServices += len(svcs.Items)
		p.FixturePods += len(pods.Items)
		for _, s := range slices.Items {
			p.FixtureEndpoints += len(s.Endpoints)
		}
		if p.Nodes > 0 {
			if p.zones[i], err = createNodes(ctx, cs, c.Name, p.Nodes); err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
		}
		for n := 0; n < p.Namespaces; n++ {
			if err := ensureNamespace(ctx, cs, Namespace(n)); err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
		}
	}
	logf.say("filling %d clusters: %d services, %d pods and endpoints on %d nodes per cluster, %d writers (fixture: %d services, %d endpoints)",
		len(p.Clusters), len(p.Services), p.Endpoints, p.Nodes, writers, p.FixtureServices, p.FixtureEndpoints)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan Service)
	var (
		svcDone, podDone atomic.Int64
		once             sync.Once
		firstErr         error
		wg               sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() { firstErr = err; cancel() })
	}
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				if err := p.writeService(ctx, clients[s.Cluster], s, &podDone); err != nil {
					fail(fmt.Errorf("%s: %s/%s: %w", p.Clusters[s.Cluster].Name, s.Namespace, s.Name, err))
					continue
				}
				svcDone.Add(1)
			}
		}()
	}
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				el := time.Since(start)
				logf.say("fill: %d/%d services, %d/%d pods (%.0f pods/s, %s)", svcDone.Load(), len(p.Services),
					podDone.Load(), p.Endpoints, float64(podDone.Load())/el.Seconds(), el.Round(time.Second))
			}
		}
	}()
feed:
	for _, s := range p.Services {
		select {
		case jobs <- s:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(stop)
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.FillTime = time.Since(start)
	logf.say("filled in %s (%.0f pods/s)", p.FillTime.Round(time.Millisecond), float64(p.Endpoints)/p.FillTime.Seconds())
	return nil
}

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("service account %s/default: %w", ns, err)
	}
	return nil
}

// writeService creates one Service, its Pods and its EndpointSlice, as a
// Deployment, kubelets and the EndpointSlice controller would leave them.
func (p *Plan) writeService(ctx context.Context, cs kubernetes.Interface, s Service, podDone *atomic.Int64) error {
	c := p.Clusters[s.Cluster]
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: map[string]string{"app": s.Name, "service": s.Name}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": s.Name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: Port, TargetPort: intstr.FromInt32(Port), Protocol: corev1.ProtocolTCP}},
		},
	}
	if _, err := cs.CoreV1().Services(s.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	for j := 0; j < s.Pods; j++ {
		pod := kubesim.Pod{
			Namespace: s.Namespace,
			Name:      fmt.Sprintf("%s-v1-%05d", s.Name, j),
			IP:        PodIP(s.Cluster, s.FirstPod+j),
			Labels:    lab.AppLabels(s.Name, "v1", c.Network),
		}
		if p.Nodes > 0 { // spread over the nodes, so over the zones
			pod.Node = nodeName(c.Name, (s.FirstPod+j)%p.Nodes)
		}
		if err := kubesim.CreatePod(ctx, cs, pod); err != nil {
			return err
		}
		podDone.Add(1)
	}
	return kubesim.SyncWithZones(ctx, cs, s.Namespace, s.Name, p.zones[s.Cluster])
}

// ListAll is the plain client-go LIST of what the collector needs for
// endpoints: every Service, EndpointSlice and Pod of one cluster (in the
// client's content type), the three in parallel.
func ListAll(ctx context.Context, cs kubernetes.Interface) (*corev1.ServiceList, *discoveryv1.EndpointSliceList, *corev1.PodList, error) {
	var (
		svcs                   *corev1.ServiceList
		slices                 *discoveryv1.EndpointSliceList
		pods                   *corev1.PodList
		errSvc, errSl, errPods error
		wg                     sync.WaitGroup
	)
	wg.Add(3)
	go func() {
		defer wg.Done()
		svcs, errSvc = cs.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	}()
	go func() {
		defer wg.Done()
		slices, errSl = cs.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	}()
	go func() {
		defer wg.Done()
		pods, errPods = cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	}()
	wg.Wait()
	for _, err := range []error{errSvc, errSl, errPods} {
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return svcs, slices, pods, nil
}
