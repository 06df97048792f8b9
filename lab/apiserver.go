package lab

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
)

// newCluster prepares a cluster's folder: a service-account signing key and
// a token file with the lab admin (system:masters).
func (l *Lab) newCluster(spec ClusterSpec) (*Cluster, error) {
	dir := filepath.Join(l.cfg.Dir, spec.Name)
	if err := os.MkdirAll(filepath.Join(dir, "certs"), 0o700); err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return nil, err
	}
	c := &Cluster{
		ClusterSpec:   spec,
		URL:           fmt.Sprintf("https://127.0.0.1:%d", spec.Port),
		AdminToken:    randomToken(),
		ReadOnlyToken: randomToken(),
		dir:           dir,
	}
	// The admin, and a read-only user (get/list/watch, no secrets; RBAC in
	// seed.go) for testing meshscope with the least it needs.
	csv := fmt.Sprintf("%s,lab-admin,lab-admin,\"system:masters\"\n%s,%s,%s\n", c.AdminToken, c.ReadOnlyToken, ReadOnlyUser, ReadOnlyUser)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(csv), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, auditPolicyFile), []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	c.apiserver = &proc{
		Name: "kube-apiserver-" + spec.Name,
		Bin:  filepath.Join(BinDir(l.cfg.Root), "kube-apiserver"),
		Args: []string{
			"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", l.cfg.EtcdPort),
			"--etcd-prefix=/" + spec.Name,
			"--secure-port=" + strconv.Itoa(spec.Port),
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--cert-dir=" + filepath.Join(dir, "certs"),
			"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
			"--authorization-mode=RBAC",
			"--service-account-key-file=" + filepath.Join(dir, "sa.pub"),
			"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
			"--service-account-issuer=" + serviceAccountIssuer,
			"--service-cluster-ip-range=10.96.0.0/16",
			"--profiling=false",
			// What the lab's test accounts ask (audit.go): proof that a
			// check wrote nothing.
			"--audit-policy-file=" + filepath.Join(dir, auditPolicyFile),
			"--audit-log-path=" + filepath.Join(dir, auditLogFile),
			"--v=0",
		},
		Dir:     dir,
		LogPath: filepath.Join(l.cfg.Dir, "logs", "kube-apiserver-"+spec.Name+".log"),
	}
	return c, nil
}

func (l *Lab) startAPIServer(c *Cluster) error {
	return c.apiserver.start(l.cfg.Detach)
}

// waitAPIServer waits for /readyz, then loads the self-signed serving
// certificate (the cluster's CA for clients) and builds the admin client.
func (l *Lab) waitAPIServer(ctx context.Context, c *Cluster) error {
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // only until its CA is on disk
	}}
	err := waitFor(ctx, "kube-apiserver "+c.Name, 90*time.Second, c.apiserver, func() error {
		resp, err := insecure.Get(c.URL + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz: %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(filepath.Join(c.dir, "certs", "apiserver.crt"))
	if err != nil {
		return fmt.Errorf("kube-apiserver %s serving certificate: %w", c.Name, err)
	}
	c.CAData = ca
	c.client, err = kubernetes.NewForConfig(c.RESTConfig())
	return err
}

// StopAPIServer stops a cluster's kube-apiserver (its data stays in etcd).
func (l *Lab) StopAPIServer(name string) error {
	c := l.Cluster(name)
	if c == nil {
		return fmt.Errorf("no lab cluster %q", name)
	}
	return c.apiserver.stop()
}

// StartAPIServer starts a stopped kube-apiserver again with the same
// certificates, keys and tokens, and waits until it is ready.
func (l *Lab) StartAPIServer(ctx context.Context, name string) error {
	c := l.Cluster(name)
	if c == nil {
		return fmt.Errorf("no lab cluster %q", name)
	}
	if err := c.apiserver.start(l.cfg.Detach); err != nil {
		return err
	}
	if err := l.waitAPIServer(ctx, c); err != nil {
		return err
	}
	return l.saveState()
}

func mkLogDir(dir string) error { return os.MkdirAll(filepath.Join(dir, "logs"), 0o755) }

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}
