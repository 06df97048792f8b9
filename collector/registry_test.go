package collector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// startRegistry runs a registry until the test ends.
func startRegistry(t *testing.T, opts Options) *Registry {
	t.Helper()
	r, err := NewRegistry(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// waitFor returns the first snapshot that satisfies ok, or fails.
func waitFor(t *testing.T, r *Registry, d time.Duration, what string, ok func(*model.Snapshot) bool) *model.Snapshot {
	t.Helper()
	ch, cancel := r.Subscribe()
	defer cancel()
	deadline := time.After(d)
	for {
		select {
		case s := <-ch:
			if ok(s) {
				return s
			}
		case <-deadline:
			b, _ := json.MarshalIndent(r.Snapshot().Clusters, "", " ")
			t.Fatalf("timed out waiting for %s; clusters: %s", what, b)
		}
	}
}

func settled(ctx context.Context, t *testing.T, r *Registry) *model.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := r.WaitSettled(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The lab's shape: from cluster1 alone, cluster2 appears through the remote
// secret; networks, gateways and the helloworld endpoints of both clusters
// are in one snapshot.
func TestLabShapeFromOneContext(t *testing.T) {
	w := newFakeWorld(t)
	c1 := fake.NewClientset(append(meshtest.LabCluster("network1", "192.168.60.113", "helloworld-v1-abc", "10.44.0.13"),
		remoteSecret("istio-remote-secret-cluster2", map[string][]byte{"cluster2": kubeconfigFor("https://127.0.0.1:6444", tokenCluster2)}))...)
	c2 := fake.NewClientset(meshtest.LabCluster("network2", "192.168.60.9", "helloworld-v2-def", "10.144.0.15")...)
	w.clients["https://127.0.0.1:6444"] = c2
	r, err := NewRegistry(fastOptions(w, Source{Name: "cluster1", Server: "https://127.0.0.1:6443", Client: c1}))
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Snapshot(); s.Version != 1 || len(s.Clusters) != 1 || s.Clusters[0].State != model.StateConnecting || s.Settled() {
		t.Fatalf("before Run: %+v", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	s := settled(ctx, t, r)

	if len(s.Clusters) != 2 {
		t.Fatalf("want 2 clusters, got %+v", s.Clusters)
	}
	for _, c := range s.Clusters {
		if c.State != model.StateSynced {
			t.Fatalf("cluster %s: %s %s", c.ID, c.State, c.Reason)
		}
	}
	c2s := s.ClusterByID("cluster2")
	if c2s.Source.Kind != model.SourceSecret || c2s.Source.Name != "istio-system/istio-remote-secret-cluster2" || c2s.Source.In != "cluster1" || c2s.Network != "network2" {
		t.Fatalf("cluster2 = %+v", c2s)
	}
	if c := s.ClusterByID("cluster1"); c.Counts.RemoteSecrets != 1 || c.Counts.Endpoints != 1 || c.Counts.Nodes != 1 {
		t.Fatalf("cluster1 counts = %+v", c.Counts)
	}
	gws := map[string]string{}
	for _, g := range s.Gateways {
		gws[g.Network] = g.Address + ":" + itoa(g.Port) + "@" + g.Cluster
	}
	if gws["network1"] != "192.168.60.113:15443@cluster1" || gws["network2"] != "192.168.60.9:15443@cluster2" || len(s.Gateways) != 2 {
		t.Fatalf("gateways = %+v", s.Gateways)
	}
	hw := s.Service("helloworld.sample.svc.cluster.local")
	if hw == nil || len(hw.Clusters) != 2 {
		t.Fatalf("helloworld not merged across clusters: %+v", hw)
	}
	e1, e2 := hw.Clusters["cluster1"].Endpoints, hw.Clusters["cluster2"].Endpoints
	if len(e1) != 1 || e1[0].Address != "10.44.0.13" || e1[0].Network != "network1" || e1[0].TLSMode != "istio" || e1[0].Pod != "helloworld-v1-abc" {
		t.Fatalf("cluster1 endpoints = %+v", e1)
	}
	if len(e2) != 1 || e2[0].Address != "10.144.0.15" || e2[0].Network != "network2" || e2[0].Locality != "region1/zone-network2/" || !e2[0].Ready {
		t.Fatalf("cluster2 endpoints = %+v", e2)
	}
	if e1[0].PodMissing {
		t.Fatal("pod reported missing")
	}
	if e1[0].Labels["pod-template-hash"] != "abc" {
		t.Fatal("a pod label is lost: Istio config may select on any label")
	}
	if len(s.Networks) != 2 || s.Networks[0].Name != "network1" || s.Networks[0].Gateways != 1 {
		t.Fatalf("networks = %+v", s.Networks)
	}
	b, _ := json.Marshal(s)
	if strings.Contains(string(b), tokenCluster2) {
		t.Fatal("snapshot contains the token")
	}
}

func itoa(p uint32) string { return fmt.Sprint(p) }

// A context and a remote secret that reach the same API server are one
// cluster, and the context takes the ID the secret uses.
func TestContextAndSecretSameServerAreOneCluster(t *testing.T) {
	w := newFakeWorld(t)
	c2 := fake.NewClientset(meshtest.LabCluster("network2", "192.168.60.9", "hw2", "10.144.0.15")...)
	c1 := fake.NewClientset(append(meshtest.LabCluster("network1", "192.168.60.113", "hw1", "10.44.0.13"),
		remoteSecret("istio-remote-secret-cluster2", map[string][]byte{"cluster2": kubeconfigFor("https://127.0.0.1:6444/", tokenCluster2)}))...)
	r := startRegistry(t, fastOptions(w,
		Source{Name: "kind-one", Server: "https://127.0.0.1:6443", Client: c1},
		Source{Name: "kind-two", Server: "https://127.0.0.1:6444", Client: c2}))
	s := waitFor(t, r, 10*time.Second, "kind-two renamed cluster2", func(s *model.Snapshot) bool {
		c := s.ClusterByID("cluster2")
		return s.Settled() && c != nil && c.State == model.StateSynced
	})
	if len(s.Clusters) != 2 {
		t.Fatalf("want 2 clusters, got %+v", s.Clusters)
	}
	c := s.ClusterByID("cluster2")
	if c.Source.Kind != model.SourceContext || c.Source.Name != "kind-two" || len(c.Sources) != 2 {
		t.Fatalf("cluster2 = %+v", c)
	}
	if s.ClusterByID("kind-one") == nil {
		t.Fatal("context without a secret naming it keeps its context name")
	}
	if len(w.built) != 0 {
		t.Fatalf("a client was built for a server a context already reaches: %v", w.built)
	}
	hw := s.Service("helloworld.sample.svc.cluster.local")
	if _, ok := hw.Clusters["cluster2"]; !ok {
		t.Fatalf("endpoints not under the new ID: %v", hw.Clusters)
	}
}

func TestExplicitClusterIDWins(t *testing.T) {
	w := newFakeWorld(t)
	c2 := fake.NewClientset()
	c1 := fake.NewClientset(remoteSecret("s", map[string][]byte{"cluster2": kubeconfigFor("https://127.0.0.1:6444", tokenCluster2)}))
	opts := fastOptions(w,
		Source{Name: "one", Server: "https://127.0.0.1:6443", Client: c1},
		Source{Name: "two", Server: "https://127.0.0.1:6444", Client: c2})
	opts.ClusterIDs = map[string]string{"two": "mine"}
	r := startRegistry(t, opts)
	s := settled(context.Background(), t, r)
	if s.ClusterByID("mine") == nil || s.ClusterByID("cluster2") != nil {
		t.Fatalf("clusters = %+v", s.Clusters)
	}
	opts.ClusterIDs = map[string]string{"nope": "x"}
	if _, err := NewRegistry(opts); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown context in ClusterIDs: %v", err)
	}
}

// Bad secrets are cluster errors; nothing else breaks.
func TestBadSecretsAreClusterErrors(t *testing.T) {
	w := newFakeWorld(t)
	w.clients["https://c2"] = fake.NewClientset()
	w.clients["https://c3"] = fake.NewClientset()
	exec := strings.Replace(string(kubeconfigFor("https://c4", "x")), "    token: x\n", "    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}\n", 1)
	c1 := fake.NewClientset(
		remoteSecret("a-good", map[string][]byte{"cluster2": kubeconfigFor("https://c2", tokenCluster2)}),
		remoteSecret("b-garbage", map[string][]byte{"garbage": []byte("not: [a kubeconfig " + tokenCluster2)}),
		remoteSecret("c-exec", map[string][]byte{"execy": []byte(exec)}),
		remoteSecret("d-dup", map[string][]byte{"cluster2": kubeconfigFor("https://c3", "other-token-1234")}),
		remoteSecret("e-self", map[string][]byte{"cluster1": kubeconfigFor("https://elsewhere", "self-token-1234")}),
	)
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1}))
	s := settled(context.Background(), t, r)
	byKind := map[model.ErrorKind]model.Cluster{}
	for _, c := range s.Clusters {
		byKind[c.ErrorKind] = c
	}
	if c := byKind[model.ErrBadKubeconfig]; c.ID != "garbage" || c.State != model.StateError {
		t.Fatalf("garbage: %+v", s.Clusters)
	}
	if c := byKind[model.ErrRefusedConfig]; c.ID != "execy" || !strings.Contains(c.Reason, "refused exec plugin") {
		t.Fatalf("exec: %+v", c)
	}
	if c := byKind[model.ErrDuplicateID]; c.ID != "cluster2" || c.Source.Name != "istio-system/d-dup" || !strings.Contains(c.Reason, "duplicate cluster ID") {
		t.Fatalf("duplicate: %+v", c)
	}
	good := s.Clusters[1]
	if good.ID != "cluster2" || good.State != model.StateSynced || good.Source.Name != "istio-system/a-good" {
		t.Fatalf("good cluster: %+v", good)
	}
	if len(s.Clusters) != 5 {
		t.Fatalf("want cluster1, cluster2, garbage, execy, duplicate; got %d", len(s.Clusters))
	}
	if !strings.Contains(strings.Join(s.Clusters[0].Warnings, ";"), `key "cluster1" equals this cluster's ID`) {
		t.Fatalf("self key not noted: %v", s.Clusters[0].Warnings)
	}
	if s.Clusters[0].State != model.StateSynced {
		t.Fatalf("cluster1 broken by bad secrets: %+v", s.Clusters[0])
	}
	b, _ := json.Marshal(s)
	if strings.Contains(string(b), tokenCluster2) {
		t.Fatal("snapshot contains a token")
	}
}

// A user who may not read secrets: the cluster works, with a warning.
func TestForbiddenSecretsIsAWarning(t *testing.T) {
	w := newFakeWorld(t)
	c1 := fake.NewClientset(meshtest.LabCluster("network1", "192.168.60.113", "hw1", "10.44.0.13")...)
	c1.PrependReactor("list", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("RBAC: no"))
	})
	c1.PrependReactor("list", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("RBAC: no"))
	})
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1}))
	s := settled(context.Background(), t, r)
	c := s.Clusters[0]
	if c.State != model.StateSynced {
		t.Fatalf("state %s %s", c.State, c.Reason)
	}
	ws := strings.Join(c.Warnings, "; ")
	if !strings.Contains(ws, "cannot read remote secrets: forbidden") || !strings.Contains(ws, "cannot read nodes") {
		t.Fatalf("warnings = %q", ws)
	}
	if s.Service("helloworld.sample.svc.cluster.local") == nil {
		t.Fatal("services missing")
	}
}

