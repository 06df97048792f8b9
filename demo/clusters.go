package demo

import (
	"context"
	"crypto/x509"
	"fmt"
	"math/rand"
	"net/url"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/internal/kubesim"
	"github.com/meshscope/meshscope/model"
)

// cluster is one simulated cluster: a fake clientset and the state the
// churn needs (which pods run, the next free pod IP).
type cluster struct {
	def    clusterDef
	client *fake.Clientset
	// dyn holds the cluster's Gateway API Gateways (nil for a BadCA
	// cluster: nothing can be read from it).
	dyn *dynamicfake.FakeDynamicClient

	mu     sync.Mutex
	nextIP int
	pods   map[string][]string // "ns/svc" -> pod names, oldest first
	// planted are the pods whose proxy has a planted fault (fleet.go), by
	// "cluster/namespace/name".
	planted map[string]plant
}

// newCluster builds a fake clientset. A BadCA cluster answers every request
// with the x509 error a real client gets when the CA does not match.
func newCluster(def clusterDef) *cluster {
	// NewSimpleClientset, not NewClientset: the field-managed tracker of
	// NewClientset (for server-side apply, which the demo never uses) makes
	// seeding ~200 objects take 2 s instead of 25 ms, and the demo must be
	// up in well under a second.
	cs := fake.NewSimpleClientset()
	if def.BadCA {
		fail := func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, &url.Error{Op: "Get", URL: def.Server, Err: x509.UnknownAuthorityError{}}
		}
		cs.PrependReactor("*", "*", fail)
		cs.PrependWatchReactor("*", func(k8stesting.Action) (bool, watch.Interface, error) {
			return true, nil, &url.Error{Op: "Get", URL: def.Server, Err: x509.UnknownAuthorityError{}}
		})
	}
	c := &cluster{def: def, client: cs, nextIP: 20, pods: map[string][]string{}, planted: map[string]plant{}}
	if !def.BadCA {
		c.dyn = newDynamic()
	}
	return c
}

// allocIP hands out pod IPs in the cluster's range, skipping the pinned ones.
func (c *cluster) allocIP() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nextIP
	c.nextIP++
	return fmt.Sprintf("%s.%d.%d", c.def.PodPrefix, n/250, n%250+2)
}

