package build

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func TestServiceGateways(t *testing.T) {
	mn, _ := model.ParseMeshNetworks(meshtest.MeshNetworksYAML)
	ix := NewNetworkIndex(mn, "k")
	const host = "istio-eastwestgateway.istio-system.svc.cluster.local"

	t.Run("lab gateway: LB IP, default port 15443", func(t *testing.T) {
		got := serviceGateways(meshtest.EastWestGateway("network2", "192.168.60.9"), "cluster2", host, ix, nil)
		want := []model.Gateway{{Network: "network2", Cluster: "cluster2", Address: "192.168.60.9", Port: 15443, From: model.GatewayFromService, Service: "istio-system/istio-eastwestgateway"}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("gatewayPort label picks the port", func(t *testing.T) {
		s := meshtest.EastWestGateway("network1", "1.1.1.1")
		s.Labels[model.LabelGatewayPort] = "15012"
		got := serviceGateways(s, "c", host, ix, nil)
		if len(got) != 1 || got[0].Port != 15012 {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("port not exposed: no gateway", func(t *testing.T) {
		s := meshtest.EastWestGateway("network1", "1.1.1.1")
		s.Labels[model.LabelGatewayPort] = "16000"
		if got := serviceGateways(s, "c", host, ix, nil); len(got) != 0 {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("bad gatewayPort label falls back to 15443", func(t *testing.T) {
		s := meshtest.EastWestGateway("network1", "1.1.1.1")
		s.Labels[model.LabelGatewayPort] = "tls"
		if got := serviceGateways(s, "c", host, ix, nil); len(got) != 1 || got[0].Port != 15443 {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("HBONE only", func(t *testing.T) {
		s := meshtest.EastWestGateway("network1", "1.1.1.1")
		s.Spec.Ports = []corev1.ServicePort{{Port: 15008}}
		got := serviceGateways(s, "c", host, ix, nil)
		if len(got) != 1 || got[0].Port != 0 || got[0].HBONEPort != 15008 {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("hostname ingress kept and marked", func(t *testing.T) {
		s := meshtest.EastWestGateway("network1", "")
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: "abc.elb.amazonaws.com"}}
		got := serviceGateways(s, "c", host, ix, nil)
		if len(got) != 1 || got[0].Address != "abc.elb.amazonaws.com" || !got[0].Hostname {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("IP preferred over hostname of the same ingress; externalIPs added", func(t *testing.T) {
		s := meshtest.EastWestGateway("network1", "")
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "2.2.2.2", Hostname: "x.example"}}
		s.Spec.ExternalIPs = []string{"3.3.3.3", "2.2.2.2"}
		got := serviceGateways(s, "c", host, ix, nil)
		if len(got) != 2 || got[0].Address != "2.2.2.2" || got[1].Address != "3.3.3.3" || got[0].Hostname {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("externalIPs on a ClusterIP service; LB status ignored for non-LB", func(t *testing.T) {
		s := meshtest.EastWestGateway("network1", "9.9.9.9")
		s.Spec.Type = corev1.ServiceTypeClusterIP
		s.Spec.ExternalIPs = []string{"4.4.4.4"}
		got := serviceGateways(s, "c", host, ix, nil)
		if len(got) != 1 || got[0].Address != "4.4.4.4" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("no address: no gateway", func(t *testing.T) {
		s := meshtest.EastWestGateway("network1", "")
		s.Status.LoadBalancer.Ingress = nil
		if got := serviceGateways(s, "c", host, ix, nil); len(got) != 0 {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("no network label: not a gateway", func(t *testing.T) {
		s := meshtest.EastWestGateway("network1", "1.1.1.1")
		delete(s.Labels, model.LabelNetwork)
		if got := serviceGateways(s, "c", host, ix, nil); len(got) != 0 {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("registryServiceName only in the fromRegistry cluster", func(t *testing.T) {
		s := meshtest.EastWestGateway("", "5.5.5.5")
		delete(s.Labels, model.LabelNetwork)
		s.Name = "istio-ingressgateway"
		h := "istio-ingressgateway.istio-system.svc.cluster.local"
		got := serviceGateways(s, "cluster1", h, ix, nil)
		want := []model.Gateway{{Network: "network1", Cluster: "cluster1", Address: "5.5.5.5", Port: 443, From: model.GatewayFromMeshNetworks, Service: "istio-system/istio-ingressgateway"}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v", got)
		}
		if got := serviceGateways(s, "cluster2", h, ix, nil); len(got) != 0 {
			t.Fatalf("registryServiceName counted in a cluster without fromRegistry: %+v", got)
		}
	})
	t.Run("NodePort with nodeSelector: node ExternalIPs on the node port", func(t *testing.T) {
		s := meshtest.EastWestGateway("network1", "")
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Status.LoadBalancer.Ingress = nil
		s.Annotations = map[string]string{model.AnnotationNodeSelector: `{"gw":"yes"}`}
		for i := range s.Spec.Ports {
			s.Spec.Ports[i].NodePort = 30000 + s.Spec.Ports[i].Port%1000
		}
		n1, n2, n3 := meshtest.Node("n1", "r", "z"), meshtest.Node("n2", "r", "z"), meshtest.Node("n3", "r", "z")
		n1.Labels["gw"], n2.Labels["gw"] = "yes", "yes"
		n1.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeExternalIP, Address: "8.8.8.1"}}
		n2.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.2"}} // no ExternalIP: skipped
		n3.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "8.8.8.3"}}  // not selected
		nodes := func() []*Node {
			var out []*Node
			for _, n := range []*corev1.Node{n1, n2, n3} {
				c := &Node{Name: n.Name, Labels: n.Labels}
				for _, a := range n.Status.Addresses {
					if a.Type == corev1.NodeExternalIP {
						c.ExternalIP = a.Address
					}
				}
				out = append(out, c)
			}
			return out
		}
		got := serviceGateways(s, "c", host, ix, nodes)
		if len(got) != 1 || got[0].Address != "8.8.8.1" || got[0].Port != 30443 {
			t.Fatalf("got %+v", got)
		}
		if got := serviceGateways(s, "c", host, ix, nil); len(got) != 0 {
			t.Fatalf("without nodes: %+v", got)
		}
		// An externalIP does not take the nodes' place: istiod replaces
		// the addresses of a NodePort gateway by its nodes'.
		s.Spec.ExternalIPs = []string{"203.0.113.5"}
		if got := serviceGateways(s, "c", host, ix, nodes); len(got) != 1 || got[0].Address != "8.8.8.1" {
			t.Fatalf("NodePort gateway with an externalIP: %+v", got)
		}
		s.Spec.ExternalIPs = nil
		delete(s.Annotations, model.AnnotationNodeSelector)
		if got := serviceGateways(s, "c", host, ix, nodes); len(got) != 0 {
			t.Fatalf("NodePort without the annotation is no gateway: %+v", got)
		}
	})
	t.Run("meshNetworks static gateways", func(t *testing.T) {
		got := staticGateways(ix.mn, "")
		want := []model.Gateway{
			{Network: "network2", Address: "192.168.60.9", Port: 15443, From: model.GatewayFromMeshNetworks},
			{Network: "network3", Address: "gw.example.com", Port: 15443, Hostname: true, From: model.GatewayFromMeshNetworks},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v", got)
		}
	})
}
