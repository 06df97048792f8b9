package tui

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// testNow is the clock of every test: ages on screen are stable.
var testNow = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return testNow.Add(-d) }

var httpPort = []model.ServicePort{{Name: "http", Port: 5000, TargetPort: "5000", Protocol: "TCP"}}

func ep(cluster, network, addr, pod string, mtls bool) model.Endpoint {
	e := model.Endpoint{Cluster: cluster, Network: network, NetworkFrom: model.NetworkFromNamespaceLabel,
		Address: addr, Ports: []model.EndpointPort{{Name: "http", Port: 5000, Protocol: "TCP"}},
		Pod: pod, Ready: true, Serving: true, Labels: map[string]string{"app": "x"}}
	if mtls {
		e.TLSMode = "istio"
		e.Labels["security.istio.io/tlsMode"] = "istio"
	}
	return e
}

func svc(ns, name string, ports []model.ServicePort, eps map[string][]model.Endpoint) *model.Service {
	s := &model.Service{Hostname: name + "." + ns + ".svc.cluster.local", Namespace: ns, Name: name, Ports: ports,
		Clusters: map[string]*model.ServiceInCluster{}}
	for cl, es := range eps {
		s.Clusters[cl] = &model.ServiceInCluster{Cluster: cl, Type: "ClusterIP", Ports: ports, Endpoints: es}
	}
	return s
}

// Root CAs of the test mesh: cluster1 publishes the mesh's shared root,
// cluster2 a self-signed one of its own (mTLS between them fails).
var (
	sharedRoot = model.RootCert{Fingerprint: "5f1c0a7e93b2d4c6aa01", Subject: "CN=mesh root CA", NotAfter: testNow.AddDate(10, 0, 0)}
	ownRoot    = model.RootCert{Fingerprint: "9a0e44d1c3b85e2f7701", Subject: "O=cluster.local", NotAfter: testNow.AddDate(10, 0, 0)}
)

// testSnapshot is the mesh of every golden test: three clusters in two
// networks; only network2 has an east-west gateway (192.168.60.9:15443).
// From network1, helloworld's network2 pods are rewritten to that gateway;
// from network2, its network1 pod leaks (no gateway for network1); legacy's
// network2 pod has no sidecar and is dropped for network1. cluster1 is the
// primary (an istiod runs there; meshscope reads its remote secrets: it
// reads cluster2, not the unreachable cluster3); cluster2 publishes a root
// CA of its own.
func testSnapshot() *model.Snapshot {
	s := &model.Snapshot{
		Version: 7,
		Time:    testNow,
		Clusters: []model.Cluster{
			{ID: "cluster1", Source: model.SourceRef{Kind: model.SourceContext, Name: "kind-cluster1"}, Server: "https://10.0.0.1:6443",
				Network: "network1", State: model.StateSynced, SyncedAt: ago(2 * time.Minute), LastEventAt: ago(5 * time.Second),
				Counts: model.Counts{Services: 12, EndpointSlices: 14, Endpoints: 31, Pods: 28, Nodes: 1, RemoteSecrets: 1},
				IDFrom: model.IDFromIstiod, Istiods: []model.IstiodPod{{Name: "istiod-5d8f7c9b4-x2k4q", ClusterID: "cluster1", Revision: "default", Ready: true}},
				RootCerts: []model.RootCert{sharedRoot}, SecretsRead: true},
			{ID: "cluster2", Source: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster2", In: "cluster1", Key: "cluster2"},
				Server: "https://10.0.0.2:6443", Network: "network2", State: model.StateSynced, SyncedAt: ago(90 * time.Second), LastEventAt: ago(12 * time.Second),
				Counts: model.Counts{Services: 9, EndpointSlices: 10, Endpoints: 22, Pods: 20, Nodes: 1},
				IDFrom: model.IDFromRemoteSecret, RootCerts: []model.RootCert{ownRoot}},
			{ID: "cluster3", Source: model.SourceRef{Kind: model.SourceContext, Name: "kind-cluster3"}, Server: "https://10.0.0.3:6443",
				Network: "network1", State: model.StateError, ErrorKind: model.ErrUnreachable, Reason: "API server unreachable: dial tcp 10.0.0.3:6443: connection refused"},
		},
		Networks: []model.Network{
			{Name: "network1", Clusters: []string{"cluster1", "cluster3"}},
			{Name: "network2", Clusters: []string{"cluster2"}, Gateways: 1},
		},
		Gateways: []model.Gateway{
			{Network: "network2", Cluster: "cluster2", Address: "192.168.60.9", Port: 15443, From: model.GatewayFromService, Service: "istio-system/istio-eastwestgateway"},
		},
		// cluster2's secret: a bound token that expires in 3 days.
		RemoteSecrets: []model.RemoteSecret{{
			Ref: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster2", In: "cluster1", Key: "cluster2"},
			Credential: model.Credential{Auth: model.AuthBoundToken, Expires: testNow.Add(3*24*time.Hour + time.Hour), Server: "https://10.0.0.2:6443", CA: "data",
				Subject: "system:serviceaccount:istio-system:istio-reader-service-account"},
			Test: &model.CredentialTest{At: ago(time.Minute)},
		}},
	}
	s.Services = []*model.Service{
		svc("sample", "helloworld", httpPort, map[string][]model.Endpoint{
			"cluster1": {ep("cluster1", "network1", "10.10.0.5", "helloworld-v1-7c8d9", true)},
			"cluster2": {ep("cluster2", "network2", "10.20.0.7", "helloworld-v2-5f6b8", true), ep("cluster2", "network2", "10.20.0.8", "helloworld-v2-9a1c2", true)},
		}),
		svc("legacy", "legacy", httpPort, map[string][]model.Endpoint{
			"cluster1": {ep("cluster1", "network1", "10.10.0.9", "legacy-0", true)},
			"cluster2": {ep("cluster2", "network2", "10.20.0.9", "legacy-1", false)},
		}),
		svc("sample", "sleep", []model.ServicePort{{Name: "http", Port: 80, TargetPort: "80"}}, map[string][]model.Endpoint{
			"cluster1": {},
		}),
		svc("münchen", "straße", httpPort, map[string][]model.Endpoint{
			"cluster1": {ep("cluster1", "network1", "10.10.0.11", "strasse-0", true)},
		}),
	}
	sortServices(s.Services)
	return s
}

