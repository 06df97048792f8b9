package horizon

import (
	"testing"
	"time"

	"github.com/meshscope/meshscope/model"
)

// The Sidecar that applies: the proxy namespace's with a matching
// selector first, then its catch-all, then the root namespace's.
func TestSidecarFor(t *testing.T) {
	now := time.Now()
	all := []model.Sidecar{
		{Namespace: "istio-system", Name: "mesh", Egress: []model.SidecarEgress{{Hosts: []string{"./*"}}}},
		{Namespace: "app", Name: "all", Created: now},
		{Namespace: "app", Name: "web", Created: now.Add(time.Second), WorkloadSelector: map[string]string{"app": "web"}},
	}
	v := &configView{mc: model.DefaultMeshConfig()}
	v.indexSidecars(all, func(string, string) bool { return true })
	for _, c := range []struct {
		ns     string
		labels map[string]string
		want   string
	}{
		{"app", map[string]string{"app": "web"}, "web"},
		{"app", map[string]string{"app": "db"}, "all"},
		{"other", nil, "mesh"},
	} {
		sc := v.sidecarFor(c.ns, c.labels)
		if sc == nil || sc.s.Name != c.want {
			t.Errorf("%s %v: %+v, want %s", c.ns, c.labels, sc, c.want)
		}
	}
	if (&configView{mc: model.DefaultMeshConfig()}).sidecarFor("app", nil) != nil {
		t.Error("no Sidecar at all: none applies")
	}
}

// Egress hosts: namespaces "*", "." (the proxy's) and named ones, "*" and
// "*.suffix" names, "~" exclusions, listeners limited to their port.
func TestSidecarImports(t *testing.T) {
	const h = "reviews.bookinfo.svc.cluster.local"
	cases := []struct {
		egress  []model.SidecarEgress
		ns      string
		port    int32
		imports bool
	}{
		{nil, "bookinfo", 9080, true},
		{[]model.SidecarEgress{{Hosts: []string{"./*"}}}, "bookinfo", 9080, false},
		{[]model.SidecarEgress{{Hosts: []string{"./*"}}}, "app", 9080, true}, // the proxy's own namespace
		{[]model.SidecarEgress{{Hosts: []string{"bookinfo/*.svc.cluster.local"}}}, "bookinfo", 9080, true},
		{[]model.SidecarEgress{{Hosts: []string{"*/" + h}}}, "bookinfo", 9080, true},
		{[]model.SidecarEgress{{Hosts: []string{"*/*", "~bookinfo/" + h}}}, "bookinfo", 9080, false},
		{[]model.SidecarEgress{{Hosts: []string{"bookinfo/*", "~*/" + h}}}, "bookinfo", 9080, false},
		{[]model.SidecarEgress{{Port: 9080, Hosts: []string{"*/*"}}}, "bookinfo", 9080, true},
		{[]model.SidecarEgress{{Port: 80, Hosts: []string{"*/*"}}}, "bookinfo", 9080, false},
		{[]model.SidecarEgress{{Port: 80, Protocol: "HTTP_PROXY", Hosts: []string{"*/*"}}}, "bookinfo", 9080, true},
		{[]model.SidecarEgress{{Port: 80, Hosts: []string{"*/*"}}, {Hosts: []string{"bookinfo/*"}}}, "bookinfo", 9080, true},
		{[]model.SidecarEgress{{Hosts: []string{"bookinfo"}}}, "bookinfo", 9080, false}, // not ns/name: ignored
	}
	for i, c := range cases {
		sc := &sidecarScope{&model.Sidecar{Egress: c.egress}}
		if got := sc.imports(c.ns, h, c.port, "app"); got != c.imports {
			t.Errorf("case %d %+v: imports %s/%s:%d = %v", i, c.egress, c.ns, h, c.port, got)
		}
	}
}

// VirtualServices a Sidecar's listener selects import their destinations:
// visible, bound to the sidecars, a host in the listener's hosts; an http
// route for other source namespaces does not count; a listener with a
// port imports for that port only.
func TestSidecarVirtualServiceImports(t *testing.T) {
	const h = "reviews.bookinfo.svc.cluster.local"
	vs := func(ns string, mod func(*model.VirtualService)) model.VirtualService {
		v := model.VirtualService{Namespace: ns, Hosts: []string{"reviews-route"}, Destinations: []model.VSDestination{{Host: "reviews.bookinfo.svc.cluster.local"}}}
		if mod != nil {
			mod(&v)
		}
		return v
	}
	cases := []struct {
		name    string
		egress  []model.SidecarEgress
		vs      model.VirtualService
		port    int32
		imports bool
	}{
		{"own namespace", []model.SidecarEgress{{Hosts: []string{"./*"}}}, vs("app", nil), 9080, true},
		{"short destination completed in the VS namespace", []model.SidecarEgress{{Hosts: []string{"./*"}}},
			vs("bookinfo", func(v *model.VirtualService) { v.Destinations[0].Host = "reviews" }), 9080, false}, // VS in bookinfo not selected by ./*
		{"selected through */", []model.SidecarEgress{{Hosts: []string{"*/reviews-route.bookinfo.svc.cluster.local"}}},
			vs("bookinfo", func(v *model.VirtualService) { v.Destinations[0].Host = "reviews" }), 9080, true},
		{"bound to a gateway only", []model.SidecarEgress{{Hosts: []string{"./*"}}}, vs("app", func(v *model.VirtualService) { v.Gateways = []string{"istio-system/gw"} }), 9080, false},
		{"exported elsewhere", []model.SidecarEgress{{Hosts: []string{"*/*"}}}, vs("other", func(v *model.VirtualService) { v.ExportTo = []string{"."} }), 9080, false},
		{"other source namespace", []model.SidecarEgress{{Hosts: []string{"./*"}}}, vs("app", func(v *model.VirtualService) { v.Destinations[0].SourceNamespaces = []string{"x"} }), 9080, false},
		{"this source namespace", []model.SidecarEgress{{Hosts: []string{"./*"}}}, vs("app", func(v *model.VirtualService) { v.Destinations[0].SourceNamespaces = []string{"x", "app"} }), 9080, true},
		{"destination port", []model.SidecarEgress{{Hosts: []string{"./*"}}}, vs("app", func(v *model.VirtualService) { v.Destinations[0].Port = 9090 }), 9080, false},
		{"listener port", []model.SidecarEgress{{Port: 9080, Hosts: []string{"./*"}}}, vs("app", func(v *model.VirtualService) { v.Destinations[0].Port = 9090 }), 9080, true},
		{"excluded VS host", []model.SidecarEgress{{Hosts: []string{"./*", "~./reviews-route.app.svc.cluster.local"}}}, vs("app", nil), 9080, false},
	}
	for _, c := range cases {
		v := &configView{mc: model.DefaultMeshConfig(), vss: []model.VirtualService{c.vs}}
		sc := &sidecarScope{&model.Sidecar{Egress: c.egress}}
		if got := sc.vsImports(v, h, c.port, "app"); got != c.imports {
			t.Errorf("%s: vsImports = %v, want %v", c.name, got, c.imports)
		}
	}
}
