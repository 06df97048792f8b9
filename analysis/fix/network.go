package fix

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/model"
)

// Fixes of the east-west gateways and networks: a gateway Service's
// network label and port, a pod template's network or locality label.

// planLeak: a network's endpoints go to other networks with their pod IPs
// because no gateway is known for it. The fix is the network label on the
// east-west gateway Service of that network's cluster, where there is a
// Service that looks like one (in the system namespace, exposing the mTLS
// port or HBONE) but is not labelled.
func planLeak(snap *model.Snapshot, p model.Problem) Plan {
	nets := leakedNetworks(snap, p)
	var out Plan
	for _, n := range nets {
		for _, c := range gatewayCandidates(snap, n) {
			out.Proposals = append(out.Proposals, Proposal{
				Title: fmt.Sprintf("label the east-west gateway %s %s=%s", c, model.LabelNetwork, n),
				Trade: fmt.Sprintf("it becomes %s's gateway: other networks' proxies reach %s's endpoints through its address (it needs one: a load-balancer ingress or an externalIP) with mTLS, so endpoints without a sidecar are dropped instead of leaked", n, n),
				Edits: []Edit{setLabel(c, false, model.LabelNetwork, ptr(n))},
			})
		}
	}
	if len(out.Proposals) == 0 {
		for _, n := range nets {
			if gw := labelledGateway(snap, n); gw != nil {
				out.None = fmt.Sprintf("%s is labelled %s=%s but gives no gateway: fix what doctor says of it (its address, its mTLS port)", gw, model.LabelNetwork, n)
				return out
			}
		}
		out.None = fmt.Sprintf("no Service of %s's clusters looks like an east-west gateway (one in %s exposing port %d or %d without the label %s): deploy one (istioctl multicluster expose, or the eastwest gateway chart), label it %s=%s and give it an address — a deployment meshscope cannot make up",
			strings.Join(nets, ", "), systemNamespace(snap), model.DefaultGatewayPort, model.DefaultGatewayHBONEPort, model.LabelNetwork, model.LabelNetwork, strings.Join(nets, ","))
	}
	return out
}

// leakedNetworks are the networks of a leak's endpoints (of its cluster's
// first object: a row is one network's), else of its cluster.
func leakedNetworks(snap *model.Snapshot, p model.Problem) []string {
	var nets []string
	for _, o := range p.Objects {
		if e := endpointOf(snap, p, o); e != nil && e.Network != "" {
			nets = append(nets, e.Network)
			break
		}
	}
	if len(nets) == 0 {
		if c := snap.ClusterByID(p.Cluster); c != nil && c.Network != "" {
			nets = append(nets, c.Network)
		}
	}
	return nets
}

// labelledGateway is a Service labelled for network n (nil when none is).
func labelledGateway(snap *model.Snapshot, n string) *model.ObjectRef {
	for _, svc := range snap.Services {
		for _, cid := range sortedKeys(svc.Clusters) {
			if sic := svc.Clusters[cid]; !sic.NoService && sic.Labels[model.LabelNetwork] == n {
				return &model.ObjectRef{Cluster: cid, Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}
			}
		}
	}
	return nil
}

// gatewayCandidates are the Services of network n's clusters that look
// like its east-west gateway but carry no network label: in the system
// namespace, exposing the mTLS port or HBONE.
func gatewayCandidates(snap *model.Snapshot, n string) []model.ObjectRef {
	var out []model.ObjectRef
	for _, svc := range snap.Services {
		if svc.Namespace != systemNamespace(snap) {
			continue
		}
		for _, cid := range sortedKeys(svc.Clusters) {
			sic := svc.Clusters[cid]
			c := snap.ClusterByID(cid)
			if sic.NoService || c == nil || c.Network != n || sic.Labels[model.LabelNetwork] != "" {
				continue
			}
			if exposes(sic, model.DefaultGatewayPort) || exposes(sic, model.DefaultGatewayHBONEPort) {
				out = append(out, model.ObjectRef{Cluster: cid, Kind: "Service", Namespace: svc.Namespace, Name: svc.Name})
			}
		}
	}
	return out
}

func exposes(sic *model.ServiceInCluster, port int32) bool {
	for _, p := range sic.Ports {
		if p.Port == port {
			return true
		}
	}
	return false
}

