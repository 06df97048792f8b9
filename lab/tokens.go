package lab

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// serviceAccountIssuer is the API servers' --service-account-issuer.
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// MintToken signs, with cluster remote's own service-account key, a token
// for ServiceAccount sa of the system namespace (ReaderSA, or
// "meshscope-lab-NAME" that IssueLimitedToken made) as the
// TokenRequest API would, but expiring at exp — which may be past: the
// API server's least TokenRequest lifetime is 10 minutes, so a token that
// has already expired is made here, deterministically, and the real API
// server judges it (it refuses an expired one).
func (l *Lab) MintToken(ctx context.Context, remote, sa string, exp time.Time) (string, error) {
	rc, err := l.cluster(remote)
	if err != nil {
		return "", err
	}
	acct, err := rc.client.CoreV1().ServiceAccounts(SystemNamespace).Get(ctx, sa, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	raw, err := os.ReadFile(filepath.Join(rc.dir, "sa.key"))
	if err != nil {
		return "", err
	}
	b, _ := pem.Decode(raw)
	if b == nil {
		return "", fmt.Errorf("%s: sa.key holds no PEM key", remote)
	}
	key, err := x509.ParsePKCS1PrivateKey(b.Bytes)
	if err != nil {
		return "", err
	}
	// The key ID the API server gives its keys (serviceaccount.keyIDFromPublicKey).
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", err
	}
	kid := sha256.Sum256(der)
	iat := exp.Add(-time.Hour)
	claims := map[string]any{
		"iss": serviceAccountIssuer, "aud": []string{serviceAccountIssuer},
		"sub": "system:serviceaccount:" + SystemNamespace + ":" + sa,
		"iat": iat.Unix(), "nbf": iat.Unix(), "exp": exp.Unix(),
		"kubernetes.io": map[string]any{"namespace": SystemNamespace, "serviceaccount": map[string]string{"name": sa, "uid": string(acct.UID)}},
	}
	return signJWT(key, base64.RawURLEncoding.EncodeToString(kid[:]), claims)
}

// signJWT is a compact RS256 JWT.
func signJWT(key *rsa.PrivateKey, kid string, claims map[string]any) (string, error) {
	h, err := json.Marshal(map[string]string{"alg": "RS256", "kid": kid})
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