// Forbidden on a required resource is an error naming it.
func TestForbiddenPodsIsAnError(t *testing.T) {
	w := newFakeWorld(t)
	c1 := fake.NewClientset()
	c1.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("RBAC: no"))
	})
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1}))
	s := settled(context.Background(), t, r)
	if c := s.Clusters[0]; c.State != model.StateError || c.ErrorKind != model.ErrForbidden || !strings.Contains(c.Reason, "forbidden pods") {
		t.Fatalf("cluster = %+v", c)
	}
}

// synced → error (probe fails) → synced again.
func TestHealthProbeTransitions(t *testing.T) {
	w := newFakeWorld(t)
	c1 := fake.NewClientset(meshtest.LabCluster("network1", "192.168.60.113", "hw1", "10.44.0.13")...)
	var down atomicBool
	c1.PrependReactor("get", "version", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if down.get() {
			return true, nil, errors.New(`Get "https://c1/version": dial tcp 127.0.0.1:6443: connect: connection refused`)
		}
		return false, nil, nil
	})
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1}))
	settled(context.Background(), t, r)
	down.set(true)
	start := time.Now()
	s := waitFor(t, r, 5*time.Second, "unreachable", func(s *model.Snapshot) bool { return s.Clusters[0].State == model.StateError })
	if c := s.Clusters[0]; c.ErrorKind != model.ErrUnreachable || !strings.HasPrefix(c.Reason, "unreachable") {
		t.Fatalf("cluster = %+v", c)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("took %s to notice", time.Since(start))
	}
	if s.Service("helloworld.sample.svc.cluster.local") == nil {
		t.Fatal("endpoints dropped while unreachable")
	}
	down.set(false)
	s = waitFor(t, r, 5*time.Second, "synced again", func(s *model.Snapshot) bool { return s.Clusters[0].State == model.StateSynced })
	if s.Clusters[0].Reconnects != 1 {
		t.Fatalf("reconnects = %d", s.Clusters[0].Reconnects)
	}
}

