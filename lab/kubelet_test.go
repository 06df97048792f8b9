package lab

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParseKubeletForward(t *testing.T) {
	f, err := ParseKubeletForward("istio-system/istiod-local-cluster1:15010=127.0.0.1:15110")
	if err != nil || f != (KubeletForward{Namespace: "istio-system", Pod: "istiod-local-cluster1", Port: 15010, Target: "127.0.0.1:15110"}) {
		t.Fatalf("got %+v, %v", f, err)
	}
	if f.String() != "istio-system/istiod-local-cluster1:15010=127.0.0.1:15110" {
		t.Errorf("String() = %q", f.String())
	}
	for _, bad := range []string{"", "istiod:15010=127.0.0.1:1", "ns/pod=127.0.0.1:1", "ns/pod:0=127.0.0.1:1", "ns/pod:x=127.0.0.1:1", "ns/pod:15010=", "ns/pod:15010=nohostport", "/pod:1=127.0.0.1:1"} {
		if _, err := ParseKubeletForward(bad); err == nil {
			t.Errorf("ParseKubeletForward(%q): no error", bad)
		}
	}
}

// A pod the stand-in does not forward for is a 404, as a kubelet answers
// for a pod it does not run; a plain request to a known pod is refused
// (it must upgrade to a stream).
func TestKubeletHandlerUnknownPod(t *testing.T) {
	h := KubeletHandler([]KubeletForward{{Namespace: "istio-system", Pod: "istiod", Port: 15010, Target: "127.0.0.1:1"}}, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/portForward/istio-system/other", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "pod does not exist") {
		t.Errorf("unknown pod: %d %q", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/portForward/istio-system/istiod", nil))
	if rec.Code < 400 {
		t.Errorf("a request without upgrade succeeded: %d %q", rec.Code, rec.Body.String())
	}
}
