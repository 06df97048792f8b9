package build

import (
	"encoding/json"
	"net/netip"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshscope/meshscope/model"
)

// serviceGateways returns the gateways a Service is, per istiod:
//   - labelled topology.istio.io/network=<net>: a gateway for <net> on the
//     port of label networking.istio.io/gatewayPort (default 15443) and/or
//     HBONE 15008 — each only if the Service exposes it; neither → none;
//   - else, a registryServiceName gateway of meshNetworks for a network with
//     fromRegistry = this cluster, on the configured port;
//
// at every address of the Service: LoadBalancer ingress IPs or hostnames
// (type LoadBalancer only) and spec.externalIPs; for a NodePort Service
// annotated traffic.istio.io/nodeSelector without such addresses, the
// ExternalIP of every node matching the selector, on the node port. No
// address → no gateway. nodes lists the cluster's nodes (nil when they
// cannot be read) and is called only for NodePort gateways.
func serviceGateways(svc *corev1.Service, cluster, hostname string, ix *NetworkIndex, nodes func() []*Node) []model.Gateway {
	type proto struct {
		network         string
		port, hbonePort uint32
		from            model.GatewayFrom
	}
	var protos []proto
	if nw := svc.Labels[model.LabelNetwork]; nw != "" {
		gwPort := int32(model.DefaultGatewayPort)
		if s := svc.Labels[model.LabelGatewayPort]; s != "" {
			// istiod logs a warning and keeps the default on a bad value.
			if p, err := strconv.Atoi(s); err == nil {
				gwPort = int32(p)
			}
		}
		mtls, hbone := exposes(svc, gwPort), exposes(svc, model.DefaultGatewayHBONEPort)
		if !mtls && !hbone {
			return nil
		}
		p := proto{network: nw, from: model.GatewayFromService}
		if mtls {
			p.port = uint32(gwPort)
		}
		if hbone {
			p.hbonePort = model.DefaultGatewayHBONEPort
		}
		protos = append(protos, p)
	} else if ix != nil {
		for _, g := range ix.registryGateways[cluster][hostname] {
			protos = append(protos, proto{network: g.Network, port: g.Port, from: model.GatewayFromMeshNetworks})
		}
	}
	if len(protos) == 0 {
		return nil
	}
	addrs := serviceExternalAddresses(svc)
	nodePort := isNodePortGateway(svc)
	if nodePort {
		// A NodePort gateway is reached on its nodes only: istiod replaces
		// its addresses by the addresses of the nodes its selector matches
		// (updateServiceNodePortAddresses), and maps the mTLS port — not the
		// HBONE one — to its node port (ClusterExternalPorts, in
		// extractGatewaysInner).
		addrs = nil
		if nodes != nil {
			addrs = nodeGatewayAddresses(svc, nodes())
		}
		for i := range protos {
			protos[i].port = nodePortFor(svc, protos[i].port)
		}
	}
	if len(addrs) == 0 {
		return nil
	}
	out := make([]model.Gateway, 0, len(addrs)*len(protos))
	ref := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}.String()
	for _, a := range addrs {
		for _, p := range protos {
			out = append(out, model.Gateway{
				Network:   p.network,
				Cluster:   cluster,
				Address:   a,
				Port:      p.port,
				HBONEPort: p.hbonePort,
				Hostname:  !isIP(a),
				From:      p.from,
				Service:   ref,
			})
		}
	}
	return out
}

func isNodePortGateway(svc *corev1.Service) bool {
	_, ok := svc.Annotations[model.AnnotationNodeSelector]
	return ok && svc.Spec.Type == corev1.ServiceTypeNodePort
}

func nodePortFor(svc *corev1.Service, port uint32) uint32 {
	if port == 0 {
		return 0
	}
	for _, p := range svc.Spec.Ports {
		if uint32(p.Port) == port && p.NodePort != 0 {
			return uint32(p.NodePort)
		}
	}
	return port
}

// nodeGatewayAddresses are the ExternalIPs of the nodes whose labels
// include the selector (istiod ignores nodes without an ExternalIP; a
// selector that does not parse selects every node, as in istiod).
func nodeGatewayAddresses(svc *corev1.Service, nodes []*Node) []string {
	var sel map[string]string
	_ = json.Unmarshal([]byte(svc.Annotations[model.AnnotationNodeSelector]), &sel)
	var out []string
	for _, n := range nodes {
		match := true
		for k, v := range sel {
			if n.Labels[k] != v {
				match = false
				break
			}
		}
		if match && n.ExternalIP != "" {
			out = append(out, n.ExternalIP)
		}
	}
	sort.Strings(out)
	return out
}

func exposes(svc *corev1.Service, port int32) bool {
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			return true
		}
	}
	return false
}

// serviceExternalAddresses follows istio's kube conversion: for type
// LoadBalancer each ingress gives its IP, or its hostname when it has no IP;
// spec.externalIPs are added for any type. Duplicates are dropped.
func serviceExternalAddresses(svc *corev1.Service) []string {
	var out []string
	seen := map[string]bool{}
	add := func(a string) {
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				add(in.IP)
			} else {
				add(in.Hostname)
			}
		}
	}
	for _, ip := range svc.Spec.ExternalIPs {
		add(ip)
	}
	return out
}

// staticGateways are meshNetworks gateways with an address: istiod adds
// them with no cluster (pilot/pkg/model/network.go); declaredIn is the
// cluster whose ConfigMap declares them ("" for every istiod).
func staticGateways(mn *model.MeshNetworks, declaredIn string) []model.Gateway {
	var out []model.Gateway
	for _, name := range meshNetworkNames(mn) {
		for _, g := range mn.Networks[name].Gateways {
			if g.Address == "" {
				continue
			}
			out = append(out, model.Gateway{
				Network:    name,
				Address:    g.Address,
				Port:       g.Port,
				Hostname:   !isIP(g.Address),
				From:       model.GatewayFromMeshNetworks,
				DeclaredIn: declaredIn,
			})
		}
	}
	return out
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