// A rotated token restarts that cluster's watchers; a deleted secret marks
// the cluster removed; an unchanged secret is not reloaded.
func TestSecretRotationAndRemoval(t *testing.T) {
	w := newFakeWorld(t)
	w.clients["https://c2"] = fake.NewClientset(meshtest.LabCluster("network2", "192.168.60.9", "hw2", "10.144.0.15")...)
	// Reactors must be in place before the fake is used (PrependReactor
	// is not synchronized with calls).
	var slow atomicBool
	w.clients["https://c2"].(*fake.Clientset).PrependReactor("list", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if slow.get() {
			time.Sleep(300 * time.Millisecond)
		}
		return false, nil, nil
	})
	sec := remoteSecret("istio-remote-secret-cluster2", map[string][]byte{"cluster2": kubeconfigFor("https://c2", tokenCluster2)})
	c1 := fake.NewClientset(sec)
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1}))
	settled(context.Background(), t, r)
	if w.built["https://c2"] != 1 {
		t.Fatalf("built = %v", w.built)
	}
	ctx := context.Background()
	// Unchanged content (a label change): not reloaded.
	sec.Labels["touched"] = "yes"
	if _, err := c1.CoreV1().Secrets("istio-system").Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if w.built["https://c2"] != 1 {
		t.Fatalf("unchanged kubeconfig reloaded: %v", w.built)
	}
	// The new watchers' first list is slow: meanwhile the cluster keeps
	// showing its services.
	slow.set(true)
	sub, unsub := r.Subscribe()
	defer unsub()
	<-sub
	sec.Data["cluster2"] = kubeconfigFor("https://c2", "rotated-token-987654321")
	if _, err := c1.CoreV1().Secrets("istio-system").Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(2 * time.Second)
	for done := false; !done; {
		select {
		case s := <-sub:
			hw := s.Service("helloworld.sample.svc.cluster.local")
			if hw == nil || hw.Clusters["cluster2"] == nil {
				t.Fatalf("cluster2 emptied during the restart (version %d, state %s)", s.Version, s.ClusterByID("cluster2").State)
			}
			done = s.ClusterByID("cluster2").State == model.StateSynced && w2built(r, w) == 2
		case <-deadline:
			done = true
		}
	}
	slow.set(false)
	waitFor(t, r, 5*time.Second, "rebuilt client", func(s *model.Snapshot) bool {
		c := s.ClusterByID("cluster2")
		return w2built(r, w) == 2 && c != nil && c.State == model.StateSynced
	})
	if w.tokens[len(w.tokens)-1] != "rotated-token-987654321" {
		t.Fatal("new token not used")
	}
	if err := c1.CoreV1().Secrets("istio-system").Delete(ctx, sec.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s := waitFor(t, r, 5*time.Second, "removed", func(s *model.Snapshot) bool {
		c := s.ClusterByID("cluster2")
		return c != nil && c.State == model.StateRemoved
	})
	if hw := s.Service("helloworld.sample.svc.cluster.local"); hw != nil {
		t.Fatalf("removed cluster's services remain: %+v", hw)
	}
}

