package e2e

// These tests disturb the lab (an apiserver goes down, remote secrets are
// broken and rotated), so they live in the last file: go test runs files in
// name order, and istiod may take a while to recover its own watches.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
)

const helloHost = "helloworld.sample.svc.cluster.local"

func cluster(s *model.Snapshot, id string) model.Cluster {
	if c := s.ClusterByID(id); c != nil {
		return *c
	}
	return model.Cluster{ID: id, State: "absent"}
}

// TestCollectorFromOneContext: from the cluster1 context alone, cluster2
// comes in through the remote secret; both synced; one gateway per network;
// helloworld has endpoints in both clusters with their networks.
func TestCollectorFromOneContext(t *testing.T) {
	s := startRegistry(t).Snapshot()
	for _, id := range []string{"cluster1", "cluster2"} {
		if c := cluster(s, id); c.State != model.StateSynced {
			t.Errorf("%s is %s (%s), want synced", id, c.State, c.Reason)
		}
	}
	if c := cluster(s, "cluster2"); c.Source.Kind != model.SourceSecret || c.Source.Name != "istio-system/istio-remote-secret-cluster2" {
		t.Errorf("cluster2 source = %+v, want the remote secret", c.Source)
	}
	var gws []string
	for _, g := range s.Gateways {
		gws = append(gws, fmt.Sprintf("%s %s:%d", g.Network, g.Address, g.Port))
	}
	sort.Strings(gws)
	if want := "network1 192.168.60.113:15443,network2 192.168.60.9:15443"; strings.Join(gws, ",") != want {
		t.Errorf("gateways %v, want %s", gws, want)
	}
	if got := helloEndpoints(s); got != "cluster1 10.44.0.13 network1,cluster2 10.144.0.15 network2" {
		t.Errorf("helloworld endpoints: %s", got)
	}
	// istiod's own view agrees with meshscope's.
	v, err := istiod.FetchView(context.Background(), "cluster1", theLab.Istiods()[0].HTTPURL())
	if err != nil {
		t.Fatal(err)
	}
	if ps := explain.IstiodDisagreements(s, v); len(ps) != 0 {
		t.Errorf("istiod disagrees on the healthy lab: %+v", ps)
	}
	// And the doctor command, as a user runs it, finds nothing wrong: exit 0.
	cmd := exec.Command(meshscopeBinary(t), "doctor", "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1",
		"--istiod-debug-address", strings.TrimPrefix(theLab.Istiods()[0].HTTPURL(), "http://"), "--log-file", "-")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("doctor on the healthy lab: %v\n%s", err, out)
	}
}

