package demo

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/meshscope/meshscope/internal/kubesim"
	"github.com/meshscope/meshscope/model"
)

// The demo's fleet: every pod with a sidecar runs an istio-proxy container
// (kubesim.Pod's one container) started with the identity the injector
// would have given it, and the demo's control plane lists the proxies
// "connected" to it on /debug/syncz (debug.go): the planted pods' proxies
// as their plant says, every other proxy of the clusters it reads SYNCED,
// and the real connections to its xDS server (meshscope's own probes).

// Istio versions of the demo: its istiod's image and its proxies'.
const (
	demoIstioVersion = "1.29.1"
	proxyImage       = "docker.io/istio/proxyv2:" + demoIstioVersion + "-distroless"
)

// plant is a planted fault of one pod's proxy.
type plant int

const (
	plantNone plant = iota
	// plantStale: the proxy has not acknowledged istiod's last EDS push
	// (sent when the demo started, less staleBefore).
	plantStale
	// plantDrift: the pod was injected before its cluster had a network
	// label: its proxy sends no ISTIO_META_NETWORK.
	plantDrift
	// plantDisconnected: no istiod lists the proxy.
	plantDisconnected
)

// plantedProxies are the planted pods, by "cluster/namespace/service/n"
// (the n-th pod the demo creates for the service there). Churn leaves
// helloworld and reviews alone, so the plants stay.
var plantedProxies = map[string]plant{
	"cluster1/bookinfo/reviews/1":  plantStale,
	"cluster2/bookinfo/reviews/0":  plantDrift,
	"cluster2/sample/helloworld/0": plantDisconnected,
}

// staleBefore is how long before the demo started its stale proxy's
// unacknowledged push was sent: past doctor's --stale-after (30s) at once.
const staleBefore = 40 * time.Second

// runsAmbient says whether any pod of the cluster runs in ambient mode.
func (c *cluster) runsAmbient() bool {
	for _, s := range services {
		if s.Replicas[c.def.ID] > 0 && s.ambientPod(c.def.ID) {
			return true
		}
	}
	return false
}

// createZtunnel runs the cluster's ztunnel pod (the demo's pods have no
// node: one ztunnel serves them all).
func (c *cluster) createZtunnel(ctx context.Context) error {
	return kubesim.CreatePod(ctx, c.client, kubesim.Pod{Namespace: systemNamespace, Name: "ztunnel-" + c.def.ID[len(c.def.ID)-1:] + "x7kq2",
		IP: c.allocIP(), Labels: map[string]string{"app": "ztunnel"}, Container: "istio-proxy",
		Image: "docker.io/istio/ztunnel:" + demoIstioVersion + "-distroless", Env: sidecarEnv(c.def, plantNone)})
}

// sidecarEnv is the env the injector gives a pod's istio-proxy container
// (pkg/kube/inject: the cluster's network and ID when the pod was made).
func sidecarEnv(def clusterDef, p plant) map[string]string {
	env := map[string]string{"ISTIO_META_CLUSTER_ID": def.ID, "ISTIO_META_NETWORK": def.Network}
	if p == plantDrift {
		delete(env, "ISTIO_META_NETWORK")
	}
	return env
}

// connections are the streams open on the demo's xDS server, for syncz.
type connections struct {
	mu      sync.Mutex
	streams map[int64]*connection
}

// connection is one stream: the proxy's node and the types it asked for.
type connection struct {
	id, proxyType, clusterID, version string
	types                             map[string]bool
	since                             time.Time
}

func newConnections() *connections { return &connections{streams: map[int64]*connection{}} }

// request notes a request on a stream (the node comes with the first).
func (c *connections) request(stream int64, node *corev3.Node, typeURL string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streams[stream]
	if s == nil {
		s = &connection{types: map[string]bool{}, since: time.Now()}
		c.streams[stream] = s
	}
	if node != nil && node.GetId() != "" && s.id == "" {
		parts := strings.Split(node.GetId(), "~")
		s.proxyType = parts[0]
		s.id = node.GetId()
		if len(parts) >= 3 {
			s.id = parts[2]
		}
		f := node.GetMetadata().GetFields()
		s.clusterID = f["CLUSTER_ID"].GetStringValue()
		s.version = f["ISTIO_VERSION"].GetStringValue()
	}
	if typeURL != "" {
		s.types[typeURL] = true
	}
}

func (c *connections) closed(stream int64, _ *corev3.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, stream)
}

// syncz is what the demo's istiod lists: the open streams, then every
// proxy pod of the clusters it reads (planted: by "cluster/namespace/name"),
// each with its plant's state.
func (c *connections) syncz(snap *model.Snapshot, cp string, planted map[string]plant, started time.Time) []model.SyncStatus {
	var out []model.SyncStatus
	c.mu.Lock()
	for _, s := range c.streams {
		if s.id == "" {
			continue
		}
		res := map[string]model.ResourceStatus{}
		for t := range s.types {
			res[t] = model.ResourceStatus{Sent: "demo", Acked: "demo", SentTime: s.since}
		}
		out = append(out, model.SyncStatus{Proxy: s.id, ProxyType: model.ProxyKind(s.proxyType), ClusterID: s.clusterID, IstioVersion: s.version, Resources: res})
	}
	c.mu.Unlock()
	if snap == nil {
		return out
	}
	reads, _ := snap.ClustersReadBy(cp)
	for _, p := range snap.Proxies {
		if p.Kind == model.ProxyAmbient || !slices.Contains(reads, p.Cluster) {
			continue // an ambient pod's proxy is its node's ztunnel
		}
		pl := planted[p.Key()]
		if pl == plantDisconnected {
			continue
		}
		at := started
		types := []string{model.TypeCDS, model.TypeLDS, model.TypeEDS, model.TypeRDS}
		if p.Kind == model.ProxyZtunnel {
			types = []string{model.TypeWDS}
		}
		res := map[string]model.ResourceStatus{}
		for _, t := range types {
			res[t] = model.ResourceStatus{Sent: "demo-1", Acked: "demo-1", SentTime: at}
		}
		if pl == plantStale {
			res[model.TypeEDS] = model.ResourceStatus{Sent: "demo-2", Acked: "demo-1", SentTime: started.Add(-staleBefore)}
		}
		clusterID := p.Cluster
		if p.Injected != nil && p.Injected.ClusterID != "" {
			clusterID = p.Injected.ClusterID
		}
		version := demoIstioVersion
		if p.Injected != nil && p.Injected.Version != "" {
			version = p.Injected.Version
		}
		out = append(out, model.SyncStatus{Proxy: p.ProxyID(), ProxyType: p.Kind, ClusterID: clusterID, IstioVersion: version, Resources: res})
	}
	return out
}
