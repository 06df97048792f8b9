package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"

	"github.com/meshscope/meshscope/internal/kubesim"
)

// The ambient lab (Config.Ambient): both istiods run ambient multi-network
// mode, and next to the sidecar fixture each cluster gets what an ambient
// multi-network install leaves there:
//   - Gateway API's CRDs (istiod's ambient index needs them);
//   - ConfigMap istio with the ambient profile's mesh config (services
//     labelled istio.io/global=true are global), which istiod reads because
//     the lab gives it no mesh config file in this mode, and meshscope reads
//     the same way;
//   - an east-west Gateway (class istio-east-west, HBONE listener 15008,
//     TLS terminated with ISTIO_MUTUAL), as istio's gen-eastwest-gateway.sh
//     --ambient writes it, labelled with its network. The lab plays its
//     gateway controller and load balancer: it writes status.addresses; istiod
//     runs without its Gateway deployment controller and status writer, which
//     would otherwise create a Deployment and a Service no kubelet or load
//     balancer ever serves, and overwrite the address with the Service's;
//   - namespace "ambient" in ambient data-plane mode, with helloworld (global)
//     and sleep (not global) and their pods in both clusters, annotated
//     ambient.istio.io/redirection=enabled as istio-cni's node agent does.

// Names of the ambient fixture.
const (
	AmbientNamespace      = "ambient"
	AmbientGateway        = "istio-eastwestgateway" // a Gateway API Gateway in SystemNamespace
	EastWestGatewayClass  = "istio-east-west"
	GlobalLabel           = "istio.io/global"
	DataplaneModeLabel    = "istio.io/dataplane-mode"
	RedirectionAnnotation = "ambient.istio.io/redirection"
	// gatewayAPICRDFile is Gateway API's CRD bundle as istio's tests use
	// it, copied from the istio.io/istio module next to istio's CRDs.
	gatewayAPICRDFile = "gateway-api-crd.yaml"
)

// AmbientMeshConfig is the mesh config of the ambient lab's istiods: the
// lab's, plus the ambient profile's serviceScopeConfigs.
const AmbientMeshConfig = MeshConfigText + kubesim.AmbientServiceScopes

// ambientIstiodEnv turns ambient multi-network mode on and leaves the
// east-west Gateway's deployment and status to the lab (see above).
var ambientIstiodEnv = []string{
	"PILOT_ENABLE_AMBIENT=true",
	"AMBIENT_ENABLE_MULTI_NETWORK=true",
	"PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER=false",
	"PILOT_ENABLE_GATEWAY_API_STATUS=false",
}

// AmbientGatewayIP is the address the ambient east-west gateway of a lab
// cluster gets (data only: nothing connects to it). It is another load
// balancer than the sidecar east-west gateway's.
func AmbientGatewayIP(cluster string) string {
	switch cluster {
	case "cluster1":
		return "192.168.60.114"
	case "cluster2":
		return "192.168.60.10"
	}
	return "192.168.61." + strings.TrimPrefix(cluster, "cluster")
}

// AmbientPods are the fixture's pods in namespace ambient of a cluster:
// one helloworld and one sleep in cluster1, two helloworld and one sleep
// elsewhere (so the other network's split-horizon workload has capacity 2).
func AmbientPods(c ClusterSpec) []PodSpec {
	pod := func(name, app, version, ip string) PodSpec {
		return PodSpec{Namespace: AmbientNamespace, Name: name, IP: c.PodPrefix + "." + ip,
			Labels:      AmbientLabels(app, version),
			Annotations: map[string]string{RedirectionAnnotation: "enabled"}}
	}
	if c.Name == "cluster1" {
		return []PodSpec{
			pod("helloworld-v1-5d9f8b7c6-amb1a", "helloworld", "v1", "30"),
			pod("sleep-6c8b7d9f5-amb1s", "sleep", "", "31"),
		}
	}
	return []PodSpec{
		pod("helloworld-v2-7f6d5c4b3-amb2a", "helloworld", "v2", "30"),
		pod("helloworld-v2-7f6d5c4b3-amb2b", "helloworld", "v2", "32"),
		pod("sleep-6c8b7d9f5-amb2s", "sleep", "", "31"),
	}
}

// AmbientLabels are the labels of an ambient application pod: no sidecar,
// so no tlsMode; the canonical-service labels a Deployment would carry.
func AmbientLabels(app, version string) map[string]string {
	m := map[string]string{"app": app, "service.istio.io/canonical-name": app, "service.istio.io/canonical-revision": "latest"}
	if version != "" {
		m["version"] = version
		m["service.istio.io/canonical-revision"] = version
	}
	return m
}

