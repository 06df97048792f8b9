package fleet

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// State is a proxy's (or one xDS type's) sync state with its istiod, in
// istioctl proxy-status's words where it has them.
type State string

const (
	// Synced: istiod's last push of every type it sent was acknowledged.
	Synced State = "SYNCED"
	// Stale: the proxy has not acknowledged istiod's last push of a type.
	Stale State = "STALE"
	// Rejected: the proxy NACKed istiod's last push of a type.
	Rejected State = "NACK"
	// NotSent: istiod has sent the proxy nothing yet.
	NotSent State = "NOT SENT"
	// Disconnected: a pod that runs a proxy and no istiod that meshscope
	// read lists it.
	Disconnected State = "DISCONNECTED"
	// Unknown: not every istiod could be read, and none of those read
	// lists the proxy.
	Unknown State = "UNKNOWN"
)

// States are every state, in the order filters list them.
var States = []State{Synced, Stale, Rejected, NotSent, Disconnected, Unknown}

// rank orders states from best to worst, for a proxy's overall state.
var rank = map[State]int{NotSent: 0, Synced: 1, Stale: 2, Rejected: 3}

// TypeSync is one xDS type of a connected proxy.
type TypeSync struct {
	// Type is the short name (CDS, LDS, RDS, EDS, WDS, …) or the type URL.
	Type  string `json:"type"`
	State State  `json:"state"`
	// SentAt is when istiod last pushed this type (istiod 1.24+).
	SentAt time.Time `json:"sentAt,omitzero"`
	// Error is the proxy's last NACK message.
	Error string `json:"error,omitempty"`
}

// Read is one control plane's /debug/syncz, or why it could not be read.
type Read struct {
	ControlPlane string
	Address      string
	Statuses     []model.SyncStatus
	Err          error
}

