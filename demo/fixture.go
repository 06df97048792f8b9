package demo

// The demo mesh, as data. cluster1 is the context meshscope is given;
// cluster2 and cluster3 are found through remote secrets in cluster1, like
// istiod finds them; cluster4's remote secret carries a kubeconfig whose CA
// does not match its API server.

const (
	systemNamespace = "istio-system"
	gatewayService  = "istio-eastwestgateway"
)

// clusterDef is one simulated cluster.
type clusterDef struct {
	ID        string
	Network   string
	Server    string // fake API server URL, never dialled
	PodPrefix string // first two octets of pod IPs
	GatewayIP string // east-west gateway LB address ("" = no gateway here)
	// AmbientGatewayIP is the address of the cluster's ambient east-west
	// Gateway (Gateway API, class istio-east-west; "" = none here).
	AmbientGatewayIP string
	// ServicePrefix is the first two octets of Service ClusterIPs (each
	// cluster has its own service CIDR, as real clusters do).
	ServicePrefix string
	BadCA         bool // every request fails with an x509 error
	// OwnRoot: its istio-ca-root-cert holds a root of its own, not the
	// mesh's shared one (rootca.go).
	OwnRoot bool
	// Primary: an istiod runs here (the demo's control plane plays it).
	Primary bool
}

var clusters = []clusterDef{
	{ID: "cluster1", Network: "network1", Server: "https://cluster1.demo.meshscope.invalid:6443", PodPrefix: "10.44", ServicePrefix: "10.96", GatewayIP: "192.168.60.113", AmbientGatewayIP: "192.168.60.114", Primary: true},
	{ID: "cluster2", Network: "network2", Server: "https://cluster2.demo.meshscope.invalid:6443", PodPrefix: "10.144", ServicePrefix: "10.97", GatewayIP: "192.168.60.9", AmbientGatewayIP: "192.168.60.10"},
	{ID: "cluster3", Network: "network2", Server: "https://cluster3.demo.meshscope.invalid:6443", PodPrefix: "10.145", ServicePrefix: "10.98", OwnRoot: true},
	{ID: "cluster4", Network: "network3", Server: "https://cluster4.demo.meshscope.invalid:6443", PodPrefix: "10.146", ServicePrefix: "10.99", BadCA: true},
}

// flappingCluster holds the gateway that loses its address now and then.
const flappingCluster = "cluster2"

// svcDef is one service and its replicas per cluster.
type svcDef struct {
	Namespace string
	Name      string
	Port      int32
	// Replicas per cluster ID; Versions per cluster ID (default "v1").
	Replicas map[string]int
	Versions map[string]string
	// NoMTLS lists clusters whose pods lack security.istio.io/tlsMode
	// (no sidecar): dropped from other networks' EDS.
	NoMTLS map[string]bool
	// NotReady is, per cluster, how many of its pods are not ready.
	NotReady map[string]int
	// MissingIn lists clusters that have no Service object for it.
	MissingIn map[string]bool
	// Localities are, per cluster, the topology.istio.io/locality labels
	// its pods get in turn (none: no locality).
	Localities map[string][]string
	// Ambient: its pods run in ambient mode (istio-cni redirects them to
	// ztunnel; no sidecar, so no tlsMode label) except in the clusters of
	// Sidecar; Global lists the clusters whose Service is labelled
	// istio.io/global=true (ambient multi-network reaches it across
	// networks there).
	Ambient bool
	Sidecar map[string]bool
	Global  map[string]bool
}

func r(c1, c2, c3 int) map[string]int {
	return map[string]int{"cluster1": c1, "cluster2": c2, "cluster3": c3}
}

