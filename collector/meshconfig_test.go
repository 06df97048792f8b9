package collector

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func TestMeshConfigFromConfigMapAndFile(t *testing.T) {
	w := newFakeWorld(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "istio", Namespace: "istio-system"},
		Data: map[string]string{"mesh": "rootNamespace: from-configmap\n"}}
	c1 := fake.NewClientset(append(meshtest.LabCluster("network1", "", "hw1", "10.44.0.13"), cm)...)
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1}))
	s := settled(context.Background(), t, r)
	if mc := s.MeshConfigFor("cluster1"); mc.RootNamespace != "from-configmap" || mc.Source != "configmap istio-system/istio" {
		t.Fatalf("mesh config = %+v", mc)
	}
	// The ConfigMap changes: the snapshot follows.
	cm.Data["mesh"] = "rootNamespace: changed\n"
	if _, err := c1.CoreV1().ConfigMaps("istio-system").Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, 5*time.Second, "changed mesh config", func(s *model.Snapshot) bool { return s.MeshConfigFor("cluster1").RootNamespace == "changed" })

	// A file instead of the ConfigMap, followed as it changes.
	path := filepath.Join(t.TempDir(), "mesh.yaml")
	if err := os.WriteFile(path, []byte("rootNamespace: from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1})
	opts.MeshConfigFiles = map[string]string{"": path}
	r = startRegistry(t, opts)
	s = settled(context.Background(), t, r)
	if mc := s.MeshConfigFor("cluster1"); mc.RootNamespace != "from-file" || mc.Source != "file "+path {
		t.Fatalf("mesh config from file = %+v", mc)
	}
	time.Sleep(10 * time.Millisecond) // a new modification time
	if err := os.WriteFile(path, []byte("rootNamespace: file-changed\nx: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = waitFor(t, r, 5*time.Second, "file re-read", func(s *model.Snapshot) bool { return s.MeshConfigFor("cluster1").Error != "" })
	if mc := s.MeshConfigFor("cluster1"); mc.RootNamespace != "istio-system" {
		t.Fatalf("a broken file gives the defaults and an error: %+v", mc)
	}

	opts.MeshConfigFiles = map[string]string{"": filepath.Join(t.TempDir(), "missing.yaml")}
	if _, err := NewRegistry(opts); err == nil {
		t.Fatal("a missing --mesh-config file must fail")
	}
}