// w2built reads the build counter under the registry's reconcile lock
// (the fake world's map is written from reconcile).
func w2built(r *Registry, w *fakeWorld) int {
	r.reconcileMu.Lock()
	defer r.reconcileMu.Unlock()
	return w.built["https://c2"]
}

// An unreachable remote cluster (no such fake server) is an error.
func TestUnreachableRemote(t *testing.T) {
	w := newFakeWorld(t)
	c1 := fake.NewClientset(remoteSecret("s", map[string][]byte{"cluster9": kubeconfigFor("https://nowhere", tokenCluster2)}))
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1}))
	s := settled(context.Background(), t, r)
	c := s.ClusterByID("cluster9")
	if c == nil || c.State != model.StateError || c.ErrorKind != model.ErrClient {
		t.Fatalf("cluster9 = %+v", c)
	}
}

func TestSyncTimeout(t *testing.T) {
	w := newFakeWorld(t)
	c1 := fake.NewClientset()
	// A list that never answers in time. The fake's reactors take no
	// context: the list is let go when the test ends, so that the
	// reflector's goroutine stuck in it does not outlive the test.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	c1.PrependReactor("list", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		select {
		case <-time.After(2 * time.Second):
		case <-release:
		}
		return true, nil, errors.New("slow")
	})
	opts := fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1})
	opts.SyncTimeout = 300 * time.Millisecond
	// The fake serializes calls: the probe would wait for the slow list.
	opts.Probe = func(context.Context, kubernetes.Interface) error { return nil }
	r := startRegistry(t, opts)
	s := settled(context.Background(), t, r)
	if c := s.Clusters[0]; c.State != model.StateTimeout || !strings.Contains(c.Reason, "endpointslices") {
		t.Fatalf("cluster = %+v", c)
	}
}