// services: about forty, over six namespaces. Planted problems:
//   - shop/search: one endpoint in network1, six in network2, five of them
//     not ready (a failing rollout) yet counted in network2's gateway
//     weight: network1 sends far more across than its healthy endpoints
//     warrant (skew);
//   - shop/adservice: no Service in cluster2, where shop's pods with
//     sidecars would call it (DNS fails there);
//   - billing/legacy-billing: its cluster3 pods have no sidecar (dropped
//     from network1);
//   - bookinfo/reviews: its cluster2 pods sit in two zones, so network1
//     gets network2's gateway once per locality and Envoy keeps only the
//     first entry (istio/istio#56355): network2 gets a third of network1's
//     requests instead of three fifths (duplicate-gateway);
//   - network2's gateway (cluster2) loses its address now and then (leak
//     while it is gone), see churn.go, and so does its ambient east-west
//     Gateway (ztunnels of network1 lose echo's network2 pods);
//   - ambient/inventory is global in cluster1 and cluster3 but not in
//     cluster2: istiod leaves cluster2's pods out of what it sends ztunnels.
//
// From Istio config (istioconfig.go): a VM service (a ServiceEntry with a
// WorkloadEntry on each network) and reviews' subsets.
//
// Namespace ambient runs in ambient mode (ambient.go has its mesh config
// and Gateways): echo is global (one split-horizon workload stands for
// network2's three pods), ledger is not (network2's pod is not sent to
// network1's ztunnels), orders is mixed (an ambient pod in cluster1, a
// sidecar in cluster2).
var services = []svcDef{
	{Namespace: "sample", Name: "helloworld", Port: 5000, Replicas: r(1, 1, 0), Versions: map[string]string{"cluster1": "v1", "cluster2": "v2"}},
	{Namespace: "sample", Name: "sleep", Port: 80, Replicas: r(1, 1, 1)},

	{Namespace: "bookinfo", Name: "productpage", Port: 9080, Replicas: r(1, 1, 0)},
	{Namespace: "bookinfo", Name: "details", Port: 9080, Replicas: r(1, 0, 1)},
	{Namespace: "bookinfo", Name: "reviews", Port: 9080, Replicas: r(2, 2, 1), Versions: map[string]string{"cluster1": "v1", "cluster2": "v2", "cluster3": "v3"},
		Localities: map[string][]string{"cluster2": {"region2.zone-a", "region2.zone-b"}}},
	{Namespace: "bookinfo", Name: "ratings", Port: 9080, Replicas: r(1, 1, 1)},

	{Namespace: "shop", Name: "frontend", Port: 80, Replicas: r(2, 1, 0)},
	{Namespace: "shop", Name: "cartservice", Port: 7070, Replicas: r(1, 1, 1)},
	{Namespace: "shop", Name: "checkoutservice", Port: 5050, Replicas: r(1, 1, 0)},
	{Namespace: "shop", Name: "paymentservice", Port: 50051, Replicas: r(0, 1, 1)},
	{Namespace: "shop", Name: "shippingservice", Port: 50051, Replicas: r(1, 0, 1)},
	{Namespace: "shop", Name: "emailservice", Port: 5000, Replicas: r(1, 1, 0)},
	{Namespace: "shop", Name: "currencyservice", Port: 7000, Replicas: r(1, 1, 1)},
	{Namespace: "shop", Name: "recommendationservice", Port: 8080, Replicas: r(1, 1, 0)},
	{Namespace: "shop", Name: "adservice", Port: 9555, Replicas: r(1, 0, 0), MissingIn: map[string]bool{"cluster2": true}},
	{Namespace: "shop", Name: "productcatalogservice", Port: 3550, Replicas: r(1, 1, 1)},
	{Namespace: "shop", Name: "redis-cart", Port: 6379, Replicas: r(1, 0, 0)},
	{Namespace: "shop", Name: "search", Port: 8080, Replicas: r(1, 3, 3), NotReady: map[string]int{"cluster2": 3, "cluster3": 2}},

	{Namespace: "billing", Name: "legacy-billing", Port: 8080, Replicas: r(1, 0, 2), NoMTLS: map[string]bool{"cluster3": true}},
	{Namespace: "billing", Name: "invoices", Port: 8080, Replicas: r(1, 1, 0)},

	{Namespace: "data", Name: "postgres", Port: 5432, Replicas: r(1, 0, 0)},
	{Namespace: "data", Name: "kafka", Port: 9092, Replicas: r(1, 1, 1)},
	{Namespace: "data", Name: "zookeeper", Port: 2181, Replicas: r(1, 1, 1)},
	{Namespace: "data", Name: "elasticsearch", Port: 9200, Replicas: r(0, 2, 1)},
	{Namespace: "data", Name: "redis", Port: 6379, Replicas: r(1, 1, 0)},
	{Namespace: "data", Name: "minio", Port: 9000, Replicas: r(0, 1, 1)},

	{Namespace: "platform", Name: "auth", Port: 8443, Replicas: r(1, 1, 1)},
	{Namespace: "platform", Name: "api-gateway", Port: 8080, Replicas: r(1, 1, 0)},
	{Namespace: "platform", Name: "config", Port: 8888, Replicas: r(1, 1, 1)},
	{Namespace: "platform", Name: "notifications", Port: 8080, Replicas: r(1, 1, 1)},
	{Namespace: "platform", Name: "scheduler", Port: 8080, Replicas: r(0, 1, 1)},
	{Namespace: "platform", Name: "audit", Port: 8080, Replicas: r(1, 0, 1)},
	{Namespace: "platform", Name: "feature-flags", Port: 8080, Replicas: r(1, 1, 1)},

	{Namespace: "monitoring", Name: "prometheus", Port: 9090, Replicas: r(1, 1, 1)},
	{Namespace: "monitoring", Name: "grafana", Port: 3000, Replicas: r(1, 0, 0)},
	{Namespace: "monitoring", Name: "alertmanager", Port: 9093, Replicas: r(1, 1, 0)},
	{Namespace: "monitoring", Name: "jaeger-collector", Port: 14268, Replicas: r(1, 1, 1)},
	{Namespace: "monitoring", Name: "loki", Port: 3100, Replicas: r(0, 1, 1)},

	{Namespace: ambientNamespace, Name: "echo", Port: 8080, Replicas: r(1, 2, 1), Ambient: true, Global: all3},
	{Namespace: ambientNamespace, Name: "ledger", Port: 8080, Replicas: r(1, 1, 0), Ambient: true},
	{Namespace: ambientNamespace, Name: "inventory", Port: 9090, Replicas: r(1, 1, 1), Ambient: true,
		Global: map[string]bool{"cluster1": true, "cluster3": true}},
	{Namespace: ambientNamespace, Name: "orders", Port: 8080, Replicas: r(1, 1, 0), Ambient: true, Global: all3,
		Sidecar: map[string]bool{"cluster2": true}},
}

var all3 = map[string]bool{"cluster1": true, "cluster2": true, "cluster3": true}

// pinnedIPs keeps the lab's addresses for helloworld, so the demo
// reads like the lab and the docs.
var pinnedIPs = map[string]string{
	"cluster1/sample/helloworld/0": "10.44.0.13",
	"cluster2/sample/helloworld/0": "10.144.0.15",
}
