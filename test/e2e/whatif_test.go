package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/internal/kubesim"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/test/e2e/e2eutil"
	"github.com/meshscope/meshscope/xdsclient"
)

func liveObject(t *testing.T, cluster string, gvr schema.GroupVersionResource, kind, ns, name string) *unstructured.Unstructured {
	return e2eutil.LiveObject(t, theLab.Cluster(cluster).RESTConfig(), gvr, kind, ns, name)
}

var (
	gvrNamespaces = e2eutil.Namespaces
	gvrServices   = e2eutil.Services
	gvrPods       = e2eutil.Pods
	gvrConfigMaps = e2eutil.ConfigMaps
	// gvrDeployments are apps/v1 Deployments (a what-if of a workload controller).
	gvrDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	withoutLabel   = e2eutil.WithoutLabel
)

// docsIn decodes YAML documents as objects of cluster.
func docsIn(t *testing.T, cluster string, docs ...string) []whatif.Object {
	t.Helper()
	var out []whatif.Object
	for i, d := range docs {
		objs, err := whatif.Decode(fmt.Sprintf("doc%d.yaml", i+1), []byte(d))
		if err != nil {
			t.Fatal(err)
		}
		for j := range objs {
			objs[j].Cluster = cluster
		}
		out = append(out, objs...)
	}
	return out
}

// whatIfViews are the viewpoints a what-if is checked from: a network1
// sidecar, a network2 sidecar and a proxy without NETWORK, each on each of
// the lab's istiods (multi-primary).
type whatIfView struct {
	vp     xdsclient.Viewpoint
	istiod *lab.Istiod
	p      *probe
}

func startWhatIfViews(t *testing.T, eds string, namespaces ...string) []*whatIfView {
	if len(namespaces) == 0 {
		namespaces = []string{xdsclient.DefaultNamespace}
	}
	var out []*whatIfView
	for _, is := range theLab.Istiods() {
		for _, vp := range []xdsclient.Viewpoint{{Cluster: "cluster1", Network: "network1"}, {Cluster: "cluster2", Network: "network2"}, {Cluster: "cluster1", NoNetwork: true}} {
			for _, ns := range namespaces {
				vp.ControlPlane, vp.Namespace = is.Cluster, ns
				v := &whatIfView{vp: vp, istiod: is}
				v.start(t, eds)
				out = append(out, v)
			}
		}
	}
	return out
}

func (v *whatIfView) start(t *testing.T, eds string) {
	v.p = runProbe(t, xdsclient.Options{Viewpoint: v.vp, ControlPlane: v.istiod.Cluster, EDSNames: []string{eds},
		Transport: xdsclient.TransportConfig{Address: v.istiod.XDSAddress()}})
}

// matches says where what istiod sends the views differs from what snap
// predicts ("" when it matches everywhere). A view that gets no EDS for
// the name matches a prediction without endpoints.
func matches(snap *model.Snapshot, views []*whatIfView, host string, port int32) string {
	eds := horizon.EDSClusterName(host, port)
	for _, v := range views {
		la, ok := v.p.c.LoadAssignment(eds)
		if cds := v.p.c.Clusters(); len(cds) > 0 && !hasCluster(cds, eds) {
			// Out of the proxy's scope (a Sidecar): istiod removes the
			// cluster from CDS, and a real Envoy its endpoints.
			la, ok = xdsclient.LoadAssignment{Cluster: eds}, true
		}
		if !ok {
			pred := explain.ExplainWith(plane.NewSet(snap, nil), host, port, v.vp, v.istiod.Cluster, nil, explain.Extra{})
			if len(pred.Predicted) > 0 {
				return fmt.Sprintf("%s: no EDS from istiod, predicted %v", v.vp, pred.Predicted)
			}
			continue
		}
		pred := explain.ExplainWith(plane.NewSet(snap, nil), host, port, v.vp, v.istiod.Cluster, &la, explain.Extra{})
		// What istiod sends the sidecar is what is compared: broken is a
		// match of the EDS whose second hop breaks (a DestinationRule
		// turning mTLS off in cluster1 empties network1's gateway cluster
		// for cluster2's proxies; vm.mesh.internal is outside *.local).
		if pred.Verdict != explain.Match && pred.Verdict != explain.Broken {
			return fmt.Sprintf("%s: istiod sends %v, predicted %v (dropped %v): %+v", v.vp, v.p.eds(eds), pred.Predicted, pred.Dropped, pred.Differences)
		}
	}
	return ""
}

