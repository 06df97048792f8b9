package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ClusterSpec describes one lab cluster: its kube-apiserver port, network and
// the addresses the fixture gives its pods and east-west gateway.
type ClusterSpec struct {
	Name      string
	Network   string
	Port      int    // kube-apiserver secure port on 127.0.0.1
	GatewayIP string // east-west gateway LoadBalancer ingress IP (data only)
	PodPrefix string // first three octets of pod IPs, e.g. "10.44.0"
}

// IstiodSpec describes one istiod: the cluster it is primary of and its ports.
type IstiodSpec struct {
	Cluster string
	// Revision is istiod's REVISION ("" is the default revision): a
	// second istiod of a cluster (Lab.AddRevision) reads ConfigMap
	// istio-REVISION and its stand-in pod is labelled istio.io/rev=REVISION.
	Revision   string
	GRPC       int // plaintext xDS (15010)
	SecureGRPC int // TLS xDS (15012)
	HTTP       int // /ready, /debug (8080)
	Monitoring int // /metrics (15014)
	HTTPS      int // webhooks (15017)
	Ctrlz      int
}

// Config says where the lab lives and what it runs.
type Config struct {
	// Root is the meshscope repository root (lab/tools and .lab/bin live there).
	Root string
	// Dir holds this lab's state: data, certs, logs, kubeconfig, state.json.
	// Default: Root/.lab/run.
	Dir string
	// MultiPrimary starts a second istiod as primary of cluster2, with a remote
	// secret for cluster1 in cluster2.
	MultiPrimary bool
	// Ambient runs both istiods in ambient multi-network mode with the
	// ambient fixture next to the sidecar one (lab/ambient.go). It implies
	// MultiPrimary.
	Ambient bool
	// Detach lets the processes outlive the program that started them
	// (make lab); otherwise they die with it (tests).
	Detach bool
	// OwnCAs lets each istiod self-sign a root of its own, as istiod does
	// without a plug-in CA (in multi-primary the clusters then trust
	// different roots). By default every istiod gets an intermediate of one
	// shared lab root (lab/ca.go).
	OwnCAs bool
	// DeferIstiods makes Start return once the fixture is seeded, without
	// istiod: the caller starts them with Lab.StartIstiods (the end-to-end
	// benchmark fills the clusters first, so istiod's initial sync reads a
	// full mesh and the fill does not compete with it).
	DeferIstiods bool
	// IstiodTimeout bounds the wait for each istiod to be ready with every
	// cluster synced (default 90s; a mesh of 30,000 endpoints needs more).
	IstiodTimeout time.Duration
	// Revisions are more istiod revisions to run in the first cluster
	// once the others are up (Lab.AddRevision: a canary upgrade), each
	// with ConfigMap istio-REV holding MeshConfigText.
	Revisions []string

	// DNS starts the lab's DNS server (lab/dns.go) and runs every istiod
	// in a mount namespace whose /etc/resolv.conf names it, from the
	// start (Lab.EnableDNS does it later, for one scenario). DNSIP is the
	// server's loopback address (port 53: resolv.conf names no port).
	DNS   bool
	DNSIP string

	EtcdPort, EtcdPeerPort int
	// KubeletPort is where the lab's kubelet stand-in serves port-forwards
	// to the istiod pods (lab/kubelet.go); unused without istiods.
	KubeletPort int
	Clusters    []ClusterSpec
	Istiods     []IstiodSpec
}

// Name names the istiod in the lab (its folder, log and process):
// its cluster, with its revision when it has one.
func (s IstiodSpec) Name() string {
	if s.Revision == "" || s.Revision == "default" {
		return s.Cluster
	}
	return s.Cluster + "-" + s.Revision
}

// RevisionName is istiod's REVISION: "default" when it has none.
func (s IstiodSpec) RevisionName() string {
	if s.Revision == "" {
		return "default"
	}
	return s.Revision
}