func sortServices(ss []*model.Service) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j].Hostname < ss[j-1].Hostname; j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
}

const helloHost = "helloworld.sample.svc.cluster.local"

var (
	vp1 = xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}
	vp2 = xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2"}
)

// loadAssignmentOf turns a prediction into the EDS istiod would send.
func loadAssignmentOf(p horizon.Prediction) *xdsclient.LoadAssignment {
	la := &xdsclient.LoadAssignment{Cluster: p.EDSCluster}
	for _, e := range p.Endpoints {
		x := xdsclient.Endpoint{Address: e.Address, Port: e.Port, Weight: e.Weight, Health: string(e.Health), TLSMode: "istio",
			LocalityWeight: e.LocalityWeight, Priority: e.Priority, Workload: xdsclient.Workload{Cluster: e.Cluster, Name: e.Pod}}
		if _, name, ok := strings.Cut(e.Workload, "/"); ok && e.Pod == "" {
			x.Workload.Name = name // istio.workload names a WorkloadEntry's workload
		}
		if parts := strings.SplitN(e.Locality, "/", 3); e.Locality != "" {
			x.Locality.Region = parts[0]
			if len(parts) > 1 {
				x.Locality.Zone = parts[1]
			}
			if len(parts) > 2 {
				x.Locality.SubZone = parts[2]
			}
		}
		la.Endpoints = append(la.Endpoints, x)
	}
	return la
}

// fakeFeed is a Feed for tests.
type fakeFeed struct {
	snaps  chan *model.Snapshot
	events chan xdsclient.Event

	mu     sync.Mutex
	actual map[string]*xdsclient.LoadAssignment
	cds    map[string]*xdsclient.Cluster
	vps    []xdsclient.Viewpoint
	status []xdsclient.StreamStatus
}

func newFakeFeed() *fakeFeed {
	return &fakeFeed{snaps: make(chan *model.Snapshot, 1), events: make(chan xdsclient.Event, 64), actual: map[string]*xdsclient.LoadAssignment{},
		cds: map[string]*xdsclient.Cluster{}}
}

// close ends the feed as a real one's owner does once the program has
// ended: the waits on its channels return.
func (f *fakeFeed) close() {
	close(f.snaps)
	close(f.events)
}

func (f *fakeFeed) Snapshots() <-chan *model.Snapshot { return f.snaps }
func (f *fakeFeed) Events() <-chan xdsclient.Event    { return f.events }
func (f *fakeFeed) Actual(vp, eds string) (*xdsclient.LoadAssignment, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	la, ok := f.actual[vp+"|"+eds]
	return la, testControlPlane, ok
}

// testControlPlane is the istiod that serves every viewpoint of the fake.
const testControlPlane = "cluster1"

