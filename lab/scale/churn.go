package scale

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/internal/kubesim"
	"github.com/meshscope/meshscope/lab"
)

// Change is one churn step: a pod added to or removed from a Service, and
// its EndpointSlice rewritten, at Time (when the slice write returned).
type Change struct {
	Time    time.Time
	Cluster string
	Service string // hostname
	Added   bool
}

// ChurnResult is what a churn run did.
type ChurnResult struct {
	Changes []Change
	Errors  int
	// Wall is how long the run took; Rate the changes per second reached.
	Wall time.Duration
	Rate float64
}

// churnWorkers write changes in parallel, each owning a share of the
// Services (so two never rewrite one slice at once), so a slow write does
// not lower the rate.
const churnWorkers = 4

// Churner adds and removes Pods at a steady rate in every cluster of a
// filled Plan, the way a rolling deployment or an autoscaler would: each
// step picks a Service at random and either adds a Pod to it (Running,
// Ready) or removes the Pod an earlier step added, then rewrites its
// EndpointSlice. The mesh keeps its size on average. A Churner can run
// several times; the pods it added stay between runs.
type Churner struct {
	p       *Plan
	clients []kubernetes.Interface
	rng     *rand.Rand

	mu    sync.Mutex
	extra map[int]string // Service index -> the churn pod it holds
	next  []int          // next churn pod number per cluster (for IPs)
}

// NewChurner prepares churn on p's clusters; seed makes runs repeatable.
func (p *Plan) NewChurner(seed uint64) (*Churner, error) {
	ch := &Churner{p: p, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), extra: map[int]string{}, next: make([]int, len(p.Clusters))}
	for _, c := range p.Clusters {
		cs, err := WriterClient(c)
		if err != nil {
			return nil, err
		}
		ch.clients = append(ch.clients, cs)
	}
	return ch, nil
}

// Run churns at rate changes per second for d (or until ctx ends), and
// returns what it changed. Errors are counted, not fatal: a benchmark
// reports them.
//
// The deadline d stops new steps, not one under way: a step cut between
// creating its pod and rewriting the slice left a pod the Churner did not
// know, which a later rewrite of that slice counted and Restore never
// removed (the mesh one endpoint bigger than the Plan's; issue 26).
func (ch *Churner) Run(ctx context.Context, rate float64, d time.Duration) ChurnResult {
	stepCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	jobs := make([]chan int, churnWorkers)
	var (
		mu  sync.Mutex
		res ChurnResult
		wg  sync.WaitGroup
	)
	for w := range jobs {
		jobs[w] = make(chan int, 64)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs[w] {
				if ctx.Err() != nil {
					continue // queued before the deadline: skip
				}
				c, err := ch.step(stepCtx, i)
				mu.Lock()
				if err != nil {
					if stepCtx.Err() == nil {
						res.Errors++
					}
				} else {
					res.Changes = append(res.Changes, c)
				}
				mu.Unlock()
			}
		}()
	}
	start := time.Now()
	t := time.NewTicker(time.Duration(float64(time.Second) / rate))
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-t.C:
			i := ch.rng.IntN(len(ch.p.Services))
			select {
			case jobs[i%churnWorkers] <- i:
			default: // that worker is behind: skip rather than queue up
			}
		}
	}
	t.Stop()
	for _, j := range jobs {
		close(j)
	}
	wg.Wait()
	res.Wall = time.Since(start)
	res.Rate = float64(len(res.Changes)) / res.Wall.Seconds()
	return res
}

// step adds a pod to Service i, or removes the one an earlier step added.
func (ch *Churner) step(ctx context.Context, i int) (Change, error) {
	s := ch.p.Services[i]
	c := ch.p.Clusters[s.Cluster]
	cs := ch.clients[s.Cluster]
	ch.mu.Lock()
	pod, had := ch.extra[i]
	k := ch.next[s.Cluster]
	if !had {
		ch.next[s.Cluster]++
		// Known before it is written: should the create or the slice
		// rewrite fail half-way, the next step on i or Restore removes it
		// (a delete of a pod that is not there is fine).
		pod = fmt.Sprintf("%s-churn-%05d", s.Name, k)
		ch.extra[i] = pod
	}
	ch.mu.Unlock()
	if had {
		err := cs.CoreV1().Pods(s.Namespace).Delete(ctx, pod, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		if err != nil && !apierrors.IsNotFound(err) {
			return Change{}, err
		}
	} else {
		p := kubesim.Pod{Namespace: s.Namespace, Name: pod, IP: churnIP(s.Cluster, k), Labels: lab.AppLabels(s.Name, "v1", c.Network)}
		if err := kubesim.CreatePod(ctx, cs, p); err != nil {
			return Change{}, err
		}
	}
	if err := kubesim.Sync(ctx, cs, s.Namespace, s.Name); err != nil {
		return Change{}, err
	}
	if had {
		ch.mu.Lock()
		delete(ch.extra, i)
		ch.mu.Unlock()
	}
	return Change{Time: time.Now(), Cluster: c.Name, Service: s.Hostname(), Added: !had}, nil
}

// churnIP is unique per cluster and clear of PodIP's range: 10.(150+cluster).x.y.
func churnIP(cluster, k int) string {
	return fmt.Sprintf("10.%d.%d.%d", 150+cluster, (k/250)%256, k%250+1)
}

// Restore removes every pod the churn added and is still there, so the
// mesh is back to the Plan's size (a benchmark's next phase counts on it).
func (ch *Churner) Restore(ctx context.Context) error {
	ch.mu.Lock()
	idx := make([]int, 0, len(ch.extra))
	for i := range ch.extra {
		idx = append(idx, i)
	}
	ch.mu.Unlock()
	for _, i := range idx {
		if _, err := ch.step(ctx, i); err != nil {
			return err
		}
	}
	return nil
}
