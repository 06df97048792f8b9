package collector

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// sec is a parsed remote secret entry held by a context.
func sec(holderKey, holderName, name, id, server, order string) secretEntry {
	return secretEntry{ID: id, Server: server, Order: order, holderKey: holderKey, holderName: holderName,
		Ref: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/" + name, Key: id}}
}

func TestPlanClusters(t *testing.T) {
	c1 := contextIn{key: "server:https://c1", name: "cluster1", server: "https://c1"}
	c2 := contextIn{key: "server:https://c2", name: "cluster2", server: "https://c2"}
	type want struct {
		key, id string
		from    model.IDSource
		sources int
		problem model.ErrorKind
		warn    string // a warning containing this, if set
	}
	for _, tc := range []struct {
		name string
		ctxs []contextIn
		secs []secretEntry
		want []want
	}{{
		name: "one context, a secret adds a cluster",
		ctxs: []contextIn{c1},
		secs: []secretEntry{sec(c1.key, "cluster1", "istio-remote-secret-cluster2", "cluster2", "https://c2", "1")},
		want: []want{{c1.key, "cluster1", model.IDFromContext, 1, "", ""}, {"id:cluster2@https://c2", "cluster2", model.IDFromRemoteSecret, 1, "", ""}},
	}, {
		name: "a context named unlike its ID takes the ID the other cluster's secret gives it",
		ctxs: []contextIn{{key: c1.key, name: "arn:aws:eks:eu-west-1:1:cluster/prod", server: c1.server}, c2},
		secs: []secretEntry{sec(c2.key, "cluster2", "istio-remote-secret-cluster1", "cluster1", "https://c1", "1")},
		want: []want{{c1.key, "cluster1", model.IDFromRemoteSecret, 2, "", ""}, {c2.key, "cluster2", model.IDFromContext, 1, "", ""}},
	}, {
		name: "istiod's CLUSTER_ID wins over a secret, which is warned about",
		ctxs: []contextIn{{key: c1.key, name: "gke_p_z_one", server: c1.server, istiodIDs: []string{"cluster1"}}, c2},
		secs: []secretEntry{sec(c2.key, "cluster2", "istio-remote-secret-c1", "c-one", "https://c1", "1")},
		want: []want{{c1.key, "cluster1", model.IDFromIstiod, 2, "", `remote secret istio-system/istio-remote-secret-c1 (in cluster2) calls this cluster "c-one"`}, {c2.key, "cluster2", model.IDFromContext, 1, "", ""}},
	}, {
		name: "--cluster-id wins over istiod",
		ctxs: []contextIn{{key: c1.key, name: "x", server: c1.server, flagID: "mine", istiodIDs: []string{"cluster1"}}},
		want: []want{{c1.key, "mine", model.IDFromFlag, 1, "", `the istiod pod's CLUSTER_ID calls this cluster "cluster1"`}},
	}, {
		name: "the injector names a cluster without istiod",
		ctxs: []contextIn{{key: c1.key, name: "x", server: c1.server, injectorID: "remote1"}},
		want: []want{{c1.key, "remote1", model.IDFromInjector, 1, "", ""}},
	}, {
		name: "a key equal to the holder's ID is ignored",
		ctxs: []contextIn{c1},
		secs: []secretEntry{sec(c1.key, "cluster1", "self", "cluster1", "https://elsewhere", "1")},
		want: []want{{c1.key, "cluster1", model.IDFromContext, 1, "", "equals this cluster's ID: ignored"}},
	}, {
		name: "one remote registered in two primaries is one cluster with two sources",
		ctxs: []contextIn{c1, c2},
		secs: []secretEntry{
			sec(c1.key, "cluster1", "istio-remote-secret-cluster3", "cluster3", "https://c3", "1"),
			sec(c2.key, "cluster2", "istio-remote-secret-cluster3", "cluster3", "https://c3", "2"),
		},
		want: []want{{c1.key, "cluster1", model.IDFromContext, 1, "", ""}, {c2.key, "cluster2", model.IDFromContext, 1, "", ""}, {"id:cluster3@https://c3", "cluster3", model.IDFromRemoteSecret, 2, "", ""}},
	}, {
		name: "a second server under an ID already taken is a duplicate",
		ctxs: []contextIn{c1},
		secs: []secretEntry{
			sec(c1.key, "cluster1", "a", "cluster3", "https://c3", "1"),
			sec(c1.key, "cluster1", "b", "cluster3", "https://c4", "2"),
		},
		want: []want{{c1.key, "cluster1", model.IDFromContext, 1, "", ""}, {"id:cluster3@https://c3", "cluster3", model.IDFromRemoteSecret, 1, "", ""}, {"id:cluster3@https://c4", "cluster3", model.IDFromRemoteSecret, 1, model.ErrDuplicateID, ""}},
	}, {
		name: "two IDs for one server stay two clusters, with a warning",
		ctxs: []contextIn{c1},
		secs: []secretEntry{
			sec(c1.key, "cluster1", "a", "cluster3", "https://c3", "1"),
			sec(c1.key, "cluster1", "b", "other3", "https://c3", "2"),
		},
		want: []want{{c1.key, "cluster1", model.IDFromContext, 1, "", ""}, {"id:cluster3@https://c3", "cluster3", model.IDFromRemoteSecret, 1, "", ""}, {"id:other3@https://c3", "other3", model.IDFromRemoteSecret, 1, "", `same API server as cluster "cluster3"`}},
	}, {
		name: "a refused kubeconfig is a cluster in error",
		ctxs: []contextIn{c1},
		secs: []secretEntry{func() secretEntry {
			s := sec(c1.key, "cluster1", "bad", "cluster9", "", "1")
			s.Problem = errs.Failure{Kind: model.ErrRefusedConfig, Reason: "exec plugin"}
			return s
		}()},
		want: []want{{c1.key, "cluster1", model.IDFromContext, 1, "", ""}, {"secret:cluster1/istio-system/bad/cluster9", "cluster9", model.IDFromRemoteSecret, 1, model.ErrRefusedConfig, ""}},
	}, {
		name: "two contexts with one ID: the second is a duplicate",
		ctxs: []contextIn{{key: c1.key, name: "a", server: c1.server, flagID: "same"}, {key: c2.key, name: "b", server: c2.server, flagID: "same"}},
		want: []want{{c1.key, "same", model.IDFromFlag, 1, "", ""}, {c2.key, "same", model.IDFromFlag, 1, model.ErrDuplicateID, ""}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			plan := planClusters(tc.ctxs, tc.secs)
			if len(plan) != len(tc.want) {
				t.Fatalf("planned %d clusters, want %d: %+v", len(plan), len(tc.want), plan)
			}
			for i, w := range tc.want {
				p := plan[i]
				if p.key != w.key || p.id != w.id || p.idFrom != w.from || len(p.sources) != w.sources || p.problem.Kind != w.problem {
					t.Errorf("cluster %d = key %s id %s from %s sources %d problem %q; want %+v", i, p.key, p.id, p.idFrom, len(p.sources), p.problem.Kind, w)
				}
				if w.warn != "" && !strings.Contains(strings.Join(p.warnings, "\n"), w.warn) {
					t.Errorf("cluster %d warnings %q lack %q", i, p.warnings, w.warn)
				}
				if w.warn == "" && len(p.warnings) > 0 {
					t.Errorf("cluster %d: unexpected warnings %q", i, p.warnings)
				}
			}
		})
	}
}

// TestContextIDFromIstiodPod: a context named like a cloud provider names
// it (not the cluster's ID) takes the CLUSTER_ID of the istiod running in
// it, and follows when that changes.
func TestContextIDFromIstiodPod(t *testing.T) {
	w := newFakeWorld(t)
	istiod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "istiod-abc", Namespace: "istio-system", Labels: map[string]string{"app": "istiod"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "discovery", Env: []corev1.EnvVar{{Name: "CLUSTER_ID", Value: "cluster1"}}}}}}
	injector := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "istio-sidecar-injector", Namespace: "istio-system"},
		Data: map[string]string{"values": `{"global":{"multiCluster":{"clusterName":"cluster1"}}}`, "config": "big template"}}
	c1 := fake.NewClientset(append(meshtest.LabCluster("network1", "", "hw1", "10.44.0.13"), istiod, injector)...)
	r := startRegistry(t, fastOptions(w, Source{Name: "arn:aws:eks:eu-west-1:111:cluster/prod", Server: "https://c1", Client: c1}))
	s := settled(context.Background(), t, r)
	c := s.ClusterByID("cluster1")
	if c == nil || c.IDFrom != model.IDFromIstiod || len(c.Warnings) != 0 {
		t.Fatalf("clusters = %+v", s.Clusters)
	}
	if s.Service("helloworld.sample.svc.cluster.local").Clusters["cluster1"] == nil {
		t.Fatal("the services are under the learned ID")
	}
	// istiod is redeployed with another CLUSTER_ID: the cluster follows,
	// and the injector, which still says cluster1, is warned about.
	istiod.Spec.Containers[0].Env[0].Value = "renamed"
	if _, err := c1.CoreV1().Pods("istio-system").Update(context.Background(), istiod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s = waitFor(t, r, 5*time.Second, "renamed cluster", func(s *model.Snapshot) bool { return s.ClusterByID("renamed") != nil })
	c = s.ClusterByID("renamed")
	if !strings.Contains(strings.Join(c.Warnings, "\n"), `the sidecar injector's clusterName calls this cluster "cluster1"`) {
		t.Fatalf("warnings = %q", c.Warnings)
	}
}
