package explain

import (
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/collector/horizon"
	"github.com/meshscope/meshscope/collector/istiod"
	"github.com/meshscope/meshscope/xdsclient"
)

// ViewpointInfo is how a view names the proxy it impersonated.
type ViewpointInfo struct {
	Name         string `json:"name"`
	Cluster      string `json:"cluster,omitempty"`
	Network      string `json:"network,omitempty"`
	NoNetwork    bool   `json:"noNetwork,omitempty"`
	ControlPlane string `json:"controlPlane,omitempty"`
}

// View is one (service port, viewpoint): what istiod sends, what it should
// send, and the verdict.
type View struct {
	Viewpoint  ViewpointInfo `json:"viewpoint"`
	Port       int32         `json:"port"`
	Subset     string        `json:"subset,omitempty"`
	EDSCluster string        `json:"edsCluster"`
	// Source says what the service istiod uses merges (kube,
	// ServiceEntry, both); Namespace is its namespace.
	Source    collector.ServiceSource `json:"source,omitempty"`
	Namespace string                  `json:"namespace,omitempty"`
	// NoEndpoints says why istiod is predicted to send no endpoints at all
	// (a DNS ServiceEntry, a service not exported to the proxy's
	// namespace, a namespace istiod does not read).
	NoEndpoints string             `json:"noEndpoints,omitempty"`
	Actual      []Actual           `json:"actual"`
	Predicted   []horizon.Endpoint `json:"predicted"`
	Dropped     []horizon.Dropped  `json:"dropped"`
	Verdict     Verdict            `json:"verdict"`
	Differences []Difference       `json:"differences"`
	// Error says why there is no actual EDS (stream state), if so.
	Error string `json:"error,omitempty"`
	// Notes explain what the control plane cannot send, e.g. the endpoints
	// of a cluster its istiod does not read.
	Notes []string `json:"notes,omitempty"`
}

// ProxyOf is the part of a viewpoint the prediction needs.
func ProxyOf(vp xdsclient.Viewpoint) horizon.Proxy {
	d := vp.Defaulted()
	p := horizon.Proxy{Cluster: vp.Cluster, Network: vp.Network, IP: d.IP, NetworkView: vp.RequestedNetworkView, Namespace: d.Namespace, Labels: vp.Labels}
	if vp.NoNetwork {
		p.Network = ""
	}
	return p
}

// InfoOf names a viewpoint for output.
func InfoOf(vp xdsclient.Viewpoint, controlPlane string) ViewpointInfo {
	return ViewpointInfo{Name: vp.String(), Cluster: vp.Cluster, Network: vp.Network, NoNetwork: vp.NoNetwork, ControlPlane: controlPlane}
}

// Explain builds the view of one service port from one viewpoint. la is the
// EDS istiod sent, or nil when none has arrived (verdict pending). The
// prediction is made from what the istiod of controlPlane reads (its own
// cluster and its remote secrets' clusters, when meshscope knows them;
// see collector.Snapshot.ForControlPlane), and Notes say which endpoints it
// cannot send for that reason.
func Explain(snap *collector.Snapshot, hostname string, port int32, vp xdsclient.Viewpoint, controlPlane string, la *xdsclient.LoadAssignment) View {
	return ExplainIn(snap, nil, hostname, "", port, vp, controlPlane, la)
}

// ExplainSubset is Explain for the EDS cluster of a DestinationRule subset
// (outbound|PORT|SUBSET|HOST; "" for the whole service).
func ExplainSubset(snap *collector.Snapshot, hostname, subset string, port int32, vp xdsclient.Viewpoint, controlPlane string, la *xdsclient.LoadAssignment) View {
	return ExplainIn(snap, nil, hostname, subset, port, vp, controlPlane, la)
}

// ExplainIn is ExplainSubset that also knows istiod's own views: for a
// control plane whose remote secrets meshscope does not read, its
// /debug/clusterz says which clusters it reads.
func ExplainIn(snap *collector.Snapshot, views []istiod.View, hostname, subset string, port int32, vp xdsclient.Viewpoint, controlPlane string, la *xdsclient.LoadAssignment) View {
	full := snap
	proxy := ProxyOf(vp)
	var reads []string
	from := ""
	if snap.ClusterByID(controlPlane) != nil {
		proxy.ConfigCluster = controlPlane // its istiod reads that cluster's Istio config
		if ids, f, known := readsOf(snap, controlPlane, views); known {
			reads, from = ids, f
			if f == "secrets" {
				snap = forControlPlane(snap, controlPlane)
			} else {
				snap = snap.Restrict(controlPlane, ids)
			}
		}
	}
	pred := horizon.PredictSubset(snap, horizon.NewIndex(snap), hostname, subset, port, proxy)
	v := View{
		Viewpoint:   InfoOf(vp, controlPlane),
		Port:        port,
		Subset:      subset,
		EDSCluster:  pred.EDSCluster,
		Source:      pred.Source,
		Namespace:   pred.Namespace,
		NoEndpoints: pred.NoEndpoints,
		Actual:      []Actual{},
		Predicted:   pred.Endpoints,
		Dropped:     pred.Dropped,
		Differences: []Difference{},
		Notes:       unreadNotes(full, snap, controlPlane, hostname, reads, from),
	}
	if v.Dropped == nil {
		v.Dropped = []horizon.Dropped{}
	}
	if la != nil {
		v.Actual = Attribute(snap, hostname, *la, proxy, pred)
	}
	var diffs []Difference
	v.Verdict, diffs = Compare(pred, v.Actual, la != nil)
	if diffs != nil {
		v.Differences = diffs
	}
	return v
}