// planGatewayPort: a gateway Service exposes neither its mTLS port nor
// HBONE. First the port added (named tls, to the gateway's 15443), then —
// when the Service exposes the default port and a label names another —
// the label removed.
func planGatewayPort(snap *model.Snapshot, p model.Problem) Plan {
	if len(p.Objects) == 0 {
		return none("the gateway Service is not known")
	}
	ref := p.Objects[0]
	svc := snap.Service(p.Service)
	if svc == nil || svc.Clusters[ref.Cluster] == nil {
		return none("the gateway Service " + ref.String() + " is not in the snapshot")
	}
	sic := svc.Clusters[ref.Cluster]
	port := int32(model.DefaultGatewayPort)
	label := sic.Labels[model.LabelGatewayPort]
	if n, err := strconv.Atoi(label); err == nil && n > 0 {
		port = int32(n)
	}
	var out Plan
	out.Proposals = append(out.Proposals, Proposal{
		Title: fmt.Sprintf("expose port %d (named tls, to the gateway's port %d) on %s", port, model.DefaultGatewayPort, ref),
		Trade: fmt.Sprintf("other networks reach the gateway on port %d; its pods must listen on %d, as Istio's east-west gateway does", port, model.DefaultGatewayPort),
		Edits: []Edit{changeSpec(ref, fmt.Sprintf("port %d named tls in spec.ports", port), func(m map[string]any) error {
			ports, _, _ := unstructured.NestedSlice(m, "spec", "ports")
			ports = append(ports, map[string]any{"name": "tls", "port": int64(port), "targetPort": int64(model.DefaultGatewayPort), "protocol": "TCP"})
			return unstructured.SetNestedSlice(m, ports, "spec", "ports")
		})},
	})
	if label != "" && exposes(sic, model.DefaultGatewayPort) {
		out.Proposals = append(out.Proposals, Proposal{
			Title: fmt.Sprintf("remove the label %s=%s from %s (it exposes the default port %d)", model.LabelGatewayPort, label, ref, model.DefaultGatewayPort),
			Trade: fmt.Sprintf("istiod sends other networks port %d instead of %s: right when the gateway listens there", model.DefaultGatewayPort, label),
			Edits: []Edit{setLabel(ref, false, model.LabelGatewayPort, nil)},
		})
	}
	return out
}

// planNetworkLabel: a pod labelled for another network than its
// cluster's. Its workload's template gets the cluster's network.
func planNetworkLabel(snap *model.Snapshot, p model.Problem) Plan {
	c := snap.ClusterByID(p.Cluster)
	if c == nil || c.Network == "" || len(p.Objects) == 0 {
		return none("the cluster's network is not known")
	}
	return Plan{Proposals: []Proposal{{
		Title: fmt.Sprintf("label the pod template of the workload of %s %s=%s (its cluster's network)", joinRefs(p.Objects), model.LabelNetwork, c.Network),
		Trade: fmt.Sprintf("its pods move to %s once re-made (a rollout); if the pod's label was the right one, label cluster %s's system namespace instead, which moves every pod of the cluster", c.Network, c.ID),
		Edits: setLabels(p.Objects, true, model.LabelNetwork, ptr(c.Network)),
	}}}
}

// planDuplicateGateway: istiod sends a network's gateway once per
// locality of the endpoints behind it and Envoy keeps the first
// (istio#56355). The workaround istiod's issue names: one locality label
// on every pod behind the gateway, the most common one among them.
func planDuplicateGateway(snap *model.Snapshot, p model.Problem) Plan {
	count := map[string]int{}
	best := ""
	for _, o := range p.Objects {
		e := endpointOf(snap, p, o)
		if e == nil || e.Locality == "" {
			continue
		}
		l := strings.Join(strings.FieldsFunc(e.Locality, func(r rune) bool { return r == '/' }), ".")
		count[l]++
		if best == "" || count[l] > count[best] || (count[l] == count[best] && l < best) {
			best = l
		}
	}
	if best == "" || len(p.Objects) == 0 {
		return Plan{}
	}
	return Plan{Proposals: []Proposal{{
		Title: fmt.Sprintf("give the pods behind the gateway one locality: label the pod templates of their workloads %s=%s", model.LabelLocality, best),
		Trade: "istiod then sends the gateway once; the pods count as one locality for every proxy's locality load balancing (failover, distribute) — undo it once istiod sends one entry per gateway (istio/istio#60835)",
		Edits: setLabels(p.Objects, true, model.LabelLocality, ptr(best)),
	}}}
}

// endpointOf is the endpoint of the problem's service(s) (else of any
// service) that ref names: its pod or its WorkloadEntry.
func endpointOf(snap *model.Snapshot, p model.Problem, ref model.ObjectRef) *model.Endpoint {
	hosts := append([]string{p.Service}, p.Services...)
	find := func(svc *model.Service) *model.Endpoint {
		sic := svc.Clusters[ref.Cluster]
		if sic == nil {
			return nil
		}
		for i := range sic.Endpoints {
			e := &sic.Endpoints[i]
			if (ref.Kind == "Pod" && e.Pod == ref.Name) || (ref.Kind != "Pod" && e.Workload == ref.Kind+"/"+ref.Name) {
				return e
			}
		}
		return nil
	}
	for _, h := range hosts {
		if svc := snap.Service(h); svc != nil {
			if e := find(svc); e != nil {
				return e
			}
		}
	}
	for _, svc := range snap.Services {
		if svc.Namespace == ref.Namespace {
			if e := find(svc); e != nil {
				return e
			}
		}
	}
	return nil
}

func systemNamespace(snap *model.Snapshot) string {
	if snap.SystemNamespace == "" {
		return "istio-system"
	}
	return snap.SystemNamespace
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
