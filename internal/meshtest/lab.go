package meshtest

import (
	"fmt"
	"strings"
	"time"

	"github.com/meshscope/meshscope/model"
)

// Hello is the hostname of the lab's sample service.
const Hello = "helloworld.sample.svc.cluster.local"

// Lab is the lab mesh (lab/seed.go) as meshscope sees it from cluster1: two
// clusters in two networks, each with an east-west gateway (network1's at
// 192.168.60.113, network2's at 192.168.60.9, port 15443), cluster2 found
// through a remote secret in cluster1; helloworld with one pod in each
// cluster (helloworld-v1 10.44.0.13, helloworld-v2 10.144.0.15, both with
// sidecars) and the gateways' Services. Every call builds a new one, for
// the test to change.
func Lab() *model.Snapshot {
	ep := func(c, n, ip, pod string, tls string) model.Endpoint {
		return model.Endpoint{Cluster: c, Network: n, NetworkFrom: model.NetworkFromPodLabel, Address: ip, Pod: pod, TLSMode: tls,
			Ready: true, Serving: true, Ports: []model.EndpointPort{{Name: "http", Port: 5000}}}
	}
	ports := []model.ServicePort{{Name: "http", Port: 5000}}
	gwPorts := []model.ServicePort{{Name: "tls", Port: 15443, TargetPort: "15443"}}
	gwSvc := func(c, n string) *model.ServiceInCluster {
		return &model.ServiceInCluster{Cluster: c, Ports: gwPorts, Labels: map[string]string{model.LabelNetwork: n},
			Selector: map[string]string{"istio": "eastwestgateway"},
			Endpoints: []model.Endpoint{{Cluster: c, Network: n, Address: gatewayPodIP[c], Pod: gatewayPod, Ready: true, Serving: true,
				Labels: gatewayPodLabels(n), Ports: []model.EndpointPort{{Name: "tls", Port: 15443}}}}}
	}
	return &model.Snapshot{
		Clusters: []model.Cluster{
			{ID: "cluster1", Network: "network1", State: model.StateSynced, Source: model.SourceRef{Kind: model.SourceContext, Name: "cluster1"}},
			{ID: "cluster2", Network: "network2", State: model.StateSynced, Source: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster2"}},
		},
		Networks: []model.Network{{Name: "network1", Clusters: []string{"cluster1"}, Gateways: 1}, {Name: "network2", Clusters: []string{"cluster2"}, Gateways: 1}},
		Gateways: LabGateways(),
		Services: []*model.Service{
			{Hostname: Hello, Namespace: "sample", Name: "helloworld", Ports: ports, Clusters: map[string]*model.ServiceInCluster{
				"cluster1": {Cluster: "cluster1", Ports: ports, Endpoints: []model.Endpoint{ep("cluster1", "network1", "10.44.0.13", "helloworld-v1", "istio")}},
				"cluster2": {Cluster: "cluster2", Ports: ports, Endpoints: []model.Endpoint{ep("cluster2", "network2", "10.144.0.15", "helloworld-v2", "istio")}},
			}},
			{Hostname: model.Hostname("istio-eastwestgateway", "istio-system"), Namespace: "istio-system", Name: "istio-eastwestgateway", Ports: gwPorts,
				Clusters: map[string]*model.ServiceInCluster{"cluster1": gwSvc("cluster1", "network1"), "cluster2": gwSvc("cluster2", "network2")}},
		},
		Proxies:       []model.ProxyPod{gatewayProxy("cluster1", "network1"), gatewayProxy("cluster2", "network2")},
		IstioGateways: []model.IstioGateway{crossNetworkGateway("cluster1")},
	}
}

// gatewayPod is the name of the lab's east-west gateway pod in each cluster.
const gatewayPod = "istio-eastwestgateway-7b9c5d6f8-k2x4p"

var gatewayPodIP = map[string]string{"cluster1": "10.44.0.2", "cluster2": "10.144.0.2"}

// gatewayPodLabels are the labels an Istio install gives an east-west
// gateway pod of network n.
func gatewayPodLabels(n string) map[string]string {
	return map[string]string{"istio": "eastwestgateway", "app": "istio-eastwestgateway", model.LabelNetwork: n}
}

// gatewayProxy is the lab's east-west gateway pod of cluster c (network n)
// as the fleet lists it: a router injected with its network, cluster and
// REQUESTED_NETWORK_VIEW.
func gatewayProxy(c, n string) model.ProxyPod {
	return model.ProxyPod{Cluster: c, Namespace: "istio-system", Name: gatewayPod, IP: gatewayPodIP[c], Kind: model.ProxyGateway, Network: n, Ready: true,
		Injected: &model.InjectedIdentity{Kind: model.ProxyGateway, Network: n, ClusterID: c, NetworkView: n, RouterMode: "sni-dnat"}}
}

// crossNetworkGateway is istio's samples/multicluster/expose-services.yaml
// Gateway as config cluster c holds it: an AUTO_PASSTHROUGH server on 15443
// for "*.local", selecting istio=eastwestgateway.
func crossNetworkGateway(c string) model.IstioGateway {
	return model.IstioGateway{Cluster: c, Namespace: "istio-system", Name: "cross-network-gateway", Selector: map[string]string{"istio": "eastwestgateway"},
		Servers: []model.GatewayServer{{Port: 15443, PortName: "tls", Protocol: "TLS", Hosts: []string{"*.local"}, TLS: true, TLSMode: model.TLSAutoPassthrough}}}
}

// LabGateways are the lab's east-west gateways, from their Services.
func LabGateways() []model.Gateway {
	return []model.Gateway{
		{Network: "network1", Cluster: "cluster1", Address: "192.168.60.113", Port: 15443, From: model.GatewayFromService, Service: "istio-system/istio-eastwestgateway"},
		{Network: "network2", Cluster: "cluster2", Address: "192.168.60.9", Port: 15443, From: model.GatewayFromService, Service: "istio-system/istio-eastwestgateway"},
	}
}

// LabMultiPrimary is Lab in multi-primary, as meshscope sees it from both
// contexts: each cluster runs an istiod and holds a remote secret for the
// other; one shared root (valid until now + 5 years); the default mesh
// config in each.
func LabMultiPrimary(now time.Time) *model.Snapshot {
	s := Lab()
	root := []model.RootCert{{Fingerprint: strings.Repeat("ab", 32), Subject: "CN=shared root", NotAfter: now.AddDate(5, 0, 0)}}
	for i, id := range []string{"cluster1", "cluster2"} {
		other := []string{"cluster2", "cluster1"}[i]
		c := &s.Clusters[i]
		c.Source = model.SourceRef{Kind: model.SourceContext, Name: id}
		c.Sources = []model.SourceRef{c.Source, {Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-" + id, In: other, Key: id}}
		c.SecretsRead = true
		c.Server = "https://127.0.0.1:644" + fmt.Sprint(3+i)
		c.Istiods = []model.IstiodPod{{Name: "istiod-" + id, ClusterID: id, Ready: true}}
		c.RootCerts = root
	}
	for _, svc := range s.Services {
		for _, sic := range svc.Clusters {
			sic.Type = "ClusterIP"
			sic.Selector = map[string]string{"app": svc.Name}
		}
	}
	s.IstioGateways = append(s.IstioGateways, crossNetworkGateway("cluster2"))
	s.MeshConfigs = []model.MeshConfig{model.DefaultMeshConfig(), model.DefaultMeshConfig()}
	s.MeshConfigs[0].Cluster, s.MeshConfigs[1].Cluster = "cluster1", "cluster2"
	return s
}
