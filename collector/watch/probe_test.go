package watch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

// defaultProbe and errs.Classify against a real HTTP server through a real
// client-go client: the errors a dead, distrusted or credential-rejecting
// API server really produces become the right sentences.
func TestDefaultProbeClassifiesRealErrors(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good-token-123" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"errs.Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
			return
		}
		_, _ = w.Write([]byte(`{"major":"1","minor":"36","gitVersion":"v1.36.3"}`))
	})
	srv := httptest.NewTLSServer(h)
	defer srv.Close()

	probe := func(cfg *rest.Config) errs.Failure {
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return errs.Classify(defaultProbe(ctx, c, new(sync.WaitGroup)), "the API server")
	}
	good := &rest.Config{Host: srv.URL, BearerToken: "good-token-123", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	if p := probe(good); p.Kind != "" {
		t.Fatalf("healthy server: %+v", p)
	}
	bad := rest.CopyConfig(good)
	bad.BearerToken = "revoked-token-456"
	if p := probe(bad); p.Kind != model.ErrUnauthorized || strings.Contains(p.Reason, "revoked-token-456") {
		t.Fatalf("revoked token: %+v", p)
	}
	wrongCA := rest.CopyConfig(good)
	wrongCA.TLSClientConfig = rest.TLSClientConfig{} // system roots do not trust httptest's CA
	if p := probe(wrongCA); p.Kind != model.ErrTLS || !strings.HasPrefix(p.Reason, "TLS/CA mismatch") {
		t.Fatalf("wrong CA: %+v", p)
	}
	srv.Close()
	if p := probe(good); p.Kind != model.ErrUnreachable || !strings.HasPrefix(p.Reason, "unreachable") {
		t.Fatalf("dead server: %+v", p)
	}
}

// A server that accepts but never answers: the probe gives up after its
// timeout and says unreachable.
func TestDefaultProbeBlackholed(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	c, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	p := errs.Classify(defaultProbe(ctx, c, new(sync.WaitGroup)), "")
	if p.Kind != model.ErrUnreachable || time.Since(start) > 2*time.Second {
		t.Fatalf("blackholed: %+v after %s", p, time.Since(start))
	}
}