// seed writes namespaces, the east-west gateway and every service's pods.
func (c *cluster) seed(ctx context.Context, rnd *rand.Rand) error {
	if c.def.BadCA {
		return nil // nothing can be read from it anyway
	}
	cs := c.client
	nss := map[string]bool{systemNamespace: true}
	for _, s := range services {
		nss[s.Namespace] = true
	}
	for ns := range nss {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: namespaceLabels(c.def, ns)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if c.def.GatewayIP != "" {
		if err := c.seedGateway(ctx); err != nil {
			return err
		}
	}
	if err := c.seedRootCert(ctx); err != nil {
		return err
	}
	if err := c.seedAmbient(ctx); err != nil {
		return err
	}
	for i, s := range services {
		if !s.MissingIn[c.def.ID] {
			if err := c.createService(ctx, s, c.serviceIP(i+1)); err != nil {
				return err
			}
		}
		hash := podHash(rnd)
		for i := 0; i < s.Replicas[c.def.ID]; i++ {
			ip := pinnedIPs[fmt.Sprintf("%s/%s/%s/%d", c.def.ID, s.Namespace, s.Name, i)]
			if err := c.createPod(ctx, s, ip, hash, i < s.NotReady[c.def.ID]); err != nil {
				return err
			}
		}
	}
	if c.def.Primary {
		// The istiod pod the demo's control plane stands for: meshscope
		// learns the cluster's ID from its CLUSTER_ID, as from a real one,
		// and its settings from its env (the demo's control plane runs
		// ambient multi-network mode, as the ambient profile with
		// multi-network turned on does).
		// (Last, so the services' pod IPs stay what they were.)
		if err := kubesim.CreatePod(ctx, c.client, kubesim.Pod{Namespace: systemNamespace, Name: "istiod-7c9d8b5f4-k2x9p",
			IP: c.allocIP(), Labels: map[string]string{"app": "istiod", model.LabelRev: model.RevisionDefault}, Container: "discovery",
			Image: "docker.io/istio/pilot:1.29.1-distroless",
			Env:   map[string]string{"CLUSTER_ID": c.def.ID, model.SettingAmbient: "true", model.SettingAmbientMultiNetwork: "true"}}); err != nil {
			return err
		}
	}
	if c.runsAmbient() {
		// The node's ztunnel (ambient's proxy of the pods istio-cni
		// redirects): the fleet gives those pods its state. Last too.
		if err := c.createZtunnel(ctx); err != nil {
			return err
		}
	}
	// One EndpointSlice write per service, once its pods exist.
	for ns := range nss {
		if err := kubesim.SyncNamespace(ctx, cs, ns); err != nil {
			return err
		}
	}
	return nil
}

// serviceIP is the n-th ClusterIP of the cluster's service CIDR (n = 0 is
// the east-west gateway, n = i+1 the i-th demo service): the fake clientset
// allocates none, and istiod's listeners and routes name them.
func (c *cluster) serviceIP(n int) string {
	return fmt.Sprintf("%s.%d.%d", c.def.ServicePrefix, n/200, n%200+10)
}

func (c *cluster) seedGateway(ctx context.Context) error {
	gwPod := kubesim.EastWestGatewayPod(systemNamespace, c.def.Network, c.allocIP(), c.def.ID)
	gwPod.Image = proxyImage
	if err := kubesim.EastWestGateway(ctx, c.client, systemNamespace, c.def.Network, c.def.GatewayIP, gwPod); err != nil {
		return err
	}
	svcs := c.client.CoreV1().Services(systemNamespace)
	svc, err := svcs.Get(ctx, gatewayService, metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc.Spec.ClusterIP = c.serviceIP(0)
	_, err = svcs.Update(ctx, svc, metav1.UpdateOptions{})
	return err
}

func (c *cluster) createService(ctx context.Context, s svcDef, clusterIP string) error {
	labels := map[string]string{"app": s.Name}
	// The demo's istiod runs ambient multi-network: it sends sidecars
	// another cluster's endpoints of global services only, so the sidecar
	// services are global in every cluster, as in a real such mesh.
	if s.Global[c.def.ID] || !s.Ambient {
		labels[globalLabel] = "true"
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: labels},
		Spec: corev1.ServiceSpec{
			ClusterIP: clusterIP,
			Selector:  map[string]string{"app": s.Name},
			Ports:     []corev1.ServicePort{{Name: "http", Port: s.Port, TargetPort: intstr.FromInt32(s.Port), Protocol: corev1.ProtocolTCP}},
		},
	}
	_, err := c.client.CoreV1().Services(s.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	return err
}

// addPod runs one more pod of s (at ip, or the next free IP) and updates
// the service's EndpointSlice.
func (c *cluster) addPod(ctx context.Context, s svcDef, ip, hash string, notReady bool) error {
	if err := c.createPod(ctx, s, ip, hash, notReady); err != nil {
		return err
	}
	return kubesim.Sync(ctx, c.client, s.Namespace, s.Name)
}

func (c *cluster) createPod(ctx context.Context, s svcDef, ip, hash string, notReady bool) error {
	if ip == "" {
		ip = c.allocIP()
	}
	version := s.Versions[c.def.ID]
	if version == "" {
		version = "v1"
	}
	labels := map[string]string{
		"app": s.Name, "version": version,
		model.LabelNetwork:           c.def.Network,
		model.LabelCanonicalName:     s.Name,
		model.LabelCanonicalRevision: version,
	}
	var annotations map[string]string
	sidecar := false
	switch {
	case s.ambientPod(c.def.ID):
		// No sidecar: istio-cni's node agent marks the pod it redirects.
		annotations = map[string]string{model.AnnotationRedirection: "enabled"}
	case !s.NoMTLS[c.def.ID]:
		labels[model.LabelTLSMode] = "istio"
		sidecar = true
	}
	c.mu.Lock()
	key := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}.String()
	n := len(c.pods[key])
	if locs := s.Localities[c.def.ID]; len(locs) > 0 {
		labels[model.LabelLocality] = locs[n%len(locs)]
	}
	name := fmt.Sprintf("%s-%s-%s-%s", s.Name, version, hash, suffix(n, hash))
	c.pods[key] = append(c.pods[key], name)
	pl := plantedProxies[fmt.Sprintf("%s/%s/%d", c.def.ID, key, n)]
	if pl != plantNone {
		c.planted[c.def.ID+"/"+s.Namespace+"/"+name] = pl
	}
	c.mu.Unlock()
	// Made by Deployment NAME-VERSION through its ReplicaSet NAME-VERSION-HASH.
	labels["pod-template-hash"] = hash
	rs := &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: fmt.Sprintf("%s-%s-%s", s.Name, version, hash), Controller: ptr.To(true)}
	if err := c.ensureWorkload(ctx, s, version, hash, labels); err != nil {
		return err
	}
	pod := kubesim.Pod{Namespace: s.Namespace, Name: name, IP: ip, Labels: labels, Annotations: annotations, NotReady: notReady, Controller: rs}
	if sidecar {
		// The pod's one container is its proxy, as injected (fleet.go).
		pod.Container, pod.Image, pod.Env = "istio-proxy", proxyImage, sidecarEnv(c.def, pl)
	}
	return kubesim.CreatePod(ctx, c.client, pod)
}