// DefaultConfig is the default lab: etcd on 2379, cluster1 on 6443
// (network1, gateway 192.168.60.113), cluster2 on 6444 (network2, gateway
// 192.168.60.9), istiod for cluster1 on 15010/8080 and, for multi-primary, one
// for cluster2 on ports +10.
func DefaultConfig(root string) Config {
	return Config{
		Root:         root,
		Dir:          filepath.Join(root, ".lab", "run"),
		EtcdPort:     2379,
		EtcdPeerPort: 2380,
		DNSIP:        dnsIP(0),
		KubeletPort:  10250,
		Clusters: []ClusterSpec{
			{Name: "cluster1", Network: "network1", Port: 6443, GatewayIP: "192.168.60.113", PodPrefix: "10.44.0"},
			{Name: "cluster2", Network: "network2", Port: 6444, GatewayIP: "192.168.60.9", PodPrefix: "10.144.0"},
		},
		Istiods: []IstiodSpec{
			{Cluster: "cluster1", GRPC: 15010, SecureGRPC: 15012, HTTP: 8080, Monitoring: 15014, HTTPS: 15017, Ctrlz: 9876},
			{Cluster: "cluster2", GRPC: 15020, SecureGRPC: 15022, HTTP: 8090, Monitoring: 15024, HTTPS: 15027, Ctrlz: 9886},
		},
	}
}

// FindRoot walks up from the working directory to the meshscope module root.
func FindRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) && fileExists(filepath.Join(dir, "lab", "tools", "istiod", "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("cannot find the meshscope repository root (with lab/tools) above the working directory")
		}
		dir = parent
	}
}

// istiods returns the istiods this configuration runs.
func (c Config) istiods() []IstiodSpec {
	if c.MultiPrimary || c.Ambient || len(c.Istiods) < 2 {
		return c.Istiods
	}
	return c.Istiods[:1]
}

// primaries are the clusters whose control plane reads the others: the
// clusters of the istiods this configuration runs, or, without istiod, the
// first cluster (the collector's starting context in the benchmarks).
func (c Config) primaries() []string {
	var out []string
	for _, is := range c.istiods() {
		out = append(out, is.Cluster)
	}
	if len(out) == 0 && len(c.Clusters) > 0 {
		out = append(out, c.Clusters[0].Name)
	}
	return out
}

// remoteSecretPairs are the remote secrets the fixture writes, as
// {holder, remote}: each primary holds one for every other cluster.
func (c Config) remoteSecretPairs() [][2]string {
	var out [][2]string
	for _, p := range c.primaries() {
		for _, cl := range c.Clusters {
			if cl.Name != p {
				out = append(out, [2]string{p, cl.Name})
			}
		}
	}
	return out
}

func (c Config) ports() map[int]string {
	m := map[int]string{
		c.EtcdPort:     "etcd client",
		c.EtcdPeerPort: "etcd peer",
	}
	for _, cl := range c.Clusters {
		m[cl.Port] = "kube-apiserver " + cl.Name
	}
	if len(c.istiods()) > 0 {
		m[c.KubeletPort] = "lab kubelet"
	}
	for _, is := range c.istiods() {
		who := "istiod " + is.Cluster
		m[is.GRPC] = who + " xDS"
		m[is.SecureGRPC] = who + " TLS xDS"
		m[is.HTTP] = who + " http"
		m[is.Monitoring] = who + " monitoring"
		m[is.HTTPS] = who + " webhooks"
		m[is.Ctrlz] = who + " ctrlz"
	}
	return m
}

// Shifted returns the configuration with every port moved by offset, so
// that several labs (a developer's, the e2e tests', the benchmark's, one per
// working tree) can run side by side on one machine.
func (c Config) Shifted(offset int) Config {
	c.EtcdPort += offset
	c.DNSIP = dnsIP(offset)
	c.EtcdPeerPort += offset
	c.KubeletPort += offset
	c.Clusters = append([]ClusterSpec(nil), c.Clusters...)
	for i := range c.Clusters {
		c.Clusters[i].Port += offset
	}
	c.Istiods = append([]IstiodSpec(nil), c.Istiods...)
	for i := range c.Istiods {
		is := &c.Istiods[i]
		is.GRPC += offset
		is.SecureGRPC += offset
		is.HTTP += offset
		is.Monitoring += offset
		is.HTTPS += offset
		is.Ctrlz += offset
	}
	return c
}

// PortOffset reads a port offset from the environment variable name (a
// multiple of 100 keeps every lab port apart), or returns def when it is
// unset. It fails on anything but a number.
func PortOffset(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 5000 {
		return 0, fmt.Errorf("%s=%q: want a port offset between 0 and 5000 (e.g. 300)", name, v)
	}
	return n, nil
}