// Sent is what the fake's viewpoints hold, as doctor compares it.
func (f *fakeFeed) Sent() []explain.Sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []explain.Sent
	for _, vp := range f.vps {
		s := explain.Sent{ControlPlane: testControlPlane, Viewpoint: vp, EDS: map[string]xdsclient.LoadAssignment{}}
		for k, la := range f.actual {
			if strings.HasPrefix(k, vp.String()+"|") {
				s.EDS[la.Cluster] = *la
				s.Clusters = append(s.Clusters, la.Cluster)
			}
		}
		sort.Strings(s.Clusters)
		out = append(out, s)
	}
	return out
}

// Cluster is the CDS cluster a viewpoint got (set by setCluster).
func (f *fakeFeed) Cluster(vp, name string) (*xdsclient.Cluster, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.cds[vp+"|"+name]
	return c, ok
}
func (f *fakeFeed) Viewpoints() []xdsclient.Viewpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.vps
}
func (f *fakeFeed) Status() []xdsclient.StreamStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status
}

func (f *fakeFeed) setActual(vp xdsclient.Viewpoint, la *xdsclient.LoadAssignment) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actual[vp.String()+"|"+la.Cluster] = la
}

// testFeed is the fake feed of the golden tests: network1's viewpoint got
// exactly the predicted EDS for helloworld; network2's viewpoint got an EDS
// without the leaked network1 pod (a mismatch explain must describe).
func testFeed(snap *model.Snapshot) *fakeFeed {
	f := newFakeFeed()
	f.vps = []xdsclient.Viewpoint{vp1, vp2}
	// Every other service port: exactly what istiod is predicted to send.
	for _, svc := range snap.Services {
		for _, p := range svc.Ports {
			for _, vp := range f.vps {
				if svc.Hostname != helloHost {
					f.setActual(vp, loadAssignmentOf(horizon.Predict(snap, svc.Hostname, p.Port, horizon.Proxy{Cluster: vp.Cluster, Network: vp.Network})))
				}
			}
		}
	}
	f.status = []xdsclient.StreamStatus{
		{Viewpoint: vp1.String(), ControlPlane: "istiod-cluster1", State: "connected", LastPush: ago(3 * time.Second)},
		{Viewpoint: vp2.String(), ControlPlane: "istiod-cluster1", State: "connected", LastPush: ago(4 * time.Second)},
	}
	p1 := horizon.Predict(snap, helloHost, 5000, horizon.Proxy{Cluster: "cluster1", Network: "network1"})
	f.setActual(vp1, loadAssignmentOf(p1))
	p2 := horizon.Predict(snap, helloHost, 5000, horizon.Proxy{Cluster: "cluster2", Network: "network2"})
	la2 := loadAssignmentOf(p2)
	var kept []xdsclient.Endpoint
	for _, e := range la2.Endpoints {
		if e.Address != "10.10.0.5" {
			kept = append(kept, e)
		}
	}
	la2.Endpoints = kept
	f.setActual(vp2, la2)
	return f
}

// newTestModel is a model at w×h with the snapshot already indexed.
func newTestModel(tb interface{ Fatal(...any) }, theme string, w, h int, snap *model.Snapshot, feed Feed) *Model {
	m, err := New(feed, Options{Theme: theme, Contexts: []string{"kind-cluster1", "kind-cluster3"}, now: func() time.Time { return testNow }})
	if err != nil {
		tb.Fatal(err)
	}
	m.Update(windowSize(w, h))
	if feed != nil {
		m.status = feed.Status()
	}
	if snap != nil {
		m.snap = snap
		m.Update(indexMsg{ix: buildIndex(snap, feed, m.doc)})
	}
	return m
}

// bigSnapshot has n services with eps endpoints each over 3 clusters and
// 2 networks (for benchmarks).
func bigSnapshot(n, eps int) *model.Snapshot {
	s := testSnapshot()
	s.Services = make([]*model.Service, 0, n)
	clusters := []string{"cluster1", "cluster2"}
	nets := []string{"network1", "network2"}
	for i := 0; i < n; i++ {
		byCl := map[string][]model.Endpoint{}
		for j := 0; j < eps; j++ {
			c := j % 2
			byCl[clusters[c]] = append(byCl[clusters[c]], ep(clusters[c], nets[c], fmt.Sprintf("10.%d.%d.%d", c, i/250, j), fmt.Sprintf("app%d-%d", i, j), true))
		}
		s.Services = append(s.Services, svc(fmt.Sprintf("ns%03d", i%100), fmt.Sprintf("service-%05d", i), httpPort, byCl))
	}
	sortServices(s.Services)
	return s
}

func windowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
