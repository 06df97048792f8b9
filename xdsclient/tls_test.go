package xdsclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
)

// tlsServer serves xDS over TLS with a certificate for
// istiod.istio-system.svc signed by a fresh CA (written to caFile), and
// records the authorization header of each stream.
func tlsServer(t *testing.T) (addr, caFile string, auth func() []string) {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-root"}, IsCA: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), DNSNames: []string{DefaultServerName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(dir, "root-cert.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}

	var mu sync.Mutex
	var seen []string
	cache := cachev3.NewSnapshotCache(false, cachev3.IDHash{}, nil)
	snap, _ := cachev3.NewSnapshot("v1", lab(1))
	_ = cache.SetSnapshot(context.Background(), net1.NodeID(), snap)
	gs := grpc.NewServer(grpc.Creds(credentials.NewServerTLSFromCert(&cert)),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			md, _ := metadata.FromIncomingContext(ss.Context())
			mu.Lock()
			seen = append(seen, md.Get("authorization")...)
			mu.Unlock()
			return h(srv, ss)
		}))
	discovery.RegisterAggregatedDiscoveryServiceServer(gs, serverv3.NewServer(context.Background(), cache, nil))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return lis.Addr().String(), caFile, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func TestTLSWithToken(t *testing.T) {
	addr, caFile, auth := tlsServer(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("secret-token-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("ok", func(t *testing.T) {
		c, rec := runClient(t, Options{Viewpoint: net1, Transport: TransportConfig{Address: addr, TLS: true, CAFile: caFile, TokenFile: tokenFile}})
		rec.wait(t, 5*time.Second, "eds over TLS", isType("eds"))
		if _, ok := c.LoadAssignment(helloEDS); !ok {
			t.Error("no endpoints")
		}
		got := auth()
		if len(got) == 0 || got[0] != "Bearer secret-token-value" {
			t.Errorf("authorization = %q", got)
		}
	})
	t.Run("wrong server name", func(t *testing.T) {
		c, rec := runClient(t, Options{Viewpoint: net1, Transport: TransportConfig{Address: addr, TLS: true, CAFile: caFile, ServerName: "istiod.other.svc"}})
		ev := rec.wait(t, 5*time.Second, "error", isType(EventError))
		if !strings.Contains(ev.Message, "TLS") || !strings.Contains(ev.Message, "--server-name") {
			t.Errorf("message = %q", ev.Message)
		}
		if st := c.Status(); st.State == StateConnected {
			t.Errorf("status = %+v", st)
		}
	})
	t.Run("unknown CA", func(t *testing.T) {
		_, rec := runClient(t, Options{Viewpoint: net1, Transport: TransportConfig{Address: addr, TLS: true}})
		ev := rec.wait(t, 5*time.Second, "error", isType(EventError))
		if !strings.Contains(ev.Message, "TLS") {
			t.Errorf("message = %q", ev.Message)
		}
	})
	t.Run("token never in messages", func(t *testing.T) {
		_ = os.WriteFile(tokenFile, []byte(""), 0o600)
		_, rec := runClient(t, Options{Viewpoint: net1, Transport: TransportConfig{Address: addr, TLS: true, CAFile: caFile, TokenFile: tokenFile}})
		ev := rec.wait(t, 5*time.Second, "error", isType(EventError))
		if !strings.Contains(ev.Message+ev.Error, "empty") || strings.Contains(ev.Message+ev.Error, "secret-token-value") {
			t.Errorf("event = %+v", ev)
		}
	})
}
