package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestXDSClientTLS: the TLS transport against istiod's 15012, with istiod's
// root certificate (ConfigMap istio-ca-root-cert, written by istiod into
// every namespace) and a ServiceAccount token with audience istio-ca whose
// namespace is the impersonated proxy's: the same EDS as on 15010.
func TestXDSClientTLS(t *testing.T) {
	ctx := context.Background()
	cs := theLab.Cluster("cluster1").Client()
	var root string
	eventually(t, 20*time.Second, func() string {
		cm, err := cs.CoreV1().ConfigMaps(lab.SampleNamespace).Get(ctx, "istio-ca-root-cert", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		root = cm.Data["root-cert.pem"]
		return ""
	})
	tr, err := cs.CoreV1().ServiceAccounts(lab.SampleNamespace).CreateToken(ctx, "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"istio-ca"}, ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	caFile, tokenFile := filepath.Join(dir, "root-cert.pem"), filepath.Join(dir, "token")
	if err := os.WriteFile(caFile, []byte(root), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenFile, []byte(tr.Status.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	p := runProbe(t, xdsclient.Options{
		Viewpoint:    xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1", Namespace: lab.SampleNamespace},
		ControlPlane: "cluster1", EDSNames: []string{helloworldEDS},
		Transport: xdsclient.TransportConfig{Address: theLab.Istiods()[0].SecureXDSAddress(), TLS: true, CAFile: caFile,
			ServerName: xdsclient.DefaultServerName, TokenFile: tokenFile},
	})
	eventually(t, 20*time.Second, func() string {
		if got := strings.Join(p.eds(helloworldEDS), ","); got != seedEDSNetwork1 {
			return "EDS over TLS: " + got + " (" + p.c.Status().Message + ")"
		}
		return ""
	})
}