// removePod deletes the oldest pod of s; false when it has none.
func (c *cluster) removePod(ctx context.Context, s svcDef) (bool, error) {
	key := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}.String()
	c.mu.Lock()
	if len(c.pods[key]) == 0 {
		c.mu.Unlock()
		return false, nil
	}
	name := c.pods[key][0]
	c.pods[key] = c.pods[key][1:]
	c.mu.Unlock()
	if err := c.client.CoreV1().Pods(s.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	return true, kubesim.Sync(ctx, c.client, s.Namespace, s.Name)
}

func (c *cluster) podCount(s svcDef) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pods[s.Namespace+"/"+s.Name])
}

// remoteSecret is the Secret cluster1 holds for def: a kubeconfig with the
// (fake) server, a CA and a token, as istioctl create-remote-secret writes.
func remoteSecret(def clusterDef, now time.Time) (*corev1.Secret, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[def.ID] = &clientcmdapi.Cluster{Server: def.Server, CertificateAuthorityData: []byte(demoCA)}
	cfg.AuthInfos[def.ID] = &clientcmdapi.AuthInfo{Token: demoToken(def, now)}
	cfg.Contexts[def.ID] = &clientcmdapi.Context{Cluster: def.ID, AuthInfo: def.ID}
	cfg.CurrentContext = def.ID
	kc, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "istio-remote-secret-" + def.ID, Namespace: systemNamespace,
			Labels:      map[string]string{model.MultiClusterSecretLabel: "true"},
			Annotations: map[string]string{"networking.istio.io/cluster": def.ID},
		},
		Data: map[string][]byte{def.ID: kc},
	}, nil
}

// demoCA is a syntactically valid placeholder CA: the demo never dials.
const demoCA = `-----BEGIN CERTIFICATE-----
MIIBdzCCAR2gAwIBAgIBATAKBggqhkjOPQQDAjAWMRQwEgYDVQQDEwtkZW1vLWNs
dXN0ZXIwHhcNMjYwMTAxMDAwMDAwWhcNMzYwMTAxMDAwMDAwWjAWMRQwEgYDVQQD
-----END CERTIFICATE-----
`

// podHash is a ReplicaSet-like hash, deterministic from the demo's seed.
func podHash(rnd *rand.Rand) string {
	const chars = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 9)
	for i := range b {
		b[i] = chars[rnd.Intn(len(chars))]
	}
	return string(b)
}

func suffix(n int, hash string) string {
	const chars = "bcdfghjklmnpqrstvwxz2456789"
	b := []byte{chars[(n*7+int(hash[0]))%len(chars)], chars[(n*3+int(hash[1]))%len(chars)], chars[(n+int(hash[2]))%len(chars)], chars[(n*5)%len(chars)], chars[(n*11+1)%len(chars)]}
	return string(b)
}
