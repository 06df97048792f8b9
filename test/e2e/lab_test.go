package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestLabClusterz: istiod (primary of cluster1) reads cluster2 through the
// remote secret and reports both clusters synced, config cluster first.
func TestLabClusterz(t *testing.T) {
	ctx := context.Background()
	v, err := theLab.Istiods()[0].View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cz := v.Clusters
	got := map[string]string{}
	for _, e := range cz {
		got[e.ID] = e.SyncStatus + " " + e.SecretName
	}
	want := map[string]string{
		"cluster1": "synced ",
		"cluster2": "synced istio-system/istio-remote-secret-cluster2",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("clusterz[%s] = %q, want %q (all: %+v)", id, got[id], w, cz)
		}
	}
	if len(cz) == 0 || cz[0].ID != "cluster1" {
		t.Errorf("clusterz should list the config cluster first: %+v", cz)
	}
}

// TestLabNetworkz: istiod finds one east-west gateway per network from the
// Services labelled topology.istio.io/network.
func TestLabNetworkz(t *testing.T) {
	v, err := theLab.Istiods()[0].View(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range v.Gateways {
		got = append(got, fmt.Sprintf("%s %s %s:%d", e.Network, e.Cluster, e.Addr, e.Port))
	}
	sort.Strings(got)
	want := []string{"network1 cluster1 192.168.60.113:15443", "network2 cluster2 192.168.60.9:15443"}
	if !slices.Equal(got, want) {
		t.Errorf("networkz = %v, want %v", got, want)
	}
}

// TestLabKubeconfig: the lab kubeconfig reaches cluster2 as kubectl would
// (context cluster2) and sees the fixture's pods in every namespace.
func TestLabKubeconfig(t *testing.T) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: theLab.Kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: "cluster2"}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Namespace+"/"+p.Name+" "+string(p.Status.Phase)+" "+p.Status.PodIP)
	}
	sort.Strings(names)
	want := []string{
		"istio-system/istio-eastwestgateway-7b9c5d6f8-k2x4p Running 10.144.0.2",
		// The Pod object standing for cluster2's istiod (multi-primary),
		// reachable by port-forward through the lab's kubelet stand-in.
		"istio-system/istiod-local-cluster2 Running 10.144.0.200",
		"sample/helloworld-v2-54df5f84b-9hxgw Running 10.144.0.15",
		"sample/sleep-557747455f-q4r2t Running 10.144.0.16",
	}
	if !slices.Equal(names, want) {
		t.Errorf("cluster2 pods = %v, want %v", names, want)
	}
}
