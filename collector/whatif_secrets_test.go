package collector

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// createRemoteSecret is a remote secret as istioctl create-remote-secret
// writes it: stringData, one key.
func createRemoteSecret(t *testing.T, id, server, token string) *unstructured.Unstructured {
	t.Helper()
	s := remoteSecret("istio-remote-secret-"+id, nil)
	s.StringData = map[string]string{id: string(kubeconfigFor(server, token))}
	return toUnstructured(t, s, "v1", "Secret")
}

// TestWhatIfRemoteSecretTried: a what-if that puts a remote secret tries
// its credential instead of assuming it works — a cluster it adds is read
// through it (its objects in the mesh after), or is in error with why;
// new credentials for a watched cluster that fail take it out.
func TestWhatIfRemoteSecretTried(t *testing.T) {
	world := newFakeWorld(t)
	world.clients["https://127.0.0.1:6445"] = fake.NewClientset(meshtest.LabCluster("network3", "192.168.60.7", "helloworld-v3-ghi", "10.55.0.3")...)
	var mu sync.Mutex
	var tried []string
	r := labRegistryWith(t, world, func(o *Options) {
		o.TestCredential = func(_ context.Context, cfg *rest.Config, _ string) model.CredentialTest {
			mu.Lock()
			tried = append(tried, cfg.Host)
			mu.Unlock()
			if strings.Contains(cfg.BearerToken, "revoked") {
				return model.CredentialTest{At: time.Now(), Failed: model.ErrUnauthorized, Reason: "unauthorized: the API server rejected the credentials"}
			}
			return model.CredentialTest{At: time.Now()}
		}
	})
	if rs := r.Snapshot().RemoteSecrets; len(rs) != 1 || rs[0].Test == nil || !rs[0].Test.Works() || rs[0].Credential.Auth != model.AuthToken {
		t.Fatalf("live remote secrets %+v", rs)
	}

	t.Run("a cluster added through a working secret is read", func(t *testing.T) {
		w, err := r.WhatIf([]Change{{Cluster: "cluster1", Object: createRemoteSecret(t, "cluster3", "https://127.0.0.1:6445", "s3cr3t-token-3"), Origin: "rs.yaml:1"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := w.After.ClusterByID("cluster3")
		if c == nil || c.State != model.StateSynced || c.Network != "network3" || c.Counts.Pods == 0 {
			t.Fatalf("after: cluster3 %+v", c)
		}
		if svc := w.After.Service(meshtest.Hello); svc == nil || svc.Clusters["cluster3"] == nil {
			t.Errorf("after: helloworld has no endpoints of cluster3")
		}
		if w.Before.ClusterByID("cluster3") != nil {
			t.Errorf("before holds cluster3")
		}
		if !hasNote(w.Notes, "adds cluster cluster3: read through that secret's credential") {
			t.Errorf("notes %q", w.Notes)
		}
		if n := len(w.After.RemoteSecrets); n != 2 {
			t.Errorf("after: %d remote secrets, want 2", n)
		}
		if r.Snapshot().ClusterByID("cluster3") != nil {
			t.Errorf("the live mesh holds cluster3")
		}
	})
	t.Run("a cluster added through a failing secret cannot work", func(t *testing.T) {
		w, err := r.WhatIf([]Change{{Cluster: "cluster1", Object: createRemoteSecret(t, "cluster3", "https://127.0.0.1:6445", "revoked-token"), Origin: "rs.yaml:1"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := w.After.ClusterByID("cluster3")
		if c == nil || c.State != model.StateError || c.ErrorKind != model.ErrUnauthorized || c.Counts.Pods != 0 {
			t.Fatalf("after: cluster3 %+v", c)
		}
		if !hasNote(w.Notes, "adds cluster cluster3, which cannot work: its credential, tried from here, fails (unauthorized") {
			t.Errorf("notes %q", w.Notes)
		}
		for _, rs := range w.After.RemoteSecrets {
			if rs.Ref.Key == "cluster3" && (rs.Test == nil || rs.Test.Failed != model.ErrUnauthorized) {
				t.Errorf("after: the secret's test %+v", rs.Test)
			}
		}
	})
	t.Run("cluster2's secret rotated to a failing credential", func(t *testing.T) {
		w, err := r.WhatIf([]Change{{Cluster: "cluster1", Object: createRemoteSecret(t, "cluster2", "https://127.0.0.1:6444", "revoked-token-2"), Origin: "rs.yaml:1"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := w.After.ClusterByID("cluster2"); c == nil || c.State != model.StateError || !strings.Contains(c.Reason, "its new credentials fail") {
			t.Fatalf("after: cluster2 %+v", c)
		}
		if !hasNote(w.Notes, "cluster cluster2 gets new credentials from remote secret istio-system/istio-remote-secret-cluster2 in cluster1 that fail") {
			t.Errorf("notes %q", w.Notes)
		}
		if c := r.Snapshot().ClusterByID("cluster2"); c.State != model.StateSynced {
			t.Errorf("live cluster2 %s", c.State)
		}
	})
	t.Run("cluster2's secret rotated to a working credential", func(t *testing.T) {
		w, err := r.WhatIf([]Change{{Cluster: "cluster1", Object: createRemoteSecret(t, "cluster2", "https://127.0.0.1:6444", "s3cr3t-new-token"), Origin: "rs.yaml:1"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := w.After.ClusterByID("cluster2"); c == nil || c.State != model.StateSynced {
			t.Fatalf("after: cluster2 %+v", c)
		}
		if !hasNote(w.Notes, "(tried from here: they work)") {
			t.Errorf("notes %q", w.Notes)
		}
	})
	mu.Lock()
	defer mu.Unlock()
	for _, h := range tried {
		if !strings.HasPrefix(h, "https://127.0.0.1:") {
			t.Errorf("tried %s", h)
		}
	}
}

func hasNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}
