package tui

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/xdsclient"
)

// ProxyConfig is what one impersonated proxy holds besides EDS, like
// istioctl proxy-config clusters / listeners / routes.
type ProxyConfig = xdsclient.ProxyConfig

// ConfigFeed is the optional part of a Feed that serves proxy config.
// WatchListeners turns on LDS (and RDS) for a viewpoint: they are not
// subscribed until someone looks, as istioctl fetches them on demand.
type ConfigFeed interface {
	Config(viewpoint string) (ProxyConfig, bool)
	WatchListeners(viewpoint string)
}

// configView (":pc A" or ":pc A B") shows a viewpoint's CDS, LDS and RDS,
// or, with two viewpoints, only what differs between them.
type configView struct {
	a, b  string
	top   int
	lines []string
	// stale: the config may have changed since lines were drawn (a push,
	// a new snapshot, a new theme); they are drawn again when shown.
	stale bool
}

func (v *configView) title(viewContext) string {
	if v.b != "" {
		return fmt.Sprintf("Proxy config %s ↔ %s (differences)", v.a, v.b)
	}
	return "Proxy config " + v.a
}

// refresh marks the lines stale on a CDS, LDS or RDS push (:pc subscribes
// LDS and RDS when it opens, so they arrive after it), a new snapshot, a
// new size or theme; EDS pushes do not change what it shows.
func (v *configView) refresh(_ viewContext, u update) {
	if u.index || u.config || len(u.entries) == 0 {
		v.stale = true
	}
}

// compute draws the lines again when they are stale.
func (v *configView) compute(vc viewContext) {
	if !v.stale || v.a == "" {
		return
	}
	v.stale = false
	cf, ok := vc.feed.(ConfigFeed)
	if !ok {
		v.lines = []string{vc.st.Muted.Render("no proxy config from this feed")}
		return
	}
	ca, okA := cf.Config(v.a)
	if v.b == "" {
		switch {
		case !okA:
			v.lines = []string{vc.st.Muted.Render("no config received from " + v.a + " yet")}
		case strings.HasPrefix(v.a, "gateway@"):
			v.lines = renderGatewayConfig(vc, v.a, ca)
		default:
			v.lines = renderConfig(vc, ca)
		}
		return
	}
	cb, okB := cf.Config(v.b)
	if !okA || !okB {
		v.lines = []string{vc.st.Muted.Render("waiting for both viewpoints' config")}
		return
	}
	v.lines = renderConfigDiff(vc, v.a, v.b, ca, cb)
}

func renderConfig(vc viewContext, c ProxyConfig) []string {
	var out []string
	out = append(out, vc.st.Header.Render(fmt.Sprintf("CLUSTERS (%d)", len(c.Clusters))))
	for _, cl := range c.Clusters {
		out = append(out, fmt.Sprintf(" %-70s %-12s %s", cl.Name, cl.Type, vc.st.Muted.Render("tls "+cl.TLSMode)))
	}
	out = append(out, "", vc.st.Header.Render(fmt.Sprintf("LISTENERS (%d)", len(c.Listeners))))
	for _, l := range c.Listeners {
		out = append(out, fmt.Sprintf(" %-40s %s:%d %-9s chains %d %s", l.Name, l.Address, l.Port, l.Direction, l.FilterChains,
			vc.st.Muted.Render(strings.Join(l.Routes, ","))))
	}
	out = append(out, "", vc.st.Header.Render(fmt.Sprintf("ROUTES (%d)", len(c.Routes))))
	for _, r := range c.Routes {
		var hosts []string
		for _, vh := range r.VirtualHosts {
			hosts = append(hosts, vh.Name)
		}
		out = append(out, fmt.Sprintf(" %-30s %d virtual hosts %s", r.Name, len(r.VirtualHosts), vc.st.Muted.Render(strings.Join(hosts[:min(len(hosts), 4)], ", "))))
	}
	return out
}

// renderConfigDiff lists what only one viewpoint has, and what both have
// but differently (cluster type or TLS; listener port or chains; route
// virtual hosts).
func renderConfigDiff(vc viewContext, a, b string, ca, cb ProxyConfig) []string {
	var out []string
	section := func(title string, ka, kb map[string]string) {
		var onlyA, onlyB, differ []string
		for k, va := range ka {
			vb, ok := kb[k]
			switch {
			case !ok:
				onlyA = append(onlyA, k)
			case va != vb:
				differ = append(differ, fmt.Sprintf("%s: %s ↔ %s", k, va, vb))
			}
		}
		for k := range kb {
			if _, ok := ka[k]; !ok {
				onlyB = append(onlyB, k)
			}
		}
		sort.Strings(onlyA)
		sort.Strings(onlyB)
		sort.Strings(differ)
		out = append(out, vc.st.Header.Render(fmt.Sprintf("%s — only %s %d · only %s %d · different %d", title, a, len(onlyA), b, len(onlyB), len(differ))))
		for _, k := range onlyA {
			out = append(out, " "+vc.st.Warn.Render("< "+k))
		}
		for _, k := range onlyB {
			out = append(out, " "+vc.st.Warn.Render("> "+k))
		}
		for _, d := range differ {
			out = append(out, " "+vc.st.Error.Render("≠ "+d))
		}
		out = append(out, "")
	}
	clusters := func(c ProxyConfig) map[string]string {
		r := map[string]string{}
		for _, cl := range c.Clusters {
			r[cl.Name] = cl.Type + " tls " + cl.TLSMode
		}
		return r
	}
	listeners := func(c ProxyConfig) map[string]string {
		r := map[string]string{}
		for _, l := range c.Listeners {
			r[l.Name] = fmt.Sprintf("%s:%d chains %d", l.Address, l.Port, l.FilterChains)
		}
		return r
	}
	routes := func(c ProxyConfig) map[string]string {
		r := map[string]string{}
		for _, rt := range c.Routes {
			var hosts []string
			for _, vh := range rt.VirtualHosts {
				hosts = append(hosts, vh.Name)
			}
			sort.Strings(hosts)
			r[rt.Name] = fmt.Sprintf("%d vhosts %s", len(hosts), strings.Join(hosts, ","))
		}
		return r
	}
	section("CLUSTERS", clusters(ca), clusters(cb))
	section("LISTENERS", listeners(ca), listeners(cb))
	section("ROUTES", routes(ca), routes(cb))
	return out
}

func (v *configView) key(vc viewContext, k tea.KeyPressMsg) (tea.Cmd, bool) {
	d, ok := scrollDelta(vc.keys, k, vc.height)
	if ok {
		v.scroll(vc, d)
	}
	return nil, ok
}

func (v *configView) scroll(vc viewContext, d int) {
	v.compute(vc)
	v.top = min(max(v.top+d, 0), max(len(v.lines)-vc.height, 0))
}

func (v *configView) render(vc viewContext, w, h int) string {
	v.compute(vc)
	var lines []string
	for i := v.top; i < len(v.lines) && len(lines) < h; i++ {
		lines = append(lines, fit(v.lines[i], w))
	}
	return padLines(lines, w, h)
}
