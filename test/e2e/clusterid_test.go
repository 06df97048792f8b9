package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshscope/meshscope/model"
)

// TestContextNamedUnlikeClusterID: with a kubeconfig whose only context is
// named as EKS names them (an ARN), not as istiod calls the cluster,
// snapshot and explain use istiod's ID (cluster1, learned from the istiod
// pod's CLUSTER_ID), so the impersonated proxies match what istiod sends.
func TestContextNamedUnlikeClusterID(t *testing.T) {
	const arn = "arn:aws:eks:eu-west-1:123456789012:cluster/prod"
	kc := singleContextKubeconfig(t, "cluster1", arn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	out, err := exec.CommandContext(ctx, meshscopeBinary(t), "snapshot", "-o", "json", "--kubeconfig", kc, "--log-file", "-").Output()
	if err != nil {
		t.Fatalf("snapshot: %v\n%s", err, out)
	}
	var snap model.Snapshot
	if err := json.Unmarshal(out, &snap); err != nil {
		t.Fatal(err)
	}
	c1, c2 := snap.ClusterByID("cluster1"), snap.ClusterByID("cluster2")
	if c1 == nil || c2 == nil || snap.ClusterByID(arn) != nil {
		t.Fatalf("clusters: %+v", snap.Clusters)
	}
	if c1.IDFrom != model.IDFromIstiod || c1.Source.Name != arn {
		t.Errorf("cluster1: id from %q, source %+v; want from istiod, context %s", c1.IDFrom, c1.Source, arn)
	}
	if c2.State != model.StateSynced {
		t.Errorf("cluster2 (its remote secret) not synced: %+v", c2)
	}

	// explain through the default port-forward: the viewpoints carry
	// CLUSTER_ID cluster1/cluster2, and istiod's EDS matches the prediction.
	cmd := exec.CommandContext(ctx, meshscopeBinary(t), "explain", "helloworld", "--kubeconfig", kc, "--log-file", "-")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, got)
	}
	for _, want := range []string{"from cluster1/network1 (control plane cluster1): MATCH", "from cluster2/network2 (control plane cluster1): MATCH"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("explain output lacks %q:\n%s", want, got)
		}
	}
}

// singleContextKubeconfig writes a kubeconfig with one context, named
// name, for the lab cluster.
func singleContextKubeconfig(t *testing.T, cluster, name string) string {
	t.Helper()
	full, err := clientcmd.LoadFromFile(theLab.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	lc := full.Contexts[cluster]
	if lc == nil {
		t.Fatalf("no context %s in the lab kubeconfig", cluster)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = full.Clusters[lc.Cluster]
	cfg.AuthInfos[name] = full.AuthInfos[lc.AuthInfo]
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