// gatewayAPICRDs returns Gateway API's CRD bundle, copying it out of the
// istio.io/istio module the first time (lab binaries built before the
// ambient lab existed lack it; copying it does not rebuild them).
func gatewayAPICRDs(root string) ([]byte, error) {
	path := filepath.Join(BinDir(root), gatewayAPICRDFile)
	if b, err := os.ReadFile(path); err == nil {
		return b, nil
	}
	dir, err := goOutput(filepath.Join(root, "lab", "tools", "istiod"), "list", "-m", "-f", "{{.Dir}}", "istio.io/istio")
	if err != nil {
		return nil, fmt.Errorf("the Gateway API CRDs come from the istio.io/istio module, which go cannot find: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(dir), "tests", "integration", "pilot", "testdata", gatewayAPICRDFile))
	if err != nil {
		return nil, fmt.Errorf("the Gateway API CRDs of the istio module: %w", err)
	}
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return nil, err
	}
	return b, os.Rename(path+".tmp", path)
}

// seedAmbient adds the ambient fixture to every cluster (after seed).
func (l *Lab) seedAmbient(ctx context.Context) error {
	crds, err := gatewayAPICRDs(l.cfg.Root)
	if err != nil {
		return err
	}
	for _, spec := range l.cfg.Clusters {
		c := l.clusters[spec.Name]
		if err := applyCRDs(ctx, c, crds); err != nil {
			return fmt.Errorf("%s: Gateway API CRDs: %w", c.Name, err)
		}
		if err := seedAmbientCluster(ctx, c); err != nil {
			return fmt.Errorf("%s: ambient fixture: %w", c.Name, err)
		}
	}
	return nil
}

func seedAmbientCluster(ctx context.Context, c *Cluster) error {
	cs := c.client
	if err := writeMeshConfig(ctx, cs, AmbientMeshConfig); err != nil {
		return fmt.Errorf("ConfigMap istio: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: AmbientNamespace, Labels: map[string]string{DataplaneModeLabel: "ambient"}}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: AmbientNamespace}}
	if _, err := cs.CoreV1().ServiceAccounts(AmbientNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, s := range []struct {
		name   string
		port   int32
		global bool
	}{{"helloworld", 5000, true}, {"sleep", 80, false}} {
		labels := map[string]string{"app": s.name, "service": s.name}
		if s.global {
			labels[GlobalLabel] = "true"
		}
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: AmbientNamespace, Labels: labels},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": s.name},
				Ports:    []corev1.ServicePort{{Name: "http", Port: s.port, TargetPort: intstr.FromInt32(s.port), Protocol: corev1.ProtocolTCP}},
			},
		}
		if _, err := cs.CoreV1().Services(AmbientNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for _, p := range AmbientPods(c.ClusterSpec) {
		if err := kubesim.CreatePod(ctx, cs, p); err != nil {
			return err
		}
	}
	if err := kubesim.SyncNamespace(ctx, cs, AmbientNamespace); err != nil {
		return err
	}
	return createAmbientGateway(ctx, c)
}

// createAmbientGateway writes the east-west Gateway and its address.
func createAmbientGateway(ctx context.Context, c *Cluster) error {
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	return kubesim.AmbientEastWestGateway(ctx, dyn, SystemNamespace, AmbientGateway, c.Network, AmbientGatewayIP(c.Name))
}

// SetAmbientGatewayAddresses replaces the status addresses of the ambient
// east-west Gateway of cluster (none: the gateway lost its address; a DNS
// name is an address of type Hostname).
func (l *Lab) SetAmbientGatewayAddresses(ctx context.Context, cluster string, addrs ...string) error {
	return l.SetGatewayAddresses(ctx, cluster, SystemNamespace, AmbientGateway, addrs...)
}

// SetGatewayAddresses replaces the status addresses of a Gateway of
// cluster, as its gateway controller would (istiod's is off in the lab):
// IPs of type IPAddress, names of type Hostname.
func (l *Lab) SetGatewayAddresses(ctx context.Context, cluster, namespace, name string, addrs ...string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	return kubesim.SetGatewayAddresses(ctx, dyn, namespace, name, addrs...)
}

// istiodSettingsEnv is the env beyond the base that every lab istiod runs
// with: in the ambient lab, ambient multi-network mode (it reads its mesh
// config from ConfigMap istio, as every lab istiod does). The istiod pod
// that stands for it carries the same env, as a Deployment's pod would:
// meshscope reads istiod's settings there.
func (l *Lab) istiodSettingsEnv() []string {
	if l.cfg.Ambient {
		return ambientIstiodEnv
	}
	return nil
}
