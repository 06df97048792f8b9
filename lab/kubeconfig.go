package lab

import (
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes the lab kubeconfig (one admin context per cluster,
// named after it, and a CLUSTER-readonly context for the read-only user;
// current context cluster1) and a single-cluster admin kubeconfig
// per cluster for istiod.
func (l *Lab) writeKubeconfig() error {
	all := clientcmdapi.NewConfig()
	for i, spec := range l.cfg.Clusters {
		c := l.clusters[spec.Name]
		one := clientcmdapi.NewConfig()
		for _, cfg := range []*clientcmdapi.Config{all, one} {
			cfg.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.URL, CertificateAuthorityData: c.CAData}
			cfg.AuthInfos[c.Name+"-admin"] = &clientcmdapi.AuthInfo{Token: c.AdminToken}
			cfg.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name + "-admin"}
		}
		all.AuthInfos[c.Name+"-readonly"] = &clientcmdapi.AuthInfo{Token: c.ReadOnlyToken}
		all.Contexts[c.Name+"-readonly"] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name + "-readonly"}
		one.CurrentContext = c.Name
		if i == 0 {
			all.CurrentContext = c.Name
		}
		if err := clientcmd.WriteToFile(*one, filepath.Join(c.dir, "admin.kubeconfig")); err != nil {
			return err
		}
	}
	l.Kubeconfig = filepath.Join(l.cfg.Dir, "kubeconfig")
	return clientcmd.WriteToFile(*all, l.Kubeconfig)
}

// remoteKubeconfig is the kubeconfig a remote secret carries: the cluster's
// server and CA and a bearer token, nothing read from local files.
func remoteKubeconfig(c *Cluster, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.URL, CertificateAuthorityData: c.CAData}
	cfg.AuthInfos[c.Name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name}
	cfg.CurrentContext = c.Name
	return clientcmd.Write(*cfg)
}
