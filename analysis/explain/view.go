package explain

import (
	"fmt"
	"sort"

	"github.com/meshscope/meshscope/analysis/gatewayhop"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
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
	Source    model.ServiceSource `json:"source,omitempty"`
	Namespace string              `json:"namespace,omitempty"`
	// NoEndpoints says why istiod is predicted to send no endpoints at all
	// (a DNS ServiceEntry, a service not exported to the proxy's
	// namespace, a namespace istiod does not read).
	NoEndpoints string             `json:"noEndpoints,omitempty"`
	Actual      []Actual           `json:"actual"`
	Predicted   []horizon.Endpoint `json:"predicted"`
	Dropped     []horizon.Dropped  `json:"dropped"`
	// LB is how the proxy's Envoy spreads requests over the endpoints:
	// the cluster's settings from CDS when istiod sent them (LBFrom
	// "cds"), else istiod's defaults ("istiod-default").
	LB     horizon.LBConfig `json:"lb"`
	LBFrom lbSource         `json:"lbFrom"`
	// Split is each network's share of the proxy's requests.
	Split       []NetworkSplit `json:"split"`
	Verdict     Verdict        `json:"verdict"`
	Differences []Difference   `json:"differences"`
	// Error says why there is no actual EDS (stream state), if so.
	Error string `json:"error,omitempty"`
	// Notes explain what the control plane cannot send, e.g. the endpoints
	// of a cluster its istiod does not read.
	Notes []string `json:"notes,omitempty"`
	// SecondHop follows each gateway endpoint into its network's east-west
	// gateway: where the request goes there, or where it breaks.
	SecondHop []gatewayhop.Hop `json:"secondHop,omitempty"`
}

// infoOf names a viewpoint for output.
func infoOf(vp xdsclient.Viewpoint, controlPlane string) ViewpointInfo {
	return ViewpointInfo{Name: vp.String(), Cluster: vp.Cluster, Network: vp.Network, NoNetwork: vp.NoNetwork, ControlPlane: controlPlane}
}

// NetworkSplit is one network's share of a proxy's requests to a service
// port (endpoints without a network count under "").
type NetworkSplit struct {
	Network string `json:"network"`
	// Share is what Envoy sends there given what istiod sent, Intended
	// what istiod's weights mean (every entry kept); Predicted is Share
	// for the predicted EDS.
	Share     float64 `json:"share"`
	Intended  float64 `json:"intendedShare"`
	Predicted float64 `json:"predictedShare"`
}

// Explain builds the view of one service port from one viewpoint. la is the
// EDS istiod sent, or nil when none has arrived (verdict pending). The
// prediction is made from what the istiod of controlPlane reads (its own
// cluster and its remote secrets' clusters, when meshscope knows them;
// see analysis/plane), and Notes say which endpoints it cannot send for
// that reason.
func Explain(snap *model.Snapshot, hostname string, port int32, vp xdsclient.Viewpoint, controlPlane string, la *xdsclient.LoadAssignment) View {
	return ExplainWith(plane.NewSet(snap, nil), hostname, port, vp, controlPlane, la, Extra{})
}

// Extra is what explaining one view can know beyond the snapshot and the
// EDS istiod sent.
type Extra struct {
	// Subset is a DestinationRule subset: the view is of its EDS cluster
	// (outbound|PORT|SUBSET|HOST); "" for the whole service.
	Subset string
	// Cluster is the CDS cluster istiod sent for the same name (nil when
	// none): its load balancing decides the shares.
	Cluster *xdsclient.Cluster
	// Hops checks the second hop through each gateway endpoint (NewHops
	// over the whole snapshot; nil: one is made for this view).
	Hops *gatewayhop.Checker
}

