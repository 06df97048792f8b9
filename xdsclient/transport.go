package xdsclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// DefaultServerName is the name in istiod's serving certificate.
const DefaultServerName = "istiod.istio-system.svc"

// DefaultDialTimeout bounds every connection attempt.
const DefaultDialTimeout = 10 * time.Second

// TransportConfig says how to reach one control plane.
type TransportConfig struct {
	// Address is host:port, e.g. 127.0.0.1:15010 (plaintext) or :15012 (TLS).
	Address string
	// TLS turns on TLS; CAFile is istiod's root certificate (PEM; empty
	// means the system pool), ServerName the name to verify.
	TLS        bool
	CAFile     string
	ServerName string
	// TokenFile holds a bearer token (a ServiceAccount token with audience
	// istio-ca), re-read on every stream so a rotated token is picked up. It
	// is only ever sent over TLS.
	TokenFile   string
	DialTimeout time.Duration
}

// Dial creates a gRPC connection to one control plane. It does not connect
// yet (gRPC connects lazily); errors here are configuration errors — an
// unreadable CA file, a token without TLS. Several Clients may share the
// returned connection: each opens its own stream on it.
func Dial(cfg TransportConfig) (*grpc.ClientConn, error) {
	if cfg.Address == "" {
		return nil, fmt.Errorf("no xDS address")
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	opts := []grpc.DialOption{
		// gRPC's own reconnect backoff is capped low: the Client has its own
		// policy and must not find the connection asleep for two minutes
		// after istiod came back.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 200 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
			MinConnectTimeout: cfg.DialTimeout,
		}),
		// istiod's responses can be large (full CDS of a big mesh).
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256 << 20)),
		grpc.WithUserAgent("meshscope"),
		// What is open, for OpenNow.
		grpc.WithStatsHandler(&openCount),
		// TCP keepalive, as Envoy sets on its xds-grpc cluster, so an
		// istiod that vanished without closing the connection (node lost,
		// cable pulled) is noticed in about a minute. gRPC-level pings are
		// avoided: a server enforcing a longer ping interval would answer
		// them with GOAWAY "too_many_pings".
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			d := net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 30 * time.Second, Interval: 10 * time.Second, Count: 3}}
			return d.DialContext(ctx, "tcp", addr)
		}),
	}
	if !cfg.TLS {
		if cfg.TokenFile != "" {
			return nil, fmt.Errorf("a token is only sent over TLS: add --tls (istiod's TLS xDS port is 15012)")
		}
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
		return grpc.NewClient("passthrough:///"+cfg.Address, opts...)
	}
	tc, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	if cfg.TokenFile != "" {
		if _, err := os.Stat(cfg.TokenFile); err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		opts = append(opts, grpc.WithPerRPCCredentials(tokenFile{path: cfg.TokenFile}))
	}
	return grpc.NewClient("passthrough:///"+cfg.Address, opts...)
}

func tlsConfig(cfg TransportConfig) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.ServerName}
	if tc.ServerName == "" {
		tc.ServerName = DefaultServerName
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

// tokenFile is per-RPC credentials from a file. Errors name the file, never
// its content.
type tokenFile struct{ path string }

func (t tokenFile) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	b, err := os.ReadFile(t.path)
	if err != nil {
		return nil, fmt.Errorf("token file %s: cannot read it", t.path)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return nil, fmt.Errorf("token file %s is empty", t.path)
	}
	return map[string]string{"authorization": "Bearer " + tok}, nil
}

func (tokenFile) RequireTransportSecurity() bool { return true }

// waitReady makes conn connect and waits, at most timeout, until it is
// ready or a fresh attempt failed (the stream then reports that attempt's
// error, e.g. "connection refused"). It never waits longer than timeout, so a
// black-holed address becomes errDialTimeout instead of a hang.
func waitReady(ctx context.Context, conn *grpc.ClientConn, timeout time.Duration) error {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if conn.GetState() == connectivity.TransientFailure {
		// pick_first keeps reporting TRANSIENT_FAILURE until it is READY
		// again ("sticky" failure), so no CONNECTING shows up to wait for.
		// Try now rather than at gRPC's own backoff, give the attempt a
		// moment, and otherwise let the stream fail fast with its error.
		conn.ResetConnectBackoff()
		sctx, scancel := context.WithTimeout(tctx, min(timeout, 2*time.Second))
		defer scancel()
		conn.WaitForStateChange(sctx, connectivity.TransientFailure)
		return ctx.Err()
	}
	conn.Connect()
	attempted := false
	for {
		s := conn.GetState()
		switch s {
		case connectivity.Ready:
			return nil
		case connectivity.Connecting:
			attempted = true
		case connectivity.TransientFailure:
			if attempted {
				return nil // the stream reports this attempt's error
			}
		case connectivity.Shutdown:
			return fmt.Errorf("connection closed")
		}
		if !conn.WaitForStateChange(tctx, s) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if s == connectivity.TransientFailure {
				return nil
			}
			return errDialTimeout
		}
	}
}
