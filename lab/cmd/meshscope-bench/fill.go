package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshscope/meshscope/internal/kubesim"
	"github.com/meshscope/meshscope/lab"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// svcPlan is one benchmark Service and its Pods.
type svcPlan struct {
	cluster   int // index into plan.clusters
	namespace string
	name      string
	pods      int
	firstPod  int // index of its first pod within its cluster (for IPs)
}

// plan says what goes where: Service i lives in cluster i%3, namespace
// bench-NN of that cluster; endpoints are spread evenly over the Services
// (30,000 / 2,000 = 15 each).
type plan struct {
	clusters   []*lab.Cluster
	namespaces int
	services   []svcPlan
	endpoints  int
	// nodes per cluster; zones[cluster] maps each node to its zone.
	nodes int
	zones []map[string]string

	// What the fixture (gateways, helloworld, sleep, the kubernetes
	// Service) already holds, counted before the fill.
	fixtureServices, fixtureEndpoints, fixturePods int
	fillTime                                       time.Duration
}

func newPlan(l *lab.Lab, nSvc, nEp, nNS, nNodes int) *plan {
	p := &plan{clusters: l.Clusters(), namespaces: nNS, endpoints: nEp, nodes: nNodes}
	p.zones = make([]map[string]string, len(p.clusters))
	nextPod := make([]int, len(p.clusters))
	for i := 0; i < nSvc; i++ {
		c := i % len(p.clusters)
		n := nEp / nSvc
		if i < nEp%nSvc {
			n++
		}
		p.services = append(p.services, svcPlan{
			cluster:   c,
			namespace: benchNamespace((i / len(p.clusters)) % nNS),
			name:      fmt.Sprintf("svc-%04d", i),
			pods:      n,
			firstPod:  nextPod[c],
		})
		nextPod[c] += n
	}
	return p
}

func benchNamespace(i int) string { return fmt.Sprintf("bench-%02d", i) }

func (p *plan) totalServices() int  { return len(p.services) + p.fixtureServices }
func (p *plan) totalEndpoints() int { return p.endpoints + p.fixtureEndpoints }
func (p *plan) totalPods() int      { return p.endpoints + p.fixturePods }

// podIP is unique within a cluster: 10.(50+cluster).x.y, 250 per /24, so up
// to 64,000 pods per cluster, clear of the fixture's 10.44/10.144/10.244.
func podIP(cluster, k int) string {
	return fmt.Sprintf("10.%d.%d.%d", 50+cluster, k/250, k%250+1)
}

// writerClient is an admin client for the writers, with client-side rate
// limiting lifted (the API servers' own max-in-flight still applies).
func writerClient(c *lab.Cluster) (kubernetes.Interface, error) {
	rc := c.RESTConfig()
	rc.QPS, rc.Burst = 5000, 10000
	rc.Timeout = 60 * time.Second
	return kubernetes.NewForConfig(rc)
}

// fill creates the namespaces (with their default ServiceAccount: no
// controller does it in the lab), then, with parallel writers, every
// Service, its Pods (Running and Ready, via kubesim) and its EndpointSlice.
func fill(ctx context.Context, l *lab.Lab, p *plan, writers int) error {
	start := time.Now()
	clients := make([]kubernetes.Interface, len(p.clusters))
	for i, c := range p.clusters {
		cs, err := writerClient(c)
		if err != nil {
			return err
		}
		clients[i] = cs
		// What is there before the fill.
		svcs, slices, pods, err := listAll(ctx, cs)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		p.fixtureServices += len(svcs.Items)
		p.fixturePods += len(pods.Items)
		for _, s := range slices.Items {
			p.fixtureEndpoints += len(s.Endpoints)
		}
		if p.nodes > 0 {
			if p.zones[i], err = createNodes(ctx, cs, c.Name, p.nodes); err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
		}
		for n := 0; n < p.namespaces; n++ {
			ns := benchNamespace(n)
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s: namespace %s: %w", c.Name, ns, err)
			}
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
			if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s: service account %s/default: %w", c.Name, ns, err)
			}
		}
	}
	say("filling %d clusters: %d services, %d pods and endpoints on %d nodes per cluster, %d writers (fixture: %d services, %d endpoints)",
		len(p.clusters), len(p.services), p.endpoints, p.nodes, writers, p.fixtureServices, p.fixtureEndpoints)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan svcPlan)
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
				if err := writeService(ctx, clients[s.cluster], p, s, &podDone); err != nil {
					fail(fmt.Errorf("%s: %s/%s: %w", p.clusters[s.cluster].Name, s.namespace, s.name, err))
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
				say("fill: %d/%d services, %d/%d pods (%.0f pods/s, %s)", svcDone.Load(), len(p.services),
					podDone.Load(), p.endpoints, float64(podDone.Load())/el.Seconds(), el.Round(time.Second))
			}
		}
	}()
feed:
	for _, s := range p.services {
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
	p.fillTime = time.Since(start)
	say("filled in %s (%.0f pods/s)", p.fillTime.Round(time.Millisecond), float64(p.endpoints)/p.fillTime.Seconds())
	return nil
}

// writeService creates one Service, its Pods and its EndpointSlice, as a
// Deployment, kubelets and the EndpointSlice controller would leave them.
func writeService(ctx context.Context, cs kubernetes.Interface, p *plan, s svcPlan, podDone *atomic.Int64) error {
	c := p.clusters[s.cluster]
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.namespace, Labels: map[string]string{"app": s.name, "service": s.name}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": s.name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
	if _, err := cs.CoreV1().Services(s.namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	for j := 0; j < s.pods; j++ {
		pod := kubesim.Pod{
			Namespace: s.namespace,
			Name:      fmt.Sprintf("%s-v1-%05d", s.name, j),
			IP:        podIP(s.cluster, s.firstPod+j),
			Labels:    lab.AppLabels(s.name, "v1", c.Network),
		}
		if p.nodes > 0 { // spread over the nodes, so over the zones
			pod.Node = nodeName(c.Name, (s.firstPod+j)%p.nodes)
		}
		if err := kubesim.CreatePod(ctx, cs, pod); err != nil {
			return err
		}
		podDone.Add(1)
	}
	return kubesim.SyncWithZones(ctx, cs, s.namespace, s.name, p.zones[s.cluster])
}
