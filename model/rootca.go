package model

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"time"
)

// The root certificate istiod publishes: its namespace controller writes the
// CA bundle its workloads must trust into ConfigMap istio-ca-root-cert (key
// root-cert.pem) of every namespace of its config cluster
// (pilot/pkg/serviceregistry/kube/controller/namespacecontroller.go
// reconcileCACertAndCRL). Two clusters whose bundles share no root cannot
// verify each other's workload certificates: cross-cluster mTLS fails. The
// bundle is public data; meshscope reads only this one ConfigMap of the
// system namespace, never a Secret.
const (
	RootCertConfigMap = "istio-ca-root-cert"
	RootCertKey       = "root-cert.pem"
)

// RootCert is one certificate of the root bundle a cluster's istiod publishes.
type RootCert struct {
	// Fingerprint is the SHA-256 of the certificate (DER), in hex.
	Fingerprint string    `json:"fingerprint"`
	Subject     string    `json:"subject"`
	NotBefore   time.Time `json:"notBefore"`
	NotAfter    time.Time `json:"notAfter"`
}

// ShortFingerprint is the first 16 hex digits, enough to tell roots apart
// in a sentence.
func (c RootCert) ShortFingerprint() string {
	if len(c.Fingerprint) > 16 {
		return c.Fingerprint[:16]
	}
	return c.Fingerprint
}

// ParseRootCerts reads every certificate of a PEM bundle; the error text
// says what does not parse (the certificates before it are kept).
func ParseRootCerts(pemText []byte) ([]RootCert, string) {
	var out []RootCert
	rest := pemText
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return out, fmt.Sprintf("%s: a certificate does not parse: %v", RootCertKey, err)
		}
		sum := sha256.Sum256(cert.Raw)
		out = append(out, RootCert{Fingerprint: hex.EncodeToString(sum[:]), Subject: cert.Subject.String(),
			NotBefore: cert.NotBefore.UTC(), NotAfter: cert.NotAfter.UTC()})
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("%s holds no PEM certificate", RootCertKey)
	}
	return out, ""
}

// SharesRoot reports whether two bundles have a certificate in common:
// workloads of the two clusters then trust each other's certificates.
func SharesRoot(a, b []RootCert) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Fingerprint == y.Fingerprint {
				return true
			}
		}
	}
	return false
}
