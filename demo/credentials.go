package demo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"time"

	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/model"
)

// The demo's remote-secret credentials: tokens shaped like the API
// server's bound service-account tokens (a JWT whose exp meshscope reads;
// the signature is made up), and a stand-in for trying them — the demo
// never dials — that answers as its simulated API servers would: cluster4's
// CA does not verify its server, cluster2's token expires within the week
// (a planted warning), the others work.

// demoToken is a made-up bound token of istio-reader-service-account in
// def's cluster, expiring tokenLife(def) after now.
func demoToken(def clusterDef, now time.Time) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	claims := map[string]any{"sub": "system:serviceaccount:" + systemNamespace + ":istio-reader-service-account",
		"iat": now.Unix(), "exp": now.Add(tokenLife(def)).Unix(), "aud": []string{"https://kubernetes.default.svc"}}
	return enc(map[string]string{"alg": "RS256", "kid": "demo"}) + "." + enc(claims) + ".ZGVtby1zaWduYXR1cmUtb2YtIiArIGRlZi5JRA"
}

// tokenLife is how long a cluster's demo token lasts: cluster2's expires
// in five days.
func tokenLife(def clusterDef) time.Duration {
	if def.ID == "cluster2" {
		return 5*24*time.Hour + time.Hour
	}
	return 365 * 24 * time.Hour
}

// testCredential is collector.Options.TestCredential for the demo.
func testCredential(_ context.Context, cfg *rest.Config, _ string) model.CredentialTest {
	t := model.CredentialTest{At: time.Now()}
	for _, def := range clusters {
		if def.Server != cfg.Host {
			continue
		}
		if def.BadCA {
			t.Failed, t.Reason = model.ErrTLS, "TLS/CA mismatch: the server's certificate is not signed by the kubeconfig's certificate authority"
		}
		return t
	}
	t.Failed, t.Reason = model.ErrUnreachable, "unreachable: no such host (the demo simulates only its own clusters)"
	return t
}