func helloEndpoints(s *model.Snapshot) string {
	svc := s.Service(helloHost)
	if svc == nil {
		return "(no helloworld)"
	}
	var out []string
	for id, sic := range svc.Clusters {
		for _, e := range sic.Endpoints {
			out = append(out, id+" "+e.Address+" "+e.Network)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// TestCollectorAPIServerDown: cluster2's apiserver stops: cluster2 leaves
// synced, as unreachable, within 15 s while cluster1 stays synced; it comes
// back synced with its endpoints when the apiserver returns.
func TestCollectorAPIServerDown(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	if err := theLab.StopAPIServer("cluster2"); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = theLab.StartAPIServer(ctx, "cluster2")
		}
	}()
	stopped := time.Now()
	eventually(t, 15*time.Second, func() string {
		c := cluster(reg.Snapshot(), "cluster2")
		if c.State == model.StateSynced || c.ErrorKind != model.ErrUnreachable {
			return fmt.Sprintf("cluster2 is %s (%s: %s)", c.State, c.ErrorKind, c.Reason)
		}
		return ""
	})
	t.Logf("cluster2 unreachable %s after its apiserver stopped: %s", time.Since(stopped).Round(time.Millisecond), cluster(reg.Snapshot(), "cluster2").Reason)
	if c := cluster(reg.Snapshot(), "cluster1"); c.State != model.StateSynced {
		t.Errorf("cluster1 is %s while cluster2 is down", c.State)
	}
	// istiod still calls cluster2 synced (istio/istio#33799); meshscope says
	// that is stale.
	v, err := istiod.FetchView(ctx, "cluster1", theLab.Istiods()[0].HTTPURL())
	if err != nil {
		t.Fatal(err)
	}
	ps := explain.IstiodDisagreements(reg.Snapshot(), v)
	t.Logf("istiod's clusterz while cluster2 is down: %+v", v.Clusters)
	if !explain.HasErrors(ps) {
		t.Errorf("no disagreement reported while istiod says %+v: %+v", v.Clusters, ps)
	}
	if err := theLab.StartAPIServer(ctx, "cluster2"); err != nil {
		t.Fatal(err)
	}
	restarted = true
	eventually(t, 30*time.Second, func() string {
		s := reg.Snapshot()
		if c := cluster(s, "cluster2"); c.State != model.StateSynced {
			return fmt.Sprintf("cluster2 is %s (%s)", c.State, c.Reason)
		}
		if got := helloEndpoints(s); !strings.Contains(got, "cluster2 10.144.0.15 network2") {
			return "helloworld endpoints after the restart: " + got
		}
		return ""
	})
}

// TestCollectorBrokenSecrets: remote secrets with garbage, an exec plugin,
// a wrong CA and a revoked token each show as that cluster's error with its
// reason; cluster1 and cluster2 carry on.
func TestCollectorBrokenSecrets(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	good, err := clientcmd.Load(mustKubeconfig(t, "cluster2", "placeholder"))
	if err != nil {
		t.Fatal(err)
	}
	variant := func(edit func(*clientcmdapi.Config)) []byte {
		c := good.DeepCopy()
		edit(c)
		b, err := clientcmd.Write(*c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	revokedToken, err := theLab.IssueReaderToken(ctx, "cluster2", "e2e-revoked")
	if err != nil {
		t.Fatal(err)
	}
	validToken, err := theLab.IssueReaderToken(ctx, "cluster2", "e2e-wrongca")
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string][]byte{
		"garbage": []byte("this is not a kubeconfig: [\n"),
		"execplugin": variant(func(c *clientcmdapi.Config) {
			c.AuthInfos["cluster2"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "/bin/true", APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
		}),
		"wrongca": variant(func(c *clientcmdapi.Config) {
			c.Clusters["cluster2"].CertificateAuthorityData = otherCA(t)
			c.AuthInfos["cluster2"].Token = validToken
		}),
		"revoked": variant(func(c *clientcmdapi.Config) { c.AuthInfos["cluster2"].Token = revokedToken }),
	}
	if err := theLab.RevokeRemoteSecretToken(ctx, "e2e-revoked", "cluster2"); err != nil {
		t.Fatal(err)
	}
	for id, kc := range secrets {
		name := "istio-remote-secret-e2e-" + id
		if err := theLab.WriteRemoteSecret(ctx, "cluster1", name, map[string][]byte{id: kc}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = theLab.DeleteRemoteSecret(context.Background(), "cluster1", name) })
	}
	want := map[string]model.ErrorKind{
		"garbage":    model.ErrBadKubeconfig,
		"execplugin": model.ErrRefusedConfig,
		"wrongca":    model.ErrTLS,
		"revoked":    model.ErrUnauthorized,
	}
	eventually(t, 20*time.Second, func() string {
		s := reg.Snapshot()
		for id, kind := range want {
			c := cluster(s, id)
			if c.State != model.StateError || c.ErrorKind != kind || c.Reason == "" {
				return fmt.Sprintf("%s is %s (%s: %q), want error %s", id, c.State, c.ErrorKind, c.Reason, kind)
			}
		}
		for _, id := range []string{"cluster1", "cluster2"} {
			if c := cluster(s, id); c.State != model.StateSynced {
				return fmt.Sprintf("%s is %s while broken secrets are around", id, c.State)
			}
		}
		return ""
	})
	s := reg.Snapshot()
	for id := range want {
		c := cluster(s, id)
		t.Logf("%-10s %s: %s", id, c.ErrorKind, c.Reason)
		for _, secret := range []string{revokedToken, validToken} {
			if strings.Contains(c.Reason, secret) {
				t.Errorf("%s's reason contains a token", id)
			}
		}
	}
}

// TestCollectorTokenRotation: the remote secret's token is rotated (the old
// one revoked): meshscope picks up the new kubeconfig without a restart and
// keeps watching cluster2.
func TestCollectorTokenRotation(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	if err := theLab.RotateRemoteSecret(ctx, "cluster1", "cluster2"); err != nil {
		t.Fatal(err)
	}
	// Give the probe (every 3 s) time to hit a revoked token, if it kept it.
	time.Sleep(4 * time.Second)
	pod := lab.PodSpec{Namespace: lab.SampleNamespace, Name: "helloworld-v2-54df5f84b-rot", IP: "10.144.0.77", Labels: lab.AppLabels("helloworld", "v2", "network2")}
	if err := theLab.AddPods(ctx, "cluster2", pod); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = theLab.RemovePod(context.Background(), "cluster2", lab.SampleNamespace, pod.Name) }()
	eventually(t, 20*time.Second, func() string {
		s := reg.Snapshot()
		if c := cluster(s, "cluster2"); c.State != model.StateSynced {
			return fmt.Sprintf("cluster2 is %s (%s) after the rotation", c.State, c.Reason)
		}
		if !strings.Contains(helloEndpoints(s), "10.144.0.77") {
			return "a pod added after the rotation is not seen: " + helloEndpoints(s)
		}
		return ""
	})
}

// TestCollectorReadOnlyUser: a user who may get/list/watch but not read
// Secrets works from its context and says remote secrets could not be read.
func TestCollectorReadOnlyUser(t *testing.T) {
	reg, err := collector.NewRegistry(collector.Options{Kubeconfig: theLab.Kubeconfig, Contexts: []string{"cluster1-readonly"}, SyncTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = reg.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	eventually(t, 20*time.Second, func() string {
		s := reg.Snapshot()
		if len(s.Clusters) != 1 {
			return fmt.Sprintf("clusters %+v, want only the context's", s.Clusters)
		}
		c := s.Clusters[0]
		if c.State != model.StateSynced {
			return fmt.Sprintf("%s is %s (%s)", c.ID, c.State, c.Reason)
		}
		if !strings.Contains(strings.Join(c.Warnings, ";"), "remote secrets") {
			return fmt.Sprintf("no warning about remote secrets: %v", c.Warnings)
		}
		if s.Service(helloHost) == nil {
			return "helloworld not seen by the read-only user"
		}
		return ""
	})
	t.Logf("warnings: %v", reg.Snapshot().Clusters[0].Warnings)
}

func mustKubeconfig(t *testing.T, cluster, token string) []byte {
	b, err := theLab.RemoteKubeconfig(cluster, token)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// otherCA is a CA certificate that signed nothing the lab serves.
func otherCA(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "not-the-lab-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
