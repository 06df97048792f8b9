package scale

import (
	"fmt"
	"time"

	"github.com/meshscope/meshscope/lab"
)

// Service is one benchmark Service and its Pods.
type Service struct {
	Cluster   int // index into Plan.Clusters
	Namespace string
	Name      string
	Pods      int
	FirstPod  int // index of its first pod within its cluster (for IPs)
}

// Plan says what goes where: Service i lives in cluster i%len(clusters),
// namespace bench-NN of that cluster; endpoints are spread evenly over the
// Services (30,000 / 2,000 = 15 each).
type Plan struct {
	Clusters   []*lab.Cluster
	Namespaces int
	Services   []Service
	Endpoints  int
	// Nodes per cluster (over three zones) holding the Pods; 0: Pods on
	// no node, so no localities. Set before Fill.
	Nodes int
	// zones[cluster] maps each of the cluster's nodes to its zone.
	zones []map[string]string

	// What the fixture (gateways, helloworld, sleep, the kubernetes
	// Service) already holds, counted by Fill before it writes.
	FixtureServices, FixtureEndpoints, FixturePods int
	// FillTime is how long Fill took.
	FillTime time.Duration
}

// NewPlan spreads nSvc Services with nEp endpoints in all over the lab's
// clusters, in nNS namespaces per cluster.
func NewPlan(l *lab.Lab, nSvc, nEp, nNS int) *Plan {
	p := &Plan{Clusters: l.Clusters(), Namespaces: nNS, Endpoints: nEp}
	p.zones = make([]map[string]string, len(p.Clusters))
	nextPod := make([]int, len(p.Clusters))
	for i := 0; i < nSvc; i++ {
		c := i % len(p.Clusters)
		n := nEp / nSvc
		if i < nEp%nSvc {
			n++
		}
		p.Services = append(p.Services, Service{
			Cluster:   c,
			Namespace: Namespace((i / len(p.Clusters)) % nNS),
			Name:      fmt.Sprintf("svc-%04d", i),
			Pods:      n,
			FirstPod:  nextPod[c],
		})
		nextPod[c] += n
	}
	return p
}

// Namespace is the name of the benchmark's i-th namespace in a cluster.
func Namespace(i int) string { return fmt.Sprintf("bench-%02d", i) }

// NamespacePrefix starts the name of every benchmark namespace.
const NamespacePrefix = "bench-"

// Hostname is the Service's hostname in the mesh.
func (s Service) Hostname() string {
	return s.Name + "." + s.Namespace + ".svc.cluster.local"
}

// Port is the one port of every benchmark Service.
const Port = 8080

// TotalServices counts the plan's Services and the fixture's.
func (p *Plan) TotalServices() int { return len(p.Services) + p.FixtureServices }

// TotalEndpoints counts the plan's endpoints and the fixture's.
func (p *Plan) TotalEndpoints() int { return p.Endpoints + p.FixtureEndpoints }

// TotalPods counts the plan's Pods and the fixture's.
func (p *Plan) TotalPods() int { return p.Endpoints + p.FixturePods }

// PodIP is unique within a cluster: 10.(50+cluster).x.y, 250 per /24, so up
// to 64,000 pods per cluster, clear of the fixture's 10.44/10.144/10.244.
func PodIP(cluster, k int) string {
	return fmt.Sprintf("10.%d.%d.%d", 50+cluster, k/250, k%250+1)
}
