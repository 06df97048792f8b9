package horizon

import (
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Viewpoints are the default viewpoints: one sidecar per network, in the
// first cluster of that network, served by that cluster's istiod when it
// is a context cluster (a primary), else by the first context cluster's.
func Viewpoints(snap *model.Snapshot) []Proxy {
	var out []Proxy
	for _, n := range snap.Networks {
		if n.Name == "" {
			continue
		}
		p := Proxy{Network: n.Name}
		if len(n.Clusters) > 0 {
			p.Cluster = n.Clusters[0]
		}
		for _, mc := range snap.MeshConfigs {
			if mc.Cluster == p.Cluster {
				p.ConfigCluster = p.Cluster
			}
		}
		out = append(out, p)
	}
	return out
}

// SidecarViewpoints are the default viewpoints of snap (Viewpoints) as the
// sidecars meshscope impersonates to see what a control plane sends them:
// the one conversion from a default proxy to a viewpoint, for the UI's
// streams, doctor and explain. controlPlane names the istiod to ask (""
// for the session's default).
func SidecarViewpoints(snap *model.Snapshot, controlPlane string) []xdsclient.Viewpoint {
	var out []xdsclient.Viewpoint
	for _, p := range Viewpoints(snap) {
		out = append(out, xdsclient.Viewpoint{Cluster: p.Cluster, Network: p.Network, NodeType: xdsclient.Sidecar, ControlPlane: controlPlane})
	}
	return out
}

// ProxyOf is the part of a viewpoint the prediction needs: the one
// conversion, for explain and what-if alike (a proxy without NETWORK has
// Network ""; the namespace defaults to the probe's, "default").
func ProxyOf(vp xdsclient.Viewpoint) Proxy {
	d := vp.Defaulted()
	p := Proxy{Cluster: vp.Cluster, Network: vp.Network, IP: d.IP, NetworkView: vp.RequestedNetworkView, Namespace: d.Namespace, Labels: vp.Labels}
	if vp.NoNetwork {
		p.Network = ""
	}
	return p
}
