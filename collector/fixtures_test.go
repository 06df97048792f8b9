package collector

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/model"
)

// Objects of the lab fixture (see the lab package), for fake clientsets.

const tokenCluster2 = "s3cr3t-token-for-cluster2-abcdef"

func kubeconfigFor(server, token string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: %s
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, server, token))
}

func remoteSecret(name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "istio-system",
			Labels:            map[string]string{model.MultiClusterSecretLabel: "true"},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		Data: data,
	}
}

// fakeWorld maps fake server URLs to fake clientsets, as the demo does.
type fakeWorld struct {
	t       *testing.T
	clients map[string]kubernetes.Interface
	built   map[string]int // server → number of clients built
	tokens  []string       // tokens seen in configs
}

func newFakeWorld(t *testing.T) *fakeWorld {
	return &fakeWorld{t: t, clients: map[string]kubernetes.Interface{}, built: map[string]int{}}
}

func (f *fakeWorld) newClient(id string, cfg *rest.Config) (kubernetes.Interface, error) {
	s := normalizeServer(cfg.Host)
	c, ok := f.clients[s]
	if !ok {
		return nil, fmt.Errorf("dial tcp: lookup %s: no such host", cfg.Host)
	}
	f.built[s]++
	f.tokens = append(f.tokens, cfg.BearerToken)
	return c, nil
}

func fastOptions(f *fakeWorld, sources ...Source) Options {
	return Options{
		Sources:         sources,
		NewClient:       f.newClient,
		SyncTimeout:     5 * time.Second,
		HealthInterval:  200 * time.Millisecond,
		HealthTimeout:   200 * time.Millisecond,
		PublishInterval: 20 * time.Millisecond,
	}
}