func hasCluster(cds []xdsclient.Cluster, name string) bool {
	for _, c := range cds {
		if c.Name == name {
			return true
		}
	}
	return false
}

// TestWhatIfOnLab: for each change, the what-if is computed on the lab as
// it is; its "before" is what the lab's two istiods send now, from every
// viewpoint; then the change is really made, and what the istiods send
// becomes the what-if's "after", predicted before the change existed.
func TestWhatIfOnLab(t *testing.T) {
	ctx := context.Background()
	reg := startRegistryFrom(t, "cluster1", "cluster2")
	str := func(s string) *string { return &s }
	const hello = "helloworld.sample.svc.cluster.local"
	pod2 := lab.HelloworldPod("cluster2")
	secret := lab.RemoteSecretName("cluster2")
	var secretData map[string][]byte
	const moreGateways = `networks:
  network2:
    endpoints:
    - fromRegistry: cluster2
    gateways:
    - address: 192.168.60.77
      port: 15443
`
	plaintext := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: helloworld-plaintext, namespace: sample}
spec:
  host: helloworld.sample.svc.cluster.local
  trafficPolicy: {tls: {mode: DISABLE}}
`
	ownNSOnly := sidecarResource("default", 0, "./*", "istio-system/*")
	otherOnly := sidecarResource("other", 0, "./*", "istio-system/*")
	plaintextHere := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: helloworld-plaintext-here, namespace: sample}
spec:
  host: helloworld.sample.svc.cluster.local
  exportTo: ["."]
  trafficPolicy: {tls: {mode: DISABLE}}
`
	addWhatIfClients(ctx, t)
	awaitWhatIfClients(t, reg)
	vmDocs := []string{vmServiceEntry, vmWorkloadEntry("vm-net1", "10.44.0.80", "network1"), vmWorkloadEntry("vm-net2", "10.144.0.80", "network2")}
	ambientEnv := []string{"PILOT_ENABLE_AMBIENT=true", "AMBIENT_ENABLE_MULTI_NETWORK=true"}
	setEnv := func(env []string) func() error {
		return func() error {
			for i := range theLab.Istiods() {
				if err := theLab.SetIstiodEnv(ctx, i, env); err != nil {
					return err
				}
			}
			return nil
		}
	}
	type scenario struct {
		name string
		// setup, if set, is made for real first (and undone at the end);
		// seen says what meshscope has not seen of it yet ("" once it has).
		setup, undoSetup func() error
		seen             func(*model.Snapshot) string
		objects          func(t *testing.T) []whatif.Object
		delete           bool
		env              []model.IstiodEnv
		apply, undo      func() error
		host             string
		port             int32
		// effect is what the report must say the change did (a part of
		// the first object's effect).
		effect string
		// scoped: the change takes the service out of the proxy's scope
		// (CDS); a probe that still disagrees reconnects, as a new proxy
		// gets istiod's current answer.
		scoped bool
		// namespaces are the client namespaces the views are probed from
		// (the sidecar clients of clientNamespaces; default: the probe's
		// own), and byNamespace says the what-if must judge the change per
		// namespace class (it differs between them).
		namespaces  []string
		byNamespace bool
	}
	scenarios := []scenario{
		{
			name: "the network label of cluster2's system namespace removed (a pod without its own)",
			setup: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.NetworkLabel, nil)
			},
			undoSetup: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.NetworkLabel, str("network2"))
			},
			objects: func(t *testing.T) []whatif.Object {
				u := withoutLabel(liveObject(t, "cluster2", gvrNamespaces, "Namespace", "", lab.SystemNamespace), lab.NetworkLabel)
				return []whatif.Object{{Cluster: "cluster2", Object: u, File: "ns.yaml", Line: 1}}
			},
			apply: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindNamespace, "", lab.SystemNamespace, lab.NetworkLabel, nil)
			},
			undo: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindNamespace, "", lab.SystemNamespace, lab.NetworkLabel, str("network2"))
			},
			host: hello, port: 5000,
		},
		{
			name:    "the remote secret for cluster2 deleted in cluster1 (multi-primary)",
			objects: func(t *testing.T) []whatif.Object { return docsIn(t, "cluster1", remoteSecretDoc(secret)) },
			delete:  true,
			apply: func() error {
				s, err := theLab.Cluster("cluster1").Client().CoreV1().Secrets(lab.SystemNamespace).Get(ctx, secret, metav1.GetOptions{})
				if err != nil {
					return err
				}
				secretData = s.Data
				return theLab.DeleteRemoteSecret(ctx, "cluster1", secret)
			},
			undo: func() error { return theLab.WriteRemoteSecret(ctx, "cluster1", secret, secretData) },
			host: hello, port: 5000,
		},
		{
			name:    "a DestinationRule with tls mode DISABLE in cluster1",
			objects: func(t *testing.T) []whatif.Object { return docsIn(t, "cluster1", plaintext) },
			apply:   func() error { return theLab.ApplyIstioConfig(ctx, "cluster1", plaintext) },
			undo:    func() error { return theLab.DeleteIstioConfig(ctx, "cluster1", plaintext) },
			host:    hello, port: 5000,
		},
		{
			name:    "a Sidecar of namespace default that hides the service",
			objects: func(t *testing.T) []whatif.Object { return docsIn(t, "cluster1", ownNSOnly) },
			apply:   func() error { return theLab.ApplyIstioConfig(ctx, "cluster1", ownNSOnly) },
			undo:    func() error { return theLab.DeleteIstioConfig(ctx, "cluster1", ownNSOnly) },
			host:    hello, port: 5000, scoped: true,
		},
		{
			name: "cluster2's gateway Service loses its network label",
			objects: func(t *testing.T) []whatif.Object {
				u := withoutLabel(liveObject(t, "cluster2", gvrServices, "Service", lab.SystemNamespace, "istio-eastwestgateway"), lab.NetworkLabel)
				return []whatif.Object{{Cluster: "cluster2", Object: u, File: "gw.yaml", Line: 1}}
			},
			apply: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.SystemNamespace, "istio-eastwestgateway", lab.NetworkLabel, nil)
			},
			undo: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.SystemNamespace, "istio-eastwestgateway", lab.NetworkLabel, str("network2"))
			},
			host: hello, port: 5000,
		},
		{
			name: "meshNetworks in cluster1 gives network2 a second gateway",
			objects: func(t *testing.T) []whatif.Object {
				u := liveObject(t, "cluster1", gvrConfigMaps, "ConfigMap", lab.SystemNamespace, lab.MeshConfigMap)
				if err := unstructured.SetNestedField(u.Object, moreGateways, "data", "meshNetworks"); err != nil {
					t.Fatal(err)
				}
				return []whatif.Object{{Cluster: "cluster1", Object: u, File: "cm.yaml", Line: 1}}
			},
			apply: func() error { _, err := theLab.SetMeshNetworks(ctx, "cluster1", moreGateways); return err },
			undo:  func() error { _, err := theLab.SetMeshNetworks(ctx, "cluster1", ""); return err },
			host:  hello, port: 5000,
		},
		{
			name:    "a ServiceEntry with WorkloadEntries on both networks",
			objects: func(t *testing.T) []whatif.Object { return docsIn(t, "cluster1", vmDocs...) },
			apply: func() error {
				for _, d := range vmDocs {
					if err := theLab.ApplyIstioConfig(ctx, "cluster1", d); err != nil {
						return err
					}
				}
				return nil
			},
			undo: func() error {
				for _, d := range vmDocs {
					if err := theLab.DeleteIstioConfig(ctx, "cluster1", d); err != nil {
						return err
					}
				}
				return nil
			},
			host: "vm.mesh.internal", port: 8080,
		},
		{
			name: "serviceSettings clusterLocal in cluster1's mesh config",
			objects: func(t *testing.T) []whatif.Object {
				u := liveObject(t, "cluster1", gvrConfigMaps, "ConfigMap", lab.SystemNamespace, lab.MeshConfigMap)
				if err := unstructured.SetNestedField(u.Object, clusterLocalMesh, "data", "mesh"); err != nil {
					t.Fatal(err)
				}
				return []whatif.Object{{Cluster: "cluster1", Object: u, File: "mesh.yaml", Line: 1}}
			},
			apply: func() error { return theLab.SetMeshConfig(ctx, "cluster1", clusterLocalMesh) },
			undo:  func() error { return theLab.SetMeshConfig(ctx, "cluster1", lab.MeshConfigText) },
			host:  hello, port: 5000,
		},
		{
			name: "cluster2's helloworld pod loses its mTLS label",
			objects: func(t *testing.T) []whatif.Object {
				u := withoutLabel(liveObject(t, "cluster2", gvrPods, "Pod", lab.SampleNamespace, pod2), lab.TLSModeLabel)
				return []whatif.Object{{Cluster: "cluster2", Object: u, File: "pod.yaml", Line: 1}}
			},
			apply: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.TLSModeLabel, nil)
			},
			undo: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.TLSModeLabel, str("istio"))
			},
			host: hello, port: 5000,
		},
		{
			name: "Deployment helloworld-v2 of cluster2 with a template without the mTLS label (its pod re-made: relabelled, as its controller would)",
			setup: func() error {
				return theLab.AdoptPod(ctx, "cluster2", lab.SampleNamespace, pod2, "helloworld-v2")
			},
			undoSetup: func() error {
				return theLab.ReleasePod(ctx, "cluster2", lab.SampleNamespace, pod2, "helloworld-v2")
			},
			seen: func(s *model.Snapshot) string {
				for _, e := range s.Service(hello).Clusters["cluster2"].Endpoints {
					if e.Labels["pod-template-hash"] != "" {
						return ""
					}
				}
				return "meshscope has not seen " + pod2 + " owned by helloworld-v2"
			},
			objects: func(t *testing.T) []whatif.Object {
				u := liveObject(t, "cluster2", gvrDeployments, "Deployment", lab.SampleNamespace, "helloworld-v2")
				unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "labels", lab.TLSModeLabel)
				return []whatif.Object{{Cluster: "cluster2", Object: u, File: "deploy.yaml", Line: 1}}
			},
			apply: func() error {
				// What the rollout would do to the pod (the lab runs no
				// controller): its mTLS label gone.
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.TLSModeLabel, nil)
			},
			undo: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.TLSModeLabel, str("istio"))
			},
			host: hello, port: 5000,
			effect: "1 pod in cluster2 re-made from its template (" + pod2 + ")",
		},
		{
			name: "helloworld in cluster1 selects version v2 only (its selector changed: the endpoint controller empties its slice)",
			objects: func(t *testing.T) []whatif.Object {
				u := liveObject(t, "cluster1", gvrServices, "Service", lab.SampleNamespace, "helloworld")
				if err := unstructured.SetNestedStringMap(u.Object, map[string]string{"app": "helloworld", "version": "v2"}, "spec", "selector"); err != nil {
					t.Fatal(err)
				}
				return []whatif.Object{{Cluster: "cluster1", Object: u, File: "svc.yaml", Line: 1}}
			},
			apply: func() error {
				return setSelector(ctx, "cluster1", map[string]string{"app": "helloworld", "version": "v2"})
			},
			undo: func() error { return setSelector(ctx, "cluster1", map[string]string{"app": "helloworld"}) },
			host: hello, port: 5000,
		},
		{
			name: "an endpoint of cluster2 turned not ready by its EndpointSlice",
			objects: func(t *testing.T) []whatif.Object {
				u := liveObject(t, "cluster2", gvrEndpointSlices, "EndpointSlice", lab.SampleNamespace, "helloworld-sim")
				eps, _, _ := unstructured.NestedSlice(u.Object, "endpoints")
				for _, e := range eps {
					_ = unstructured.SetNestedField(e.(map[string]any), false, "conditions", "ready")
					_ = unstructured.SetNestedField(e.(map[string]any), false, "conditions", "serving")
				}
				if err := unstructured.SetNestedSlice(u.Object, eps, "endpoints"); err != nil {
					t.Fatal(err)
				}
				return []whatif.Object{{Cluster: "cluster2", Object: u, File: "slice.yaml", Line: 1}}
			},
			apply: func() error { return theLab.SetPodReady(ctx, "cluster2", lab.SampleNamespace, pod2, false) },
			undo:  func() error { return theLab.SetPodReady(ctx, "cluster2", lab.SampleNamespace, pod2, true) },
			host:  hello, port: 5000, namespaces: clientNamespaces,
		},
		{
			name: "cluster2's helloworld pod moved to a second locality (topology.istio.io/locality)",
			objects: func(t *testing.T) []whatif.Object {
				u := liveObject(t, "cluster2", gvrPods, "Pod", lab.SampleNamespace, pod2)
				l := u.GetLabels()
				l[lab.LocalityLabel] = "region2.zone-b"
				u.SetLabels(l)
				return []whatif.Object{{Cluster: "cluster2", Object: u, File: "pod.yaml", Line: 1}}
			},
			apply: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.LocalityLabel, str("region2.zone-b"))
			},
			undo: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.LocalityLabel, nil)
			},
			host: hello, port: 5000, namespaces: clientNamespaces,
		},
		{
			name: "helloworld exported to its own namespace only in both clusters (judged from sample and from other)",
			objects: func(t *testing.T) []whatif.Object {
				var out []whatif.Object
				for _, c := range []string{"cluster1", "cluster2"} {
					u := liveObject(t, c, gvrServices, "Service", lab.SampleNamespace, "helloworld")
					a := u.GetAnnotations()
					if a == nil {
						a = map[string]string{}
					}
					a[model.AnnotationExportTo] = "."
					u.SetAnnotations(a)
					out = append(out, whatif.Object{Cluster: c, Object: u, File: c + "-svc.yaml", Line: 1})
				}
				return out
			},
			apply: func() error { return exportHelloworld(ctx, str(".")) },
			undo:  func() error { return exportHelloworld(ctx, nil) },
			host:  hello, port: 5000, scoped: true, namespaces: clientNamespaces, byNamespace: true,
		},
		{
			name:    "a DestinationRule exported to sample only that turns TLS off",
			objects: func(t *testing.T) []whatif.Object { return docsIn(t, "cluster1", plaintextHere) },
			apply:   func() error { return theLab.ApplyIstioConfig(ctx, "cluster1", plaintextHere) },
			undo:    func() error { return theLab.DeleteIstioConfig(ctx, "cluster1", plaintextHere) },
			host:    hello, port: 5000, namespaces: clientNamespaces, byNamespace: true,
		},
		{
			name:    "a Sidecar in namespace other that imports its own namespace only",
			objects: func(t *testing.T) []whatif.Object { return docsIn(t, "cluster1", otherOnly) },
			apply:   func() error { return theLab.ApplyIstioConfig(ctx, "cluster1", otherOnly) },
			undo:    func() error { return theLab.DeleteIstioConfig(ctx, "cluster1", otherOnly) },
			host:    hello, port: 5000, scoped: true, namespaces: clientNamespaces, byNamespace: true,
		},
		{
			name:    "AMBIENT_ENABLE_MULTI_NETWORK (and ambient) turned on in a mesh of sidecars, both istiods restarted so",
			objects: func(*testing.T) []whatif.Object { return nil },
			env:     []model.IstiodEnv{{Key: model.SettingAmbient, Value: "true"}, {Key: model.SettingAmbientMultiNetwork, Value: "true"}},
			apply:   setEnv(ambientEnv),
			undo:    setEnv(nil),
			host:    hello, port: 5000,
		},
	}
	// undone is when the last scenario's change began to be undone: a
	// what-if must not be computed on a snapshot older than that (every
	// undo changes something meshscope reads, so one comes).
	var undone time.Time
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			eds := horizon.EDSClusterName(sc.host, sc.port)
			views := startWhatIfViews(t, eds, sc.namespaces...)
			if sc.setup != nil {
				withChange(t, sc.setup, func() error {
					undone = time.Now()
					return sc.undoSetup()
				})
			}
			eventually(t, 30*time.Second, func() string {
				if !reg.Snapshot().Time.After(undone) {
					return "meshscope has not seen the last scenario undone"
				}
				if sc.seen != nil {
					return sc.seen(reg.Snapshot())
				}
				return ""
			})
			// meshscope and istiod agree on the mesh as it is, for the
			// scenario's service and for helloworld (istiod has caught up
			// too); a probe that connected while the last scenario was
			// being undone may hold a scope it no longer has: a new proxy
			// gets the current one.
			if sc.host != hello {
				ref := startWhatIfViews(t, helloworldEDS)
				agree(t, func() *model.Snapshot { return reg.Snapshot() }, ref, hello, 5000, helloworldEDS, true)
			}
			agree(t, func() *model.Snapshot { return reg.Snapshot() }, views, sc.host, sc.port, eds, true)
			var changes []collector.Change
			for _, o := range sc.objects(t) {
				changes = append(changes, collector.Change{Cluster: o.Cluster, Delete: sc.delete, Object: o.Object, Origin: o.Origin()})
			}
			w, err := reg.WhatIf(changes, sc.env)
			if err != nil {
				t.Fatal(err)
			}
			changed, classes := false, false
			for _, c := range whatif.Endpoints(w.Before, w.After) {
				changed = changed || c.Service == sc.host
				classes = classes || (c.Service == sc.host && c.NamespaceClass != "" && len(c.UnchangedIn) > 0)
				if c.Service == sc.host {
					t.Logf("what-if: from %s: %v → %v", c.Where(), c.Before, c.After)
				}
				if c.Proxy == "sidecar" && c.Service == sc.host {
					checkChangeIsExplain(t, w.Before, w.After, c)
				}
			}
			if !changed {
				t.Fatalf("the what-if predicts no change for %s", sc.host)
			}
			if sc.byNamespace && !classes {
				var ps []string
				for _, p := range w.Before.Proxies {
					ps = append(ps, fmt.Sprintf("%s/%s(%s,%s)", p.Cluster, p.Namespace, p.Kind, p.Network))
				}
				t.Fatalf("the what-if does not judge the change per namespace class (its proxies: %v)", ps)
			}
			if sc.effect != "" && !strings.Contains(w.Outcomes[0].Effect, sc.effect) {
				t.Fatalf("the what-if says %q, want %q", w.Outcomes[0].Effect, sc.effect)
			}
			if m := matches(w.Before, views, sc.host, sc.port); m != "" {
				t.Fatalf("what-if's before: %s", m)
			}
			logSent(t, "before", views, eds)
			withChange(t, sc.apply, func() error {
				undone = time.Now()
				return sc.undo()
			})
			agree(t, func() *model.Snapshot { return w.After }, views, sc.host, sc.port, eds, sc.scoped)
			logSent(t, "after", views, eds)
		})
	}
}

