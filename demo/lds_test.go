package demo

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/tui"
	"github.com/meshscope/meshscope/xdsclient"
)

const helloHost = "helloworld.sample.svc.cluster.local"

// TestDemoXDSServesListenersAndRoutes: a demo sidecar in cluster1 that turns
// on LDS/RDS the way `:pc` does (WatchListeners after CDS) gets istiod's
// listeners and routes, over both ADS variants and under churn, without a
// NACK, and the proxy config the TUI shows from it is not empty.
func TestDemoXDSServesListenersAndRoutes(t *testing.T) {
	d, ctx := startSettled(t, true, 10*time.Second)
	for _, mode := range []xdsclient.Mode{xdsclient.ModeDelta, xdsclient.ModeSotW} {
		t.Run(string(mode), func(t *testing.T) {
			pc := proxyConfig(t, ctx, d, mode, xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"})
			if len(pc.Clusters) == 0 || len(pc.Listeners) == 0 || len(pc.Routes) == 0 {
				t.Fatalf(":pc data is empty: %d clusters, %d listeners, %d routes", len(pc.Clusters), len(pc.Listeners), len(pc.Routes))
			}
			ls := map[string]xdsclient.Listener{}
			for _, l := range pc.Listeners {
				ls[l.Name] = l
			}
			rs := map[string]xdsclient.Route{}
			for _, r := range pc.Routes {
				rs[r.Name] = r
			}
			want := []struct {
				name, addr string
				port       uint32
				dir        string
				chains     int
				routes     []string
			}{
				{"virtualOutbound", "0.0.0.0", 15001, "OUTBOUND", 2, nil},
				{"virtualInbound", "0.0.0.0", 15006, "INBOUND", 6, nil},
				{"0.0.0.0_5000", "0.0.0.0", 5000, "OUTBOUND", 1, []string{"5000"}},
				{"0.0.0.0_9080", "0.0.0.0", 9080, "OUTBOUND", 1, []string{"9080"}},
				// the east-west gateway's ports, at its cluster1 ClusterIP:
				// tls is TCP, status-port is sniffed with a route of its own.
				{"10.96.0.10_15443", "10.96.0.10", 15443, "OUTBOUND", 1, nil},
				{"10.96.0.10_15021", "10.96.0.10", 15021, "OUTBOUND", 1, []string{"istio-eastwestgateway.istio-system.svc.cluster.local:15021"}},
			}
			for _, w := range want {
				l, ok := ls[w.name]
				if !ok {
					t.Errorf("no listener %s in %d listeners", w.name, len(ls))
					continue
				}
				if l.Address != w.addr || l.Port != w.port || l.Direction != w.dir || l.FilterChains != w.chains || !slices.Equal(l.Routes, w.routes) {
					t.Errorf("listener %s = %+v, want %s:%d %s, %d chains, routes %v", w.name, l, w.addr, w.port, w.dir, w.chains, w.routes)
				}
			}
			// Every route a listener names is served (what Envoy waits for).
			for _, l := range pc.Listeners {
				for _, r := range l.Routes {
					if _, ok := rs[r]; !ok {
						t.Errorf("listener %s names route %s, which was not received", l.Name, r)
					}
				}
			}
			r5000 := rs["5000"]
			var hosts []string
			for _, vh := range r5000.VirtualHosts {
				hosts = append(hosts, vh.Name)
			}
			if w := []string{"emailservice.shop.svc.cluster.local:5000", helloHost + ":5000", "allow_any"}; !slices.Equal(hosts, w) {
				t.Errorf("route 5000 virtual hosts = %v, want %v", hosts, w)
			}
			for _, vh := range r5000.VirtualHosts {
				if vh.Name != helloHost+":5000" {
					continue
				}
				// The viewpoint is in namespace default: no bare "helloworld".
				w := []string{helloHost, helloHost + ".", "helloworld.sample", "helloworld.sample.svc", "10.96.0.11"}
				if !slices.Equal(vh.Domains, w) || vh.Routes != 1 {
					t.Errorf("helloworld virtual host = %+v, want domains %v and one route", vh, w)
				}
			}
		})
	}
}

// proxyConfig runs a client for vp the way the TUI's `:pc` does and returns
// what the TUI would show, once listeners and all their routes are in.
func proxyConfig(t *testing.T, ctx context.Context, d *Demo, mode xdsclient.Mode, vp xdsclient.Viewpoint) tui.ProxyConfig {
	t.Helper()
	var mu sync.Mutex
	var nacks []string
	c, err := xdsclient.New(xdsclient.Options{
		Viewpoint: vp, Mode: mode,
		Transport: xdsclient.TransportConfig{Address: d.XDSAddress},
		OnEvent: func(e xdsclient.Event) {
			if e.Type == xdsclient.EventNACK {
				mu.Lock()
				nacks = append(nacks, e.Message)
				mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = c.Run(cctx) }()
	watching := false
	for ctx.Err() == nil {
		mu.Lock()
		if len(nacks) > 0 {
			t.Fatalf("the client NACKed the demo: %v", nacks)
		}
		mu.Unlock()
		pc := tui.ProxyConfig{Clusters: c.Clusters(), Listeners: c.Listeners(), Routes: c.Routes()}
		if !watching && len(pc.Clusters) > 0 {
			if err := c.WatchListeners(); err != nil {
				t.Fatal(err)
			}
			watching = true
		}
		if len(pc.Listeners) > 0 && allRoutes(pc) {
			return pc
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no listeners and routes from the demo for %s (%s)", vp, mode)
	return tui.ProxyConfig{}
}

func allRoutes(pc tui.ProxyConfig) bool {
	have := map[string]bool{}
	for _, r := range pc.Routes {
		have[r.Name] = true
	}
	for _, l := range pc.Listeners {
		for _, r := range l.Routes {
			if !have[r] {
				return false
			}
		}
	}
	return true
}

// TestDemoListenersDeterministic: two demos from the same seed give a proxy
// the same LDS and RDS, and the snapshot is consistent (every route the
// listeners name exists, and no other).
func TestDemoListenersDeterministic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v := view{proxy: horizon.Proxy{Cluster: "cluster2", Network: "network2", IP: "10.144.0.99"}, dnsDomain: "sample.svc.cluster.local"}
	var got [2]map[resource.Type][]types.Resource
	for i := range got {
		d := start(t, false)
		snap, err := d.Registry.WaitSettled(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = resources(snap, horizon.NewIndex(snap), v)
		cs, err := cachev3.NewSnapshot("1", got[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.Consistent(); err != nil {
			t.Errorf("demo %d: inconsistent snapshot: %v", i, err)
		}
	}
	for _, typ := range []resource.Type{resource.ListenerType, resource.RouteType} {
		a, b := got[0][typ], got[1][typ]
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%s: %d and %d resources", typ, len(a), len(b))
		}
		for i := range a {
			if !proto.Equal(a[i], b[i]) {
				t.Errorf("%s #%d differs between two demos with the same seed", typ, i)
			}
		}
	}
	// From namespace sample, helloworld also answers to its bare name, at
	// its cluster2 ClusterIP.
	for _, r := range got[0][resource.RouteType] {
		rc := r.(*routev3.RouteConfiguration)
		if rc.GetName() != "5000" {
			continue
		}
		for _, vh := range rc.GetVirtualHosts() {
			if vh.GetName() == helloHost+":5000" {
				w := []string{helloHost, helloHost + ".", "helloworld", "helloworld.sample.svc", "helloworld.sample", "10.97.0.11"}
				if !slices.Equal(vh.GetDomains(), w) {
					t.Errorf("helloworld domains from sample = %v, want %v", vh.GetDomains(), w)
				}
				return
			}
		}
	}
	t.Error("no helloworld virtual host in route 5000")
}

// TestListenerShapes checks istiod's rules on a small mesh: HTTP ports
// share 0.0.0.0_<port> and one route; TCP listens on the VIP; TLS without
// a VIP is told apart by SNI; a sniffed port gets its own route; UDP gets
// nothing.
func TestListenerShapes(t *testing.T) {
	svc := func(host, ip string, ports ...model.ServicePort) *model.Service {
		name, rest, _ := strings.Cut(host, ".")
		ns, _, _ := strings.Cut(rest, ".")
		return &model.Service{Hostname: host, Namespace: ns, Name: name, Ports: ports,
			Clusters: map[string]*model.ServiceInCluster{"c1": {Cluster: "c1", ClusterIP: ip}}}
	}
	port := func(name string, p int32) model.ServicePort {
		return model.ServicePort{Name: name, Port: p, Protocol: "TCP"}
	}
	snap := &model.Snapshot{Services: []*model.Service{
		svc("a.x.svc.cluster.local", "10.0.0.1", port("http", 80), port("tcp-db", 5432)),
		svc("b.y.svc.cluster.local", "10.0.0.2", port("http-web", 80), port("web", 8000)),
		svc("c.y.svc.cluster.local", "", port("tls", 443), model.ServicePort{Name: "dns", Port: 53, Protocol: "UDP"}),
		svc("d.y.svc.cluster.local", "None", port("grpc", 9000), model.ServicePort{Name: "x", Port: 9001, AppProtocol: "kubernetes.io/h2c"}),
	}}
	lds, rds := listenersAndRoutes(snap, view{proxy: horizon.Proxy{Cluster: "c1"}, dnsDomain: "x.svc.cluster.local"})
	ls := map[string]*listenerv3.Listener{}
	var names []string
	for _, r := range lds {
		l := r.(*listenerv3.Listener)
		ls[l.GetName()] = l
		names = append(names, l.GetName())
	}
	wantNames := []string{"0.0.0.0_443", "0.0.0.0_80", "0.0.0.0_9000", "0.0.0.0_9001", "10.0.0.1_5432", "10.0.0.2_8000", "virtualInbound", "virtualOutbound"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("listeners = %v, want %v", names, wantNames)
	}
	routesOf := func(l *listenerv3.Listener) []string {
		var out []string
		for _, fc := range append(slices.Clone(l.GetFilterChains()), l.GetDefaultFilterChain()) {
			for _, f := range fc.GetFilters() {
				var m hcmv3.HttpConnectionManager
				if f.GetTypedConfig().UnmarshalTo(&m) == nil {
					out = append(out, m.GetRds().GetRouteConfigName())
				}
			}
		}
		return out
	}
	tcpTarget := func(fc *listenerv3.FilterChain) string {
		var tp tcpproxyv3.TcpProxy
		if len(fc.GetFilters()) != 1 || fc.GetFilters()[0].GetTypedConfig().UnmarshalTo(&tp) != nil {
			return ""
		}
		return tp.GetCluster()
	}
	// HTTP: one ALPN-matched chain to route "80", passthrough otherwise.
	l80 := ls["0.0.0.0_80"]
	if r := routesOf(l80); !slices.Equal(r, []string{"80"}) || len(l80.GetFilterChains()) != 1 ||
		!slices.Equal(l80.GetFilterChains()[0].GetFilterChainMatch().GetApplicationProtocols(), []string{"http/1.1", "h2c"}) ||
		tcpTarget(l80.GetDefaultFilterChain()) != "PassthroughCluster" || l80.GetBindToPort().GetValue() {
		t.Errorf("0.0.0.0_80 = %v", l80)
	}
	// TCP on the VIP: one match-all chain to the service's cluster.
	if l := ls["10.0.0.1_5432"]; len(l.GetFilterChains()) != 1 || tcpTarget(l.GetFilterChains()[0]) != "outbound|5432||a.x.svc.cluster.local" || l.GetDefaultFilterChain() != nil {
		t.Errorf("10.0.0.1_5432 = %v", l)
	}
	// TLS without a VIP: matched by SNI, TLS inspector on.
	if l := ls["0.0.0.0_443"]; !slices.Equal(l.GetFilterChains()[0].GetFilterChainMatch().GetServerNames(), []string{"c.y.svc.cluster.local"}) ||
		len(l.GetListenerFilters()) != 1 || l.GetListenerFilters()[0].GetName() != "envoy.filters.listener.tls_inspector" {
		t.Errorf("0.0.0.0_443 = %v", l)
	}
	// Sniffed on a VIP: TCP by default, HTTP to a route of its own.
	l8000 := ls["10.0.0.2_8000"]
	if r := routesOf(l8000); !slices.Equal(r, []string{"b.y.svc.cluster.local:8000"}) || tcpTarget(l8000.GetDefaultFilterChain()) != "outbound|8000||b.y.svc.cluster.local" {
		t.Errorf("10.0.0.2_8000 = %v", l8000)
	}

	rs := map[string]*routev3.RouteConfiguration{}
	var rnames []string
	for _, r := range rds {
		rc := r.(*routev3.RouteConfiguration)
		rs[rc.GetName()] = rc
		rnames = append(rnames, rc.GetName())
	}
	if w := []string{"80", "9000", "9001", "b.y.svc.cluster.local:8000"}; !slices.Equal(rnames, w) {
		t.Fatalf("routes = %v, want %v", rnames, w)
	}
	vhosts := func(rc *routev3.RouteConfiguration) map[string][]string {
		out := map[string][]string{}
		for _, vh := range rc.GetVirtualHosts() {
			out[vh.GetName()] = vh.GetDomains()
		}
		return out
	}
	v80 := vhosts(rs["80"])
	if len(v80) != 3 || v80["allow_any"] == nil ||
		!slices.Equal(v80["a.x.svc.cluster.local:80"], []string{"a.x.svc.cluster.local", "a.x.svc.cluster.local.", "a", "a.x.svc", "a.x", "10.0.0.1"}) ||
		!slices.Equal(v80["b.y.svc.cluster.local:80"], []string{"b.y.svc.cluster.local", "b.y.svc.cluster.local.", "b.y", "b.y.svc", "10.0.0.2"}) {
		t.Errorf("route 80 = %v", v80)
	}
	if rs["80"].GetVirtualHosts()[2].GetName() != "allow_any" {
		t.Errorf("route 80 does not end with the catch-all: %v", vhosts(rs["80"]))
	}
	// A headless service's hosts carry no VIP.
	if got := vhosts(rs["9000"])["d.y.svc.cluster.local:9000"]; !slices.Equal(got, []string{"d.y.svc.cluster.local", "d.y.svc.cluster.local.", "d.y", "d.y.svc"}) {
		t.Errorf("route 9000 = %v", vhosts(rs["9000"]))
	}
	sniffed := rs["b.y.svc.cluster.local:8000"].GetVirtualHosts()
	if len(sniffed) != 1 || sniffed[0].GetName() != "b.y.svc.cluster.local:8000" || !slices.Equal(sniffed[0].GetDomains(), []string{"*"}) {
		t.Errorf("sniffed route = %v", sniffed)
	}
	act := sniffed[0].GetRoutes()[0].GetRoute()
	if act.GetCluster() != "outbound|8000||b.y.svc.cluster.local" || act.GetRetryPolicy().GetNumRetries().GetValue() != 2 {
		t.Errorf("sniffed route action = %v", act)
	}
}
