package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/meshscope/meshscope/internal/kubesim"
)

// Well-known names of the fixture.
const (
	SystemNamespace = "istio-system"
	SampleNamespace = "sample"
	GatewayService  = "istio-eastwestgateway"
	NetworkLabel    = "topology.istio.io/network"
	TLSModeLabel    = "security.istio.io/tlsMode"
	ReaderSA        = "istio-reader-service-account"
	// ReadOnlyUser may get/list/watch what meshscope reads, but not Secrets.
	ReadOnlyUser = "lab-readonly"
)

// CrossNetworkGateway is istio's samples/multicluster/expose-services.yaml:
// the Gateway whose AUTO_PASSTHROUGH server makes istiod give the east-west
// gateways a listener on 15443 with one SNI chain per service of the mesh.
const CrossNetworkGateway = `apiVersion: networking.istio.io/v1
kind: Gateway
metadata:
  name: cross-network-gateway
  namespace: istio-system
spec:
  selector:
    istio: eastwestgateway
  servers:
  - port:
      number: 15443
      name: tls
      protocol: TLS
    tls:
      mode: AUTO_PASSTHROUGH
    hosts:
    - "*.local"
`

// HelloworldPod is the name of the fixture's helloworld pod in a cluster.
func HelloworldPod(cluster string) string {
	if cluster == "cluster1" {
		return "helloworld-v1-776f57d5f6-s7zfc"
	}
	return "helloworld-v2-54df5f84b-9hxgw"
}

// RemoteSecretName is the name of the remote secret for cluster.
func RemoteSecretName(cluster string) string { return "istio-remote-secret-" + cluster }

// seed writes the fixture into every cluster: istio's CRDs, the namespaces
// with their network labels, the east-west gateways, helloworld and sleep,
// read-only access for istiod, and the remote secret(s).
func (l *Lab) seed(ctx context.Context) error {
	crds, err := os.ReadFile(filepath.Join(BinDir(l.cfg.Root), crdFile))
	if err != nil {
		return fmt.Errorf("istio CRDs (built with pilot-discovery): %w", err)
	}
	for _, spec := range l.cfg.Clusters {
		c := l.clusters[spec.Name]
		if err := applyCRDs(ctx, c, crds); err != nil {
			return fmt.Errorf("%s: CRDs: %w", c.Name, err)
		}
		if err := seedCluster(ctx, c); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	// Every primary reads every other cluster through a remote secret: in
	// the default lab cluster1 reads cluster2 (and, with multi-primary,
	// cluster2 reads cluster1); a third cluster is a remote of each primary.
	for _, p := range l.cfg.remoteSecretPairs() {
		if err := l.RotateRemoteSecret(ctx, p[0], p[1]); err != nil {
			return err
		}
	}
	// Every primary's istiod gives the east-west gateways it serves their
	// AUTO_PASSTHROUGH server (istio's expose-services.yaml).
	for _, p := range l.cfg.primaries() {
		if err := l.ApplyIstioConfig(ctx, p, CrossNetworkGateway); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	if l.cfg.Ambient {
		return l.seedAmbient(ctx)
	}
	return nil
}

func seedCluster(ctx context.Context, c *Cluster) error {
	cs := c.client
	for _, ns := range []string{SystemNamespace, SampleNamespace} {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if ns == SystemNamespace {
			obj.Labels = map[string]string{NetworkLabel: c.Network}
		}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if err := readOnlyRBAC(ctx, c); err != nil {
		return fmt.Errorf("read-only user: %w", err)
	}
	// istiod reads its mesh config from here, as in a real cluster.
	if err := writeMeshConfig(ctx, cs, MeshConfigText); err != nil {
		return fmt.Errorf("mesh config: %w", err)
	}
	// No ServiceAccount controller runs: admission needs "default" before Pods.
	for _, ns := range []string{"default", SystemNamespace, SampleNamespace} {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	gwPod := kubesim.EastWestGatewayPod(SystemNamespace, c.Network, c.PodPrefix+".2", c.Name)
	if err := kubesim.EastWestGateway(ctx, cs, SystemNamespace, c.Network, c.GatewayIP, gwPod); err != nil {
		return err
	}
	for _, s := range []struct {
		name string
		port int32
	}{{"helloworld", 5000}, {"sleep", 80}} {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: SampleNamespace, Labels: map[string]string{"app": s.name, "service": s.name}},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": s.name},
				Ports:    []corev1.ServicePort{{Name: "http", Port: s.port, TargetPort: intstr.FromInt32(s.port), Protocol: corev1.ProtocolTCP}},
			},
		}
		if _, err := cs.CoreV1().Services(SampleNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	version, sleepPod, sleepIP := "v1", "sleep-557747455f-wxk5s", c.PodPrefix+".14"
	if c.Name != "cluster1" {
		version, sleepPod, sleepIP = "v2", "sleep-557747455f-q4r2t", c.PodPrefix+".16"
	}
	helloIP := c.PodPrefix + ".13"
	if c.Name != "cluster1" {
		helloIP = c.PodPrefix + ".15"
	}
	pods := []PodSpec{
		{Namespace: SampleNamespace, Name: HelloworldPod(c.Name), IP: helloIP, Labels: AppLabels("helloworld", version, c.Network)},
		{Namespace: SampleNamespace, Name: sleepPod, IP: sleepIP, Labels: AppLabels("sleep", "", c.Network)},
	}
	for _, p := range pods {
		if err := kubesim.CreatePod(ctx, c.client, p); err != nil {
			return err
		}
	}
	for _, ns := range []string{SystemNamespace, SampleNamespace} {
		if err := kubesim.SyncNamespace(ctx, c.client, ns); err != nil {
			return err
		}
	}
	return nil
}

// AppLabels are the labels the sidecar injector and a Deployment would give
// a meshed application pod.
func AppLabels(app, version, network string) map[string]string {
	m := map[string]string{
		"app":                                 app,
		TLSModeLabel:                          "istio",
		NetworkLabel:                          network,
		"service.istio.io/canonical-name":     app,
		"service.istio.io/canonical-revision": "latest",
	}
	if version != "" {
		m["version"] = version
		m["service.istio.io/canonical-revision"] = version
	}
	return m
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// applyCRDs creates istio's CRDs through the dynamic client (no
// apiextensions clientset needed) and waits until they are established.
func applyCRDs(ctx context.Context, c *Cluster, bundle []byte) error {
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(bundle), 4096)
	var names []string
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if _, err := dyn.Resource(crdGVR).Create(ctx, &obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: %w", obj.GetName(), err)
		}
		names = append(names, obj.GetName())
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, n := range names {
		for {
			u, err := dyn.Resource(crdGVR).Get(ctx, n, metav1.GetOptions{})
			if err == nil && established(u) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not established after 60s", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// readOnlyRBAC lets ReadOnlyUser get/list/watch everything meshscope reads
// except Secrets (so remote secrets cannot be read).
func readOnlyRBAC(ctx context.Context, c *Cluster) error {
	ro := []string{"get", "list", "watch"}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ReadOnlyUser},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "services", "endpoints", "namespaces", "nodes", "configmaps"}, Verbs: ro},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: ro},
			{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gateways"}, Verbs: ro},
		},
	}
	if _, err := c.client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ReadOnlyUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: ReadOnlyUser},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: ReadOnlyUser}},
	}
	if _, err := c.client.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
