package demo

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshscope/meshscope/model"
)

// The root each simulated cluster's istiod publishes (ConfigMap
// istio-ca-root-cert). cluster1 and cluster2 share a plug-in root; cluster3
// still publishes the self-signed root its own istiod made before it joined
// the mesh (the planted CA mismatch: mTLS between cluster3 and the others
// fails). Both are public certificates made for the demo, valid 2026–2036.
const (
	sharedRootPEM = `-----BEGIN CERTIFICATE-----
MIIBpzCCAU6gAwIBAgIIGOpyopupgF0wCgYIKoZIzj0EAwIwODEWMBQGA1UEChMN
Y2x1c3Rlci5sb2NhbDEeMBwGA1UEAxMVZGVtbyBtZXNoIHNoYXJlZCByb290MB4X
DTI2MDEwMTAwMDAwMFoXDTM2MDEwMTAwMDAwMFowODEWMBQGA1UEChMNY2x1c3Rl
ci5sb2NhbDEeMBwGA1UEAxMVZGVtbyBtZXNoIHNoYXJlZCByb290MFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAETCQvDy2ZD269vLxta9RDB3hfiIRb2q/netZQ7C/a
peqgPtTjETrgq/PS9zUZKEdmQeVhmshSh6TQnL9HAkCKQaNCMEAwDgYDVR0PAQH/
BAQDAgEGMA8GA1UdEwEB/wQFMAMBAf8wHQYDVR0OBBYEFKeKe215Vw2VPK39+J9j
zRhu2ruPMAoGCCqGSM49BAMCA0cAMEQCIBWryaw9olSIQpHxMrUJdIWqUavbmCV2
QonA+8edIeGjAiAL3I8eR0Iz7olcwoeGB/yZyk3zDpNCIC16/SwfCgDd5w==
-----END CERTIFICATE-----
`
	ownRootPEM = `-----BEGIN CERTIFICATE-----
MIIBaDCCAQ6gAwIBAgIIGOpyopuuRGwwCgYIKoZIzj0EAwIwGDEWMBQGA1UEChMN
Y2x1c3Rlci5sb2NhbDAeFw0yNjAxMDEwMDAwMDBaFw0zNjAxMDEwMDAwMDBaMBgx
FjAUBgNVBAoTDWNsdXN0ZXIubG9jYWwwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC
AASxhj6/Wv7+IX9uMR6QqirlB6c9NlrLAS4RHoiMDq+kL7gGyh2CM9FU8iHsN16B
DkPXellPD9yxdsPFPdhZiQUBo0IwQDAOBgNVHQ8BAf8EBAMCAQYwDwYDVR0TAQH/
BAUwAwEB/zAdBgNVHQ4EFgQUSjfGUSATu3kJg/YHLcBVUIjws24wCgYIKoZIzj0E
AwIDSAAwRQIgamz6pXCbLG3/iyYNRId8zP3RaOIK6DKDsmEVQryJ33gCIQDh7yLD
W51tGwQ8sLwfUyBK+Zi8meErQeI3n+2Zz97PYw==
-----END CERTIFICATE-----
`
)

// seedRootCert writes the cluster's istio-ca-root-cert into its system
// namespace, as the namespace controller of its istiod would.
func (c *cluster) seedRootCert(ctx context.Context) error {
	root := sharedRootPEM
	if c.def.OwnRoot {
		root = ownRootPEM
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: model.RootCertConfigMap, Namespace: systemNamespace, Labels: map[string]string{"istio.io/config": "true"}},
		Data:       map[string]string{model.RootCertKey: root},
	}
	_, err := c.client.CoreV1().ConfigMaps(systemNamespace).Create(ctx, cm, metav1.CreateOptions{})
	return err
}
