package istiod

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestPortForwardRefused: an API server that refuses the portforward
// subresource becomes an error naming the pod, quickly, not a hang.
func TestPortForwardRefused(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/pods/istiod-1/portforward") {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		}
		http.Error(w, `{"kind":"Status","status":"Failure","message":"forbidden","reason":"Forbidden","code":403}`, http.StatusForbidden)
	}))
	defer api.Close()
	start := time.Now()
	_, err := StartPortForward(context.Background(), &rest.Config{Host: api.URL}, "istio-system", "istiod-1", 15010, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "istio-system/istiod-1") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("took %s", d)
	}
}