// ExplainWith is Explain from the control-plane views of one snapshot
// (planes: built once by whoever holds the snapshot, with istiod's own
// views where read — for a control plane whose remote secrets meshscope
// does not read, its /debug/clusterz says which clusters it reads) and
// what else is known (Extra).
func ExplainWith(planes *plane.Set, hostname string, port int32, vp xdsclient.Viewpoint, controlPlane string, la *xdsclient.LoadAssignment, x Extra) View {
	full, subset, cl := planes.Snapshot(), x.Subset, x.Cluster
	pv := planes.Of(controlPlane)
	proxy := pv.Proxy(horizon.ProxyOf(vp))
	pred := pv.Predict(hostname, subset, port, proxy)
	v := View{
		Viewpoint:   infoOf(vp, controlPlane),
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
		Notes:       unreadNotes(pv, hostname),
	}
	if v.Dropped == nil {
		v.Dropped = []horizon.Dropped{}
	}
	if n := settingsNote(full, controlPlane); proxy.ConfigCluster != "" && n != "" {
		v.Notes = append(v.Notes, n)
	}
	v.Notes = append(v.Notes, pv.NameNotes...)
	if n := revisionNote(full, controlPlane); proxy.ConfigCluster != "" && n != "" {
		v.Notes = append(v.Notes, n)
	}
	v.LB, v.LBFrom = pred.LB, lbIstiodDefault
	if cl != nil {
		v.LB, v.LBFrom = lbOf(*cl), lbFromCDS
	}
	if la != nil {
		v.Actual = attribute(pv.Snap, hostname, *la, proxy, pred)
		applyEffects(v.Actual, v.LB)
	}
	v.Split = split(v.Actual, pred.Endpoints, la != nil)
	var diffs []Difference
	v.Verdict, diffs = compare(pred, v.Actual, la != nil)
	if la != nil && cl != nil && pred.Found {
		if lb := compareLB(pred.LB, v.LB); len(lb) > 0 {
			diffs = append(diffs, lb...)
			v.Verdict = Mismatch
		}
	}
	if diffs != nil {
		v.Differences = diffs
	}
	if x.Hops == nil {
		x.Hops = NewHops(planes, nil)
	}
	v.SecondHop = secondHops(x.Hops, v.Actual, pred.Endpoints, la != nil, hostname, port, subset)
	if v.Verdict == Match && hopsBreak(v.SecondHop) {
		v.Verdict = Broken
	}
	return v
}

// lbSource is where a view's load-balancing settings come from.
type lbSource string

// The sources of a view's load balancing.
const (
	// lbFromCDS: the cluster istiod sent in CDS.
	lbFromCDS lbSource = "cds"
	// lbIstiodDefault: istiod's defaults, when no CDS cluster is at hand.
	lbIstiodDefault lbSource = "istiod-default"
)

// split sums the shares per network: of the actual endpoints when EDS
// arrived, and of the predicted ones.
func split(actual []Actual, pred []horizon.Endpoint, received bool) []NetworkSplit {
	out := []NetworkSplit{}
	at := func(n string) *NetworkSplit {
		for i := range out {
			if out[i].Network == n {
				return &out[i]
			}
		}
		out = append(out, NetworkSplit{Network: n})
		return &out[len(out)-1]
	}
	if received {
		nets, effs := make([]string, len(actual)), make([]horizon.Effect, len(actual))
		for i, a := range actual {
			nets[i], effs[i] = a.Network, a.Effect
		}
		for _, ns := range horizon.SharesByNetwork(nets, effs) {
			s := at(ns.Network)
			s.Share, s.Intended = ns.Share, ns.Intended
		}
	}
	nets, effs := make([]string, len(pred)), make([]horizon.Effect, len(pred))
	for i, e := range pred {
		nets[i], effs[i] = e.Network, e.Effect
	}
	for _, ns := range horizon.SharesByNetwork(nets, effs) {
		at(ns.Network).Predicted = ns.Share
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Network < out[j].Network })
	return out
}

// settingsNote says which istiod settings the prediction assumed and where
// each came from, where they matter: in a mesh with ambient objects,
// whether the istiod runs ambient multi-network mode decides whether a
// sidecar loses the remote endpoints of services that are not global.
func settingsNote(snap *model.Snapshot, controlPlane string) string {
	if controlPlane == "" || !snap.AmbientInUse() {
		return ""
	}
	st := snap.SettingsFor(controlPlane)
	amb, multi := st.Get(model.SettingAmbient), st.Get(model.SettingAmbientMultiNetwork)
	mode := "runs ambient multi-network mode: a sidecar gets only its own cluster's endpoints of a service that is not global"
	if !st.AmbientMultiNetwork() {
		mode = "does not run ambient multi-network mode: sidecars get the classic split horizon, global or not"
	}
	return fmt.Sprintf("istiod %s %s (%s=%t from %s, %s=%t from %s)", controlPlane, mode,
		amb.Key, amb.Value, fromText(amb), multi.Key, multi.Value, fromText(multi))
}

func fromText(s model.Setting) string {
	if s.Note != "" && s.From == model.FromPod {
		return "istiod pod " + s.Note
	}
	if s.Note != "" {
		return string(s.From) + " " + s.Note
	}
	return string(s.From)
}
