package collector

import (
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshscope/meshscope/model"
)

// TestRemoteSecretFor: the remote secret built for a fix's proof from a
// context's own credentials is one istiod (and meshscope's planning)
// accepts — the server, CA and token, nothing to run or read — under the
// name and key istioctl gives it; a context that authenticates through a
// program cannot give one, and a cluster without a context neither, and
// neither error names the credential.
func TestRemoteSecretFor(t *testing.T) {
	const token = "a-token-that-must-not-leak"
	cfg := &rest.Config{Host: "https://10.0.0.2:6443", BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")}}
	execCfg := &rest.Config{Host: "https://10.0.0.3:6443", ExecProvider: &clientcmdapi.ExecConfig{Command: "aws", Args: []string{token}}}
	r, err := NewRegistry(Options{Logger: slog.New(slog.DiscardHandler), Sources: []Source{
		{Name: "c2", Config: cfg, Client: fake.NewClientset()},
		{Name: "c3", Config: execCfg, Client: fake.NewClientset()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := r.RemoteSecretFor("c2", "cluster2")
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &s); err != nil {
		t.Fatal(err)
	}
	if s.Name != "istio-remote-secret-cluster2" || s.Namespace != "istio-system" || s.Labels[model.MultiClusterSecretLabel] != "true" || len(s.Data) != 1 {
		t.Fatalf("secret %s/%s labels %v keys %d", s.Namespace, s.Name, s.Labels, len(s.Data))
	}
	es := parseRemoteSecret(&s, "c1", false)
	if len(es) != 1 || es[0].Problem.Kind != "" || es[0].ID != "cluster2" || es[0].Server != "https://10.0.0.2:6443" || es[0].Config.BearerToken != token {
		t.Fatalf("parsed: %+v", es)
	}
	for _, c := range []struct{ of, want string }{
		{"c3", "through a program"},
		{"nope", "no kube context of its own"},
	} {
		_, err := r.RemoteSecretFor(c.of, c.of)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), token) {
			t.Errorf("%s: %v, want an error saying %q without the token", c.of, err, c.want)
		}
	}
}