// Proxy is one row of the fleet: a connected proxy, a pod with a proxy
// that is connected nowhere, or both joined.
type Proxy struct {
	// ID is NAME.NAMESPACE, as istiod shows it.
	ID        string `json:"id"`
	Cluster   string `json:"cluster,omitempty"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Kind is sidecar, router, ztunnel, waypoint (istiod's proxy type) or
	// ambient (a pod its node's ztunnel serves).
	Kind model.ProxyKind `json:"kind"`
	// ControlPlane is the istiod the proxy is connected to ("" for none);
	// ConnectedAs is the CLUSTER_ID it told that istiod.
	ControlPlane string `json:"controlPlane,omitempty"`
	ConnectedAs  string `json:"connectedAs,omitempty"`
	// Version is the proxy's Istio version: what it told istiod, else its
	// image's tag. IstiodVersion is the version of its istiod's image.
	Version       string `json:"version,omitempty"`
	IstiodVersion string `json:"istiodVersion,omitempty"`
	State         State  `json:"state"`
	// StaleFor is, for a stale or rejected proxy, how long ago istiod sent
	// the push it is waiting on (the oldest such type).
	StaleFor time.Duration `json:"staleFor,omitempty"`
	Types    []TypeSync    `json:"types,omitempty"`
	// Probe marks one of meshscope's own impersonated proxies: not the
	// mesh's, and not counted as a pod's connection.
	Probe bool `json:"probe,omitempty"`
	// Pod is the watched pod the proxy runs in (nil when meshscope knows
	// no such pod: a VM, a cluster it does not watch, a probe).
	Pod *model.ProxyPod `json:"pod,omitempty"`
	// Drift lists where the identity the proxy was injected with differs
	// from what the mesh gives its pod today.
	Drift []Drift `json:"drift,omitempty"`
}

// Drift is one identity field that differs.
type Drift struct {
	// Field is "network" or "cluster".
	Field    string `json:"field"`
	Injected string `json:"injected"`
	Derived  string `json:"derived"`
}

// Fleet is the whole join.
type Fleet struct {
	Proxies []Proxy `json:"proxies"`
	// Unread are the control planes whose syncz could not be read.
	Unread []Read `json:"-"`
	// Complete is true when the syncz of every control plane of the
	// snapshot was read: only then is a pod that no istiod lists
	// disconnected rather than unknown. Missing names the others.
	Complete bool     `json:"complete"`
	Missing  []string `json:"missing,omitempty"`
}

// Build joins the control planes' syncz with the snapshot's proxy pods at
// time now. A control plane whose read failed makes the fleet incomplete.
func Build(snap *model.Snapshot, reads []Read, now time.Time) Fleet {
	f := Fleet{}
	read := map[string]bool{}
	for _, r := range reads {
		read[r.ControlPlane] = r.Err == nil
	}
	for _, cp := range snap.ControlPlanes() {
		if !read[cp] {
			f.Missing = append(f.Missing, cp)
		}
	}
	f.Complete = len(reads) > 0 && len(f.Missing) == 0
	pods := map[string][]int{} // namespace/name → indexes in snap.Proxies
	if snap != nil {
		for i, p := range snap.Proxies {
			pods[p.Namespace+"/"+p.Name] = append(pods[p.Namespace+"/"+p.Name], i)
		}
	}
	connected := map[int]bool{}
	istiodVersion := IstiodVersions(snap)
	for _, r := range reads {
		if r.Err != nil {
			f.Unread = append(f.Unread, r)
			f.Complete = false
			continue
		}
		for _, s := range r.Statuses {
			p := Proxy{ID: s.Proxy, Namespace: s.Namespace(), Name: s.Name(), Kind: s.ProxyType,
				ControlPlane: r.ControlPlane, ConnectedAs: s.ClusterID, Version: s.IstioVersion,
				IstiodVersion: istiodVersion[r.ControlPlane], Probe: xdsclient.IsProbeVersion(s.IstioVersion)}
			p.Types, p.State, p.StaleFor = typeStates(s, now)
			if !p.Probe {
				if i, ok := matchPod(snap, pods[p.Namespace+"/"+p.Name], s.ClusterID); ok {
					connected[i] = true
					pp := snap.Proxies[i]
					p.Pod, p.Cluster = &pp, pp.Cluster
					if v := revisionVersion(snap, r.ControlPlane, pp.Injected); v != "" {
						p.IstiodVersion = v
					}
				}
			}
			if p.Cluster == "" {
				p.Cluster = s.ClusterID
			}
			f.Proxies = append(f.Proxies, p)
		}
	}
	if snap != nil {
		f.Proxies = append(f.Proxies, unconnected(snap, connected, f.Proxies, f.Complete, read)...)
	}
	for i := range f.Proxies {
		f.Proxies[i].Drift = drift(f.Proxies[i])
	}
	slices.SortFunc(f.Proxies, func(a, b Proxy) int {
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), strings.Compare(a.Namespace, b.Namespace),
			strings.Compare(a.Name, b.Name), strings.Compare(a.ControlPlane, b.ControlPlane))
	})
	return f
}

// matchPod picks, among the pods of that namespace and name, the one in
// the cluster the proxy claims; else the only one.
func matchPod(snap *model.Snapshot, idx []int, claimed string) (int, bool) {
	for _, i := range idx {
		if snap.Proxies[i].Cluster == claimed {
			return i, true
		}
	}
	if len(idx) == 1 {
		return idx[0], true
	}
	return 0, false
}

// unconnected lists the proxy pods that no istiod lists. An ambient pod
// is served by a ztunnel on its node: it is connected when one is.
func unconnected(snap *model.Snapshot, connected map[int]bool, rows []Proxy, complete bool, read map[string]bool) []Proxy {
	ztunnels := map[[2]string]*Proxy{} // cluster, node → a connected ztunnel
	for i := range rows {
		if r := &rows[i]; r.Pod != nil && r.Pod.Kind == model.ProxyZtunnel {
			ztunnels[[2]string{r.Pod.Cluster, r.Pod.Node}] = r
		}
	}
	ztunnelPods := map[[2]string]bool{} // cluster, node → a ztunnel pod runs there
	for _, pp := range snap.Proxies {
		if pp.Kind == model.ProxyZtunnel {
			ztunnelPods[[2]string{pp.Cluster, pp.Node}] = true
		}
	}
	var out []Proxy
	for i, pp := range snap.Proxies {
		if connected[i] {
			continue
		}
		p := Proxy{ID: pp.ProxyID(), Cluster: pp.Cluster, Namespace: pp.Namespace, Name: pp.Name, Kind: pp.Kind, Pod: &snap.Proxies[i]}
		if pp.Injected != nil {
			p.Version = pp.Injected.Version
		}
		node := [2]string{pp.Cluster, pp.Node}
		switch zt := ztunnels[node]; {
		case pp.Kind == model.ProxyAmbient && zt != nil:
			p.ControlPlane, p.State, p.IstiodVersion = zt.ControlPlane, zt.State, zt.IstiodVersion
		case pp.Kind == model.ProxyAmbient && !ztunnelPods[node]:
			// No ztunnel pod meshscope sees on its node: whether one
			// serves it is not known (ztunnel may run where meshscope
			// does not look).
			p.State = Unknown
		case complete && revisionUnread(snap, pp, read):
			// Its revision's istiod is not the one whose syncz was read
			// (a canary upgrade): whether it is connected is not known.
			p.State = Unknown
		case complete:
			p.State = Disconnected
		default:
			p.State = Unknown
		}
		out = append(out, p)
	}
	return out
}

// typeStates applies istiod's own rule (statusgen.go debugSyncStatus) to
// every type the proxy watches: an error is a NACK, no nonce sent is NOT
// SENT, the acked nonce equal to the sent one is SYNCED, else STALE.
func typeStates(s model.SyncStatus, now time.Time) ([]TypeSync, State, time.Duration) {
	types := s.Types()
	out := make([]TypeSync, 0, len(types))
	overall := NotSent
	var staleFor time.Duration
	for url, r := range types {
		t := TypeSync{Type: shortType(url), SentAt: r.SentTime, Error: r.LastError}
		switch {
		case r.LastError != "":
			t.State = Rejected
		case r.Sent == "":
			t.State = NotSent
		case r.Sent == r.Acked:
			t.State = Synced
		default:
			t.State = Stale
		}
		if (t.State == Stale || t.State == Rejected) && !r.SentTime.IsZero() {
			staleFor = max(staleFor, now.Sub(r.SentTime))
		}
		// The worst of STALE and NACK wins; else SYNCED when anything was
		// sent and acknowledged (a type not sent yet is no fault).
		if t.State != NotSent && rank[t.State] > rank[overall] || overall == NotSent && t.State == Synced {
			overall = t.State
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b TypeSync) int { return strings.Compare(a.Type, b.Type) })
	return out, overall, staleFor
}

var shortTypes = map[string]string{
	model.TypeCDS: "CDS", model.TypeLDS: "LDS", model.TypeRDS: "RDS", model.TypeEDS: "EDS",
	model.TypeWDS: "WDS",
	"type.googleapis.com/istio.workload.Workload":                          "WDS",
	"type.googleapis.com/istio.security.Authorization":                     "AUTHZ",
	"type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig":        "ECDS",
	"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret": "SDS",
	"type.googleapis.com/istio.networking.v1alpha3.ProxyConfig":            "PCDS",
}

func shortType(url string) string {
	if s, ok := shortTypes[url]; ok {
		return s
	}
	return url
}

// IstiodVersions is each control plane's istiod version (its ready pod's
// image tag), by cluster ID.
func IstiodVersions(snap *model.Snapshot) map[string]string {
	m := map[string]string{}
	if snap == nil {
		return m
	}
	for _, c := range snap.Clusters {
		for _, p := range c.Istiods {
			if p.Version != "" && (m[c.ID] == "" || p.Ready) {
				m[c.ID] = p.Version
			}
			// Each other revision is a control plane of its own
			// (cluster1@canary).
			if cp := model.JoinControlPlane(c.ID, p.RevisionName()); snap.RevisionPlane(cp) != nil && p.Version != "" && (m[cp] == "" || p.Ready) {
				m[cp] = p.Version
			}
		}
	}
	return m
}

// drift compares the identity a proxy was injected with (its istio-proxy
// container's env) with what the mesh gives its pod today: the network of
// its endpoints and its cluster's ID. A proxy that sends no NETWORK while
// its pod is on a network gets istiod's forceGateway view: every endpoint
// of a network with a gateway through that gateway, its own network's too.
func drift(p Proxy) []Drift {
	if p.Pod == nil || p.Pod.Injected == nil || p.Pod.Kind != model.ProxySidecar && p.Pod.Kind != model.ProxyGateway {
		return nil
	}
	var out []Drift
	if id := p.Pod.Injected; id.Network != p.Pod.Network {
		out = append(out, Drift{Field: "network", Injected: id.Network, Derived: p.Pod.Network})
	}
	if id := p.Pod.Injected; id.ClusterID != "" && id.ClusterID != p.Pod.Cluster {
		out = append(out, Drift{Field: "cluster", Injected: id.ClusterID, Derived: p.Pod.Cluster})
	}
	return out
}

// revisionVersion is the version of the istiod of the proxy's injected
// revision in control plane cp (a ready pod's first), "" when unknown: in
// a canary upgrade a proxy's istiod is its revision's, not any pod's.
func revisionVersion(snap *model.Snapshot, cp string, id *model.InjectedIdentity) string {
	c := snap.ClusterByID(model.ControlPlaneCluster(cp))
	if c == nil || id == nil || id.Revision == "" {
		return ""
	}
	v := ""
	for _, p := range c.IstiodsOfRevision(id.Revision) {
		if p.Version != "" && (v == "" || p.Ready) {
			v = p.Version
		}
	}
	return v
}

// revisionUnread reports whether the proxy of pod pp belongs to a revision
// of a primary serving its cluster whose istiod's syncz was not read (read,
// by control plane: cluster1 for the predicted revision, cluster1@canary
// for another), so that the proxy may be connected to it.
func revisionUnread(snap *model.Snapshot, pp model.ProxyPod, read map[string]bool) bool {
	if pp.Injected == nil || pp.Injected.Revision == "" {
		return false
	}
	servers, _ := snap.RevisionServers(pp.Cluster)
	for _, c := range servers {
		if c.PredictedRevision == "" || c.PredictedRevision == pp.Injected.Revision {
			continue
		}
		if !read[model.JoinControlPlane(c.ID, pp.Injected.Revision)] {
			return true
		}
	}
	return false
}
