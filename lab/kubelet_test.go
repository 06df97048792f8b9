package lab

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
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

// TestPortForwardEndsWithThePod: when the pod's process closes its end
// (istiod killed), the forwarded stream closes too, within the linger,
// although the client never closes its own: the client must see its
// connection drop, as it does through a real kubelet.
func TestPortForwardEndsWithThePod(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = c.Write([]byte("bye"))
		c.Close()
	}()
	k := &kubeletForwarder{targets: map[string]string{"istiod:15010": ln.Addr().String()}, logf: func(string, ...any) {}}
	client, stream := net.Pipe()
	defer client.Close()
	ended := make(chan error, 1)
	go func() { ended <- k.PortForward(context.Background(), "istiod", "", 15010, stream) }()
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(client) // returns at EOF: the stream was closed
	if err != nil || string(got) != "bye" {
		t.Fatalf("read %q, %v", got, err)
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("PortForward did not return after the pod closed its end")
	}
}
