package lab

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// Root CAs. Left alone, each istiod signs its workloads' certificates with a
// root of its own (self-signed, kept in Secret istio-ca-secret): in
// multi-primary the two clusters then trust different roots and cross-cluster
// mTLS fails. Istio's fix is a plug-in CA: every istiod gets an
// intermediate signed by one shared root, as the files istiod reads from
// ./etc/cacerts in its working directory (pilot/pkg/bootstrap/istio_ca.go:
// ROOT_CA_DIR, ca-cert.pem, ca-key.pem, root-cert.pem, cert-chain.pem).
// The lab gives its istiods that shared root unless Config.OwnCAs is set,
// and SetIstiodCA switches one istiod between the two.

// caDir is where the lab keeps its shared root.
func (l *Lab) caDir() string { return filepath.Join(l.cfg.Dir, "ca") }

// pluginDir is istiod's ./etc/cacerts.
func (is *Istiod) pluginDir(labDir string) string {
	return filepath.Join(labDir, "istiod-"+is.Name(), "etc", "cacerts")
}

// CA says which root an istiod signs with.
type CA string

const (
	// CAShared: an intermediate of the lab's shared root (the default).
	CAShared CA = "shared"
	// CAOwn: istiod's own self-signed root (no plug-in CA).
	CAOwn CA = "own"
	// CAExpiring: an intermediate of a root of its own that expires in
	// ten days.
	CAExpiring CA = "expiring"
)

// newRoot makes a self-signed root CA valid for the given time.
func newRoot(cn string, valid time.Duration) (*x509.Certificate, *rsa.PrivateKey, []byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{Organization: []string{"meshscope lab"}, CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(valid),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// sharedRoot loads the lab's root CA, creating it on first use.
func (l *Lab) sharedRoot() (*x509.Certificate, *rsa.PrivateKey, []byte, error) {
	dir := l.caDir()
	certPath, keyPath := filepath.Join(dir, "root-cert.pem"), filepath.Join(dir, "root-key.pem")
	if certPEM, err := os.ReadFile(certPath); err == nil {
		keyPEM, err := os.ReadFile(keyPath)
		if err != nil {
			return nil, nil, nil, err
		}
		cb, _ := pem.Decode(certPEM)
		kb, _ := pem.Decode(keyPEM)
		if cb == nil || kb == nil {
			return nil, nil, nil, fmt.Errorf("%s: not PEM", dir)
		}
		cert, err := x509.ParseCertificate(cb.Bytes)
		if err != nil {
			return nil, nil, nil, err
		}
		key, err := x509.ParsePKCS1PrivateKey(kb.Bytes)
		if err != nil {
			return nil, nil, nil, err
		}
		return cert, key, certPEM, nil
	}
	cert, key, certPEM, err := newRoot("meshscope lab root CA", 10*365*24*time.Hour)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, nil, err
	}
	if err := os.WriteFile(certPath, certPEM, 0o644); err != nil {
		return nil, nil, nil, err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return nil, nil, nil, err
	}
	return cert, key, certPEM, nil
}

// writePluginCA gives istiod an intermediate CA signed by root, in the
// files it reads at start.
func (l *Lab) writePluginCA(is *Istiod, root *x509.Certificate, rootKey *rsa.PrivateKey, rootPEM []byte) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{Organization: []string{"meshscope lab"}, CommonName: "istiod " + is.Cluster + " intermediate CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              root.NotAfter, // no longer than the root that signs it
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, root, &key.PublicKey, rootKey)
	if err != nil {
		return err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	dir := is.pluginDir(l.cfg.Dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	files := map[string][]byte{
		"ca-cert.pem":    caPEM,
		"ca-key.pem":     pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"root-cert.pem":  rootPEM,
		"cert-chain.pem": append(append([]byte{}, caPEM...), rootPEM...),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// prepareCA sets up istiod's working directory for the root it should use.
func (l *Lab) prepareCA(is *Istiod, ca CA) error {
	var (
		root    *x509.Certificate
		rootKey *rsa.PrivateKey
		rootPEM []byte
		err     error
	)
	switch ca {
	case CAOwn:
		return os.RemoveAll(is.pluginDir(l.cfg.Dir))
	case CAShared:
		root, rootKey, rootPEM, err = l.sharedRoot()
	case CAExpiring:
		root, rootKey, rootPEM, err = newRoot("istiod "+is.Cluster+" expiring root CA", 10*24*time.Hour)
	default:
		return fmt.Errorf("unknown CA %q", ca)
	}
	if err != nil {
		return fmt.Errorf("root CA: %w", err)
	}
	return l.writePluginCA(is, root, rootKey, rootPEM)
}

// SetIstiodCA restarts the istiod of cluster with the root ca says, and
// waits until it is ready with every cluster synced. istiod then publishes
// the new root in ConfigMap istio-ca-root-cert of every namespace of its
// cluster.
func (l *Lab) SetIstiodCA(ctx context.Context, cluster string, ca CA) error {
	for i, is := range l.istiods {
		if is.Cluster != cluster {
			continue
		}
		if err := is.proc.stop(); err != nil {
			return err
		}
		if err := l.prepareCA(is, ca); err != nil {
			return err
		}
		return l.RestartIstiod(ctx, i)
	}
	return fmt.Errorf("no istiod for %s", cluster)
}

// RootCertPEM is the lab's shared root certificate (PEM), created on first use.
func (l *Lab) RootCertPEM() ([]byte, error) {
	_, _, p, err := l.sharedRoot()
	return p, err
}
