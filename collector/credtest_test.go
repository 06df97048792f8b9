package collector

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// fakeAPIServer answers the two reviews as an RBAC API server would for
// the users it knows (by bearer token), 401 for the others, and records
// every request: the test holds that nothing but reviews is asked.
type fakeAPIServer struct {
	*httptest.Server
	rules map[string][]authorizationv1.ResourceRule // token → cluster-wide rules
	mu    sync.Mutex
	asked []string // "METHOD path"
}

func newFakeAPIServer(t *testing.T, rules map[string][]authorizationv1.ResourceRule) *fakeAPIServer {
	f := &fakeAPIServer{rules: rules}
	f.Server = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPIServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.asked = append(f.asked, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	rules, ok := f.rules[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401,"message":"Unauthorized"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews":
		rv := authorizationv1.SelfSubjectRulesReview{}
		rv.APIVersion, rv.Kind = "authorization.k8s.io/v1", "SelfSubjectRulesReview"
		rv.Status.ResourceRules = rules
		_ = json.NewEncoder(w).Encode(rv)
	case "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
		// client-go may send protobuf: decode as the API server does.
		body, _ := io.ReadAll(r.Body)
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		rv, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
		if err != nil || !ok || rv.Spec.ResourceAttributes == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		a := rv.Spec.ResourceAttributes
		rv.Status.Allowed = allows(rules, model.Permission{Group: a.Group, Resource: a.Resource, Verb: a.Verb})
		_ = json.NewEncoder(w).Encode(rv)
	default:
		http.NotFound(w, r)
	}
}

// config is a rest.Config for the fake server with token, verified with
// its own CA (or ca when given).
func (f *fakeAPIServer) config(token string, ca []byte) *rest.Config {
	if ca == nil {
		ca = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.Certificate().Raw})
	}
	return &rest.Config{Host: f.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

var readAll = []authorizationv1.ResourceRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}

// TestCredentialTest: each step of the test against a fake API server —
// a reader that may read everything, one without nodes and gateways, a
// token the server refuses, a CA that does not verify the server, an
// address nothing listens on — and only reviews are ever asked.
func TestCredentialTest(t *testing.T) {
	ro := []string{"get", "list", "watch"}
	srv := newFakeAPIServer(t, map[string][]authorizationv1.ResourceRule{
		"reader": readAll,
		"limited": {
			{Verbs: ro, APIGroups: []string{""}, Resources: []string{"pods", "services", "namespaces", "endpoints", "replicationcontrollers", "secrets", "configmaps"}},
			{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes"}},
			{Verbs: ro, APIGroups: []string{"discovery.k8s.io", "apps", "apiextensions.k8s.io", "multicluster.x-k8s.io", "networking.x-k8s.io"}, Resources: []string{"*"}},
			{Verbs: ro, APIGroups: []string{"config.istio.io", "security.istio.io", "networking.istio.io", "authentication.istio.io", "rbac.istio.io", "telemetry.istio.io", "extensions.istio.io"}, Resources: []string{"*"}},
			// Limited to one object: no list or watch of all.
			{Verbs: ro, APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gateways"}, ResourceNames: []string{"one"}},
		},
	})
	ctx := context.Background()
	now := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)

	if got := testCredential(ctx, srv.config("reader", nil), "istio-system", now); !got.Works() || !got.At.Equal(now) {
		t.Errorf("reader: %+v", got)
	}
	got := testCredential(ctx, srv.config("limited", nil), "istio-system", now)
	want := []model.Permission{{Resource: "nodes", Verb: "list"}, {Resource: "nodes", Verb: "watch"},
		{Group: "gateway.networking.k8s.io", Resource: "gateways", Verb: "get"}, {Group: "gateway.networking.k8s.io", Resource: "gateways", Verb: "list"},
		{Group: "gateway.networking.k8s.io", Resource: "gateways", Verb: "watch"}}
	if got.Failed != "" || !slices.Equal(got.Missing, want) {
		t.Errorf("limited: %+v\nwant missing %v", got, want)
	}
	if got := testCredential(ctx, srv.config("s3cr3t-revoked-token", nil), "istio-system", now); got.Failed != model.ErrUnauthorized || strings.Contains(got.Reason, "s3cr3t") {
		t.Errorf("revoked: %+v", got)
	}
	other := meshtest.SelfSigned(t, "another CA", now.Add(time.Hour*24*365*10))
	if got := testCredential(ctx, srv.config("reader", other), "istio-system", now); got.Failed != model.ErrTLS || !strings.Contains(got.Reason, "not signed by the kubeconfig's certificate authority") {
		t.Errorf("other CA: %+v", got)
	}
	// A port nothing listens on: a listener closed at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if got := testCredential(ctx, &rest.Config{Host: "https://" + addr, BearerToken: "reader"}, "istio-system", now); got.Failed != model.ErrUnreachable {
		t.Errorf("nothing listens: %+v", got)
	}
	if got := testCredential(ctx, nil, "istio-system", now); got.Skipped == "" {
		t.Errorf("no config: %+v", got)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, a := range srv.asked {
		if a != "POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews" && a != "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews" {
			t.Errorf("asked %s: the test asks reviews only", a)
		}
	}
}

// TestCredentialTestIncompleteRules: an API server whose rules review is
// incomplete (a webhook authorizer) gets an access review per permission.
func TestCredentialTestIncompleteRules(t *testing.T) {
	srv := newFakeAPIServer(t, map[string][]authorizationv1.ResourceRule{"reader": readAll})
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "selfsubjectrulesreviews") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1","status":{"resourceRules":[],"nonResourceRules":[],"incomplete":true}}`)
			return
		}
		srv.serve(w, r)
	})
	got := testCredential(context.Background(), srv.config("reader", nil), "istio-system", time.Now())
	if !got.Works() {
		t.Errorf("%+v", got)
	}
	if n := len(srv.asked); n != len(readerPermissions()) {
		t.Errorf("%d access reviews, want one per permission (%d)", n, len(readerPermissions()))
	}
}

// TestReaderRoleFromChart: the permissions checked are those of the
// istio reader ClusterRole (a few spot checks of the chart's rules).
func TestReaderRoleFromChart(t *testing.T) {
	ps := readerPermissions()
	for _, p := range []model.Permission{
		{Resource: "nodes", Verb: "watch"}, {Group: "discovery.k8s.io", Resource: "endpointslices", Verb: "list"},
		{Group: "networking.istio.io", Resource: "*", Verb: "get"}, {Group: "gateway.networking.k8s.io", Resource: "gateways", Verb: "watch"},
		{Group: "multicluster.x-k8s.io", Resource: "serviceimports", Verb: "get"},
	} {
		if !slices.Contains(ps, p) {
			t.Errorf("%v %s missing", p.Verb, p)
		}
	}
	for _, p := range ps {
		if !slices.Contains(readVerbs, p.Verb) {
			t.Errorf("%v: not a read", p)
		}
	}
}