func TestMeshNetworksFromConfigMap(t *testing.T) {
	const netX = `
networks:
  netX:
    endpoints: [{fromRegistry: cluster1}]
    gateways: [{address: 7.7.7.7, port: 15443}]
`
	const netY = `
networks:
  netY:
    endpoints: [{fromRegistry: cluster1}]
    gateways: [{address: 8.8.8.8, port: 15443}]
`
	// ConfigMap "istio" says netX, "istio-canary" says netY: istiod of
	// revision canary reads the second (getMeshConfigMapName).
	for _, tc := range []struct{ revision, network, gateway string }{
		{"", "netX", "7.7.7.7"},
		{"default", "netX", "7.7.7.7"},
		{"canary", "netY", "8.8.8.8"},
	} {
		t.Run("revision="+tc.revision, func(t *testing.T) {
			w := newFakeWorld(t)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "istio", Namespace: "istio-system"},
				Data: map[string]string{"mesh": "big mesh config", "meshNetworks": netX}}
			cmCanary := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "istio-canary", Namespace: "istio-system"},
				Data: map[string]string{"meshNetworks": netY}}
			objs := meshtest.LabCluster("", "", "hw1", "10.44.0.13")
			objs = append(objs[:2], objs[3:]...) // no east-west gateway service
			c1 := fake.NewClientset(append(objs, cm, cmCanary)...)
			opts := fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1})
			opts.Revision = tc.revision
			r := startRegistry(t, opts)
			s := settled(context.Background(), t, r)
			ep := s.Service("helloworld.sample.svc.cluster.local").Clusters["cluster1"].Endpoints[0]
			if ep.Network != tc.network || ep.NetworkFrom != model.NetworkFromRegistry {
				t.Fatalf("endpoint = %+v", ep)
			}
			if len(s.Gateways) != 1 || s.Gateways[0].Address != tc.gateway || s.Gateways[0].From != model.GatewayFromMeshNetworks || s.Gateways[0].Cluster != "" {
				t.Fatalf("gateways = %+v", s.Gateways)
			}
			if len(s.Networks) != 1 || s.Networks[0].Name != tc.network || s.Networks[0].FromRegistry[0] != "cluster1" {
				t.Fatalf("networks = %+v", s.Networks)
			}
		})
	}
}

