package collector

import (
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshscope/meshscope/model"
)

// RemoteSecretFor builds, in memory, the remote secret that
// `istioctl create-remote-secret --context CONTEXT --name id` would write
// for cluster of: a Secret istio-remote-secret-ID in the system namespace,
// labelled istio/multiCluster=true, whose key id holds a kubeconfig of
// the cluster's server, CA and credentials — meshscope's own credentials
// for it (the kube context it reads the cluster with), where istioctl
// would create a reader's service-account token in the cluster, which
// meshscope, being read-only, never does. It exists for a fix's what-if
// only: it is never printed, logged or written anywhere, and an error
// names no credential.
func (r *Registry) RemoteSecretFor(of, id string) (*unstructured.Unstructured, error) {
	r.mu.Lock()
	var cfg *rest.Config
	ctxName := ""
	for _, e := range r.entries {
		if e.id == of && e.fromContext && !e.removed {
			cfg, ctxName = e.config, e.ctxSource.Name
			break
		}
	}
	r.mu.Unlock()
	if cfg == nil {
		return nil, fmt.Errorf("meshscope reads cluster %s through no kube context of its own: it has no credentials to build a remote secret with (give --context for it)", of)
	}
	kc, err := remoteKubeconfig(cfg, of)
	if err != nil {
		return nil, fmt.Errorf("context %s: %w", ctxName, err)
	}
	s := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "istio-remote-secret-" + id, Namespace: r.opts.SystemNamespace,
			Labels:      map[string]string{model.MultiClusterSecretLabel: "true"},
			Annotations: map[string]string{"networking.istio.io/cluster": id}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{id: kc},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// remoteKubeconfig is a kubeconfig istiod accepts (no program to run, no
// file to read: istio's NewUntrustedRestConfig) with cfg's server, CA and
// token or client certificate, the files of cfg read into it.
func remoteKubeconfig(cfg *rest.Config, name string) ([]byte, error) {
	if cfg.ExecProvider != nil || cfg.AuthProvider != nil {
		return nil, fmt.Errorf("it authenticates through a program (exec or auth-provider plugin), which istiod refuses in a remote secret: create the secret with istioctl, which gives istiod a token of its own")
	}
	c := rest.CopyConfig(cfg)
	if err := rest.LoadTLSFiles(c); err != nil {
		return nil, fmt.Errorf("its certificate files cannot be read: %w", err)
	}
	token := c.BearerToken
	if token == "" && c.BearerTokenFile != "" {
		b, err := os.ReadFile(c.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("its token file cannot be read")
		}
		token = string(b)
	}
	if token == "" && len(c.CertData) == 0 {
		return nil, fmt.Errorf("it carries neither a token nor a client certificate")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData,
		InsecureSkipTLSVerify: c.Insecure, TLSServerName: c.ServerName}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token, ClientCertificateData: c.CertData, ClientKeyData: c.KeyData}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	return clientcmd.Write(*kc)
}