// logSent logs what istiod sends each view (go test -v).
func logSent(t *testing.T, when string, views []*whatIfView, eds string) {
	t.Helper()
	for _, v := range views {
		t.Logf("%s: istiod %s sends %s %v", when, v.istiod.Cluster, v.vp, v.p.eds(eds))
	}
}

// agree waits until what istiod sends every view matches what snap()
// predicts; with reconnect, views that still disagree after a few seconds
// connect again, as a new proxy would.
func agree(t *testing.T, snap func() *model.Snapshot, views []*whatIfView, host string, port int32, eds string, reconnect bool) {
	t.Helper()
	restarted := time.Now()
	eventually(t, 90*time.Second, func() string {
		m := matches(snap(), views, host, port)
		if m != "" && reconnect && time.Since(restarted) > 3*time.Second {
			for _, v := range views {
				v.start(t, eds)
			}
			restarted = time.Now()
		}
		return m
	})
}

// setSelector gives helloworld in cluster a selector and refreshes its
// EndpointSlice as the lab's endpoint controller stand-in does.
func setSelector(ctx context.Context, cluster string, sel map[string]string) error {
	cs := theLab.Cluster(cluster).Client()
	svc, err := cs.CoreV1().Services(lab.SampleNamespace).Get(ctx, "helloworld", metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc.Spec.Selector = sel
	if _, err := cs.CoreV1().Services(lab.SampleNamespace).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return kubesim.SyncNamespace(ctx, cs, lab.SampleNamespace)
}

// remoteSecretDoc names a remote secret to delete.
func remoteSecretDoc(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\n", name, lab.SystemNamespace)
}

// TestWhatIfCommandOnLab: the command's exit status and output on the lab —
// a DestinationRule that drops every cross-network endpoint fails the
// default rules (new errors), JSON lists the change; a YAML error names
// the file and line (exit 2); a delete of nothing is an error (exit 2).
func TestWhatIfCommandOnLab(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dr := write("dr.yaml", `# helloworld in plaintext
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: helloworld-plaintext, namespace: sample}
spec:
  host: helloworld.sample.svc.cluster.local
  trafficPolicy: {tls: {mode: DISABLE}}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-nothing, namespace: sample}
spec: {}
`)
	bad := write("bad.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: [oops\n")
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(meshscopeBinary(t), append([]string{"what-if", "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1,cluster2"}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	out, stderr, code := run("-f", "cluster1="+dr, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (new errors)\n%s\n%s", code, out, stderr)
	}
	var rep whatif.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	found := false
	for _, c := range rep.Changes {
		found = found || (c.Service == "helloworld.sample.svc.cluster.local" && c.Viewpoint == "cluster1/network1@cluster1" && c.LostRemote)
	}
	if !found || len(rep.Problems.New) == 0 || len(rep.Fail) == 0 {
		t.Errorf("report: %d changes (helloworld from cluster1/network1@cluster1 losing its remote endpoints: %v), %d new problems, fail %v", len(rep.Changes), found, len(rep.Problems.New), rep.Fail)
	}
	if len(rep.Objects) != 2 || rep.Objects[1].Unread == "" || !rep.Objects[1].IstiodReads || len(rep.Objects[0].Read) == 0 {
		t.Errorf("objects: %+v", rep.Objects)
	}
	text, _, code := run("-f", "cluster1="+dr, "--fail-on", "none")
	if code != 0 || !strings.Contains(text, "LOSES EVERY REMOTE ENDPOINT") || !strings.Contains(text, "tls mode") && !strings.Contains(text, "TLS mode DISABLE") {
		t.Errorf("--fail-on none: exit %d\n%s", code, text)
	}
	_, stderr, code = run("-f", bad)
	if code != 2 || !strings.Contains(stderr, "bad.yaml:9") {
		t.Errorf("bad YAML: exit %d, stderr %q (want exit 2 naming bad.yaml:9)", code, stderr)
	}
	_, stderr, code = run("--delete", "-f", "cluster2="+write("gone.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: nope, namespace: sample}\n"))
	if code != 2 || !strings.Contains(stderr, "Service sample/nope does not exist in cluster cluster2") {
		t.Errorf("delete of nothing: exit %d, stderr %q", code, stderr)
	}
}

// clientNamespaces are the namespaces where the lab runs sidecar clients
// for the what-if (addWhatIfClients): the service's own, another, and the
// probe's (the scenarios without namespaces probe from it).
var clientNamespaces = []string{lab.SampleNamespace, "other", xdsclient.DefaultNamespace}

// gvrEndpointSlices are discovery/v1 EndpointSlices.
var gvrEndpointSlices = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}

// awaitWhatIfClients waits until reg sees every what-if client's sidecar.
func awaitWhatIfClients(t *testing.T, reg *collector.Registry) {
	t.Helper()
	eventually(t, 30*time.Second, func() string {
		n := 0
		for _, p := range reg.Snapshot().Proxies {
			if p.Kind == model.ProxySidecar && strings.HasPrefix(p.Name, "whatif-client-") {
				n++
			}
		}
		if n < 2*len(clientNamespaces) {
			return fmt.Sprintf("meshscope sees %d of the what-if's sidecar clients", n)
		}
		return ""
	})
}

// addWhatIfClients runs a pod with a sidecar (an istio-proxy container) in
// each client namespace of both clusters, for the test's life: what a
// what-if judges is what changes where clients run.
func addWhatIfClients(ctx context.Context, t *testing.T) {
	t.Helper()
	fleetNamespace(ctx, t, "other")
	ip := map[string]int{"cluster1": 0, "cluster2": 0}
	prefix := map[string]string{"cluster1": "10.44.9.", "cluster2": "10.144.9."}
	for _, c := range []string{"cluster1", "cluster2"} {
		network := map[string]string{"cluster1": "network1", "cluster2": "network2"}[c]
		for _, ns := range clientNamespaces {
			ip[c]++
			name := "whatif-client-" + ns
			if err := theLab.AddPod(ctx, c, lab.PodSpec{Namespace: ns, Name: name, IP: fmt.Sprintf("%s%d", prefix[c], 40+ip[c]), Labels: map[string]string{"app": name},
				Container: "istio-proxy", Image: "example.invalid/istio/proxyv2:1.31.0", Args: []string{"proxy", "sidecar"},
				Env: map[string]string{"ISTIO_META_NETWORK": network, "ISTIO_META_CLUSTER_ID": c}}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = theLab.RemovePod(context.Background(), c, ns, name) })
		}
	}
}

// exportHelloworld sets (or, nil, removes) helloworld's exportTo
// annotation in both clusters.
func exportHelloworld(ctx context.Context, value *string) error {
	for _, c := range []string{"cluster1", "cluster2"} {
		if err := theLab.SetAnnotation(ctx, c, lab.KindService, lab.SampleNamespace, "helloworld", model.AnnotationExportTo, value); err != nil {
			return err
		}
	}
	return nil
}

// checkChangeIsExplain: a change the what-if reports is explain's
// prediction before and after, from its viewpoint in its namespace.
func checkChangeIsExplain(t *testing.T, before, after *model.Snapshot, c whatif.ServiceChange) {
	t.Helper()
	cl, rest, _ := strings.Cut(strings.TrimSuffix(c.Viewpoint, "@"+c.ControlPlane), "/")
	vp := xdsclient.Viewpoint{Cluster: cl, Network: rest, NoNetwork: rest == "none", Namespace: c.Namespace}
	if vp.NoNetwork {
		vp.Network = ""
	}
	for _, side := range []struct {
		name string
		snap *model.Snapshot
		got  []whatif.Endpoint
	}{{"before", before, c.Before}, {"after", after, c.After}} {
		want := whatif.EDSEndpoints(explain.Explain(side.snap, c.Service, c.Port, vp, c.ControlPlane, nil).Predicted)
		if fmt.Sprint(want) != fmt.Sprint(side.got) {
			t.Errorf("from %s: what-if's %s %v, explain --namespace %s predicts %v", c.Where(), side.name, side.got, c.Namespace, want)
		}
	}
}