type atomicBool struct{ ch chan bool }

func (a *atomicBool) init() {
	if a.ch == nil {
		a.ch = make(chan bool, 1)
		a.ch <- false
	}
}
func (a *atomicBool) get() bool  { a.init(); v := <-a.ch; a.ch <- v; return v }
func (a *atomicBool) set(v bool) { a.init(); <-a.ch; a.ch <- v }

// Two remote secrets with different IDs for one API server are two
// clusters, as istiod sees them; a bad credential for it shows on its own.
func TestTwoIDsForOneServer(t *testing.T) {
	w := newFakeWorld(t)
	w.clients["https://c2"] = fake.NewClientset(meshtest.LabCluster("network2", "192.168.60.9", "hw2", "10.144.0.15")...)
	c1 := fake.NewClientset(
		remoteSecret("a", map[string][]byte{"cluster2": kubeconfigFor("https://c2", tokenCluster2)}),
		remoteSecret("b", map[string][]byte{"other": kubeconfigFor("https://c2", "other-token-1234")}),
	)
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1}))
	s := settled(context.Background(), t, r)
	if len(s.Clusters) != 3 || s.ClusterByID("cluster2") == nil || s.ClusterByID("other") == nil {
		t.Fatalf("clusters = %+v", s.Clusters)
	}
	if ws := s.ClusterByID("other").Warnings; len(ws) != 1 || !strings.Contains(ws[0], `same API server as cluster "cluster2"`) {
		t.Fatalf("warnings = %v", ws)
	}
	if hw := s.Service("helloworld.sample.svc.cluster.local"); len(hw.Clusters) != 2 {
		t.Fatalf("istiod would see the endpoints twice: %v", hw.Clusters)
	}
}

// Multi-primary: each cluster holds a secret for the other. Both contexts
// take the IDs the secrets give them, and each secret names its holder by
// that new ID.
func TestMultiPrimaryContextsRenamedBySecrets(t *testing.T) {
	w := newFakeWorld(t)
	a := fake.NewClientset(append(meshtest.LabCluster("network1", "192.168.60.113", "hw1", "10.44.0.13"),
		remoteSecret("istio-remote-secret-cluster2", map[string][]byte{"cluster2": kubeconfigFor("https://b", tokenCluster2)}))...)
	b := fake.NewClientset(append(meshtest.LabCluster("network2", "192.168.60.9", "hw2", "10.144.0.15"),
		remoteSecret("istio-remote-secret-cluster1", map[string][]byte{"cluster1": kubeconfigFor("https://a", "token-for-a-123456")}))...)
	r := startRegistry(t, fastOptions(w, Source{Name: "kind-a", Server: "https://a", Client: a}, Source{Name: "kind-b", Server: "https://b", Client: b}))
	s := waitFor(t, r, 10*time.Second, "renamed", func(s *model.Snapshot) bool {
		return s.Settled() && s.ClusterByID("cluster1") != nil && s.ClusterByID("cluster2") != nil
	})
	if len(s.Clusters) != 2 {
		t.Fatalf("clusters = %+v", s.Clusters)
	}
	c1 := s.ClusterByID("cluster1")
	if c1.Source.Name != "kind-a" || len(c1.Sources) != 2 || c1.Sources[1].In != "cluster2" || c1.Sources[1].Key != "cluster1" {
		t.Fatalf("cluster1 = %+v", c1)
	}
	if len(w.built) != 0 {
		t.Fatalf("clients built for servers the contexts reach: %v", w.built)
	}
}
