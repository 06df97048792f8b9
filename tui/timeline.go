package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// entry is one row of the timeline: an xDS event (a push or a stream
// state) or a kube change meshscope saw between two snapshots — exactly one
// of xds and kube is set.
type entry struct {
	xds  *xdsclient.Event
	kube *model.KubeChange
	// eps counts the endpoint changes of an xDS push by kind; once the
	// entry is kept (compact), xds.Endpoints holds only the first few.
	eps epCounts
	// kept: compact has made this the timeline's own copy.
	kept bool
	// id numbers the entries in arrival order (set by the events view): the
	// key the cursor follows.
	id uint64
}

// epCounts counts a push's endpoint changes by kind.
type epCounts struct{ added, removed, changed, weight, total int }

// maxKeptEndpoints bounds the endpoint changes the timeline keeps of one
// push: the detail pane shows no more (detailHeight), and a proxy's first
// push lists every endpoint of the mesh it sees (tens of thousands). Kept
// whole, the timeline would hold a second copy of every endpoint per
// viewpoint.
const maxKeptEndpoints = 8

// compact is the entry as the timeline keeps it: for an xDS event, a copy
// with at most maxKeptEndpoints endpoint changes (eps counts them all) and
// every string cloned, so that an old entry pins none of the push buffers
// the client decoded in place (nor the batch the event came in).
func (e entry) compact() entry {
	if e.xds == nil || e.kept {
		return e
	}
	e.kept = true
	x := *e.xds
	e.eps = countChanges(x.Endpoints)
	x.Added, x.Removed, x.Changed = cloneAll(x.Added), cloneAll(x.Removed), cloneAll(x.Changed)
	kept := x.Endpoints[:min(len(x.Endpoints), maxKeptEndpoints)]
	x.Endpoints = nil
	if len(kept) > 0 {
		x.Endpoints = make([]xdsclient.EndpointChange, len(kept))
		for i, c := range kept {
			c.Cluster, c.Address, c.Health, c.TLSMode = strings.Clone(c.Cluster), strings.Clone(c.Address), strings.Clone(c.Health), strings.Clone(c.TLSMode)
			c.WorkloadCluster, c.Workload = strings.Clone(c.WorkloadCluster), strings.Clone(c.Workload)
			x.Endpoints[i] = c
		}
	}
	e.xds = &x
	return e
}

func countChanges(cs []xdsclient.EndpointChange) epCounts {
	n := epCounts{total: len(cs)}
	for _, c := range cs {
		switch c.Change {
		case xdsclient.EndpointAdded:
			n.added++
		case xdsclient.EndpointRemoved:
			n.removed++
		case xdsclient.EndpointChanged:
			n.changed++
		case xdsclient.EndpointWeight:
			n.weight++
		}
	}
	return n
}

func cloneAll(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.Clone(s)
	}
	return out
}

// kubeEntries are the timeline entries of kube changes.
func kubeEntries(cs []model.KubeChange) []entry {
	out := make([]entry, len(cs))
	for i := range cs {
		out[i] = entry{kube: &cs[i]}
	}
	return out
}

func (e entry) time() time.Time {
	if e.kube != nil {
		return e.kube.Time
	}
	return e.xds.Time
}

// kind is the TYPE column: the xDS event type, "kube", or "dns" for a
// gateway DNS name's new answer.
func (e entry) kind() string {
	if e.kube != nil {
		if e.kube.IsDNS() {
			return "dns"
		}
		return "kube"
	}
	return string(e.xds.Type)
}

// source is where the entry comes from: the control plane that pushed, or
// the cluster that changed.
func (e entry) source() string {
	if e.kube != nil {
		return e.kube.Cluster
	}
	return e.xds.ControlPlane
}

// isEDS reports whether the entry is an EDS push.
func (e entry) isEDS() bool {
	return e.xds != nil && xdsclient.Type(e.xds.Type) == xdsclient.EDS
}

// isWDS reports whether the entry is a ztunnel's WDS push (ambient mode).
func (e entry) isWDS() bool {
	return e.xds != nil && xdsclient.Type(e.xds.Type) == xdsclient.WDS
}

// subject is what a kube change concerns for linking pushes to it: the
// service's hostname, or "gateway" (a gateway change concerns every
// service).
func (e entry) subject() string {
	if e.kube.IsDNS() {
		return "dns " + e.kube.GatewayName
	}
	if e.kube.Service == "" {
		return "gateway"
	}
	return e.kube.Service
}

// haystack is the text the events filter searches: the type, viewpoint,
// control plane or cluster, and the services or gateway concerned.
func (e entry) haystack() string {
	if k := e.kube; k != nil {
		return strings.ToLower(e.kind() + " " + k.Cluster + " " + k.Service + " " + k.Gateway + " " + k.GatewayName)
	}
	x := e.xds
	return strings.ToLower(string(x.Type) + " " + x.Viewpoint + " " + x.ControlPlane + " " + strings.Join(x.Changed, " ") + " " +
		strings.Join(x.Added, " ") + " " + strings.Join(x.Removed, " "))
}

// causeWindow bounds how long before a push a kube change may have caused it
// (istiod debounces for up to 10 s; 30 s leaves room for slow watches).
const causeWindow = 30 * time.Second

// edsHosts are the service hostnames an EDS event is about (from the
// outbound|PORT||HOST names it added, changed or removed, or whose
// endpoints changed), or a WDS event (the services changed, and those the
// workloads changed back).
func edsHosts(e *xdsclient.Event) []string {
	if xdsclient.Type(e.Type) == xdsclient.WDS {
		return wdsHosts(e)
	}
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if i := strings.LastIndex(name, "|"); i >= 0 {
			name = name[i+1:]
		}
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, n := range e.Changed {
		add(n)
	}
	for _, n := range e.Added {
		add(n)
	}
	for _, n := range e.Removed {
		add(n)
	}
	for _, c := range e.Endpoints {
		add(c.Cluster)
	}
	return out
}

func wdsHosts(e *xdsclient.Event) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range e.Addresses {
		for _, h := range a.Hostnames() {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	return out
}

// cause links an EDS (or WDS) push to the latest kube change of one of its
// services (or of a gateway), or gateway DNS name's new answer at whose
// addresses it changes an endpoint (dnsCaused), within causeWindow before
// it, with the delay. lastKube holds the latest change per subject,
// lastDNS the latest answer per name.
func cause(e *xdsclient.Event, lastKube, lastDNS map[string]*model.KubeChange) (*model.KubeChange, time.Duration, bool) {
	var best *model.KubeChange
	consider := func(k *model.KubeChange) {
		d := e.Time.Sub(k.Time)
		// A little negative slack: meshscope may publish its snapshot a few
		// milliseconds after istiod already pushed.
		if d < -time.Second || d > causeWindow {
			return
		}
		if best == nil || k.Time.After(best.Time) {
			best = k
		}
	}
	for _, h := range edsHosts(e) {
		if k, ok := lastKube[h]; ok {
			consider(k)
		}
	}
	if k, ok := lastKube["gateway"]; ok {
		consider(k)
	}
	for _, k := range lastDNS {
		if dnsCaused(e, k) {
			consider(k)
		}
	}
	if best == nil {
		return nil, 0, false
	}
	return best, e.Time.Sub(best.Time), true
}

func causeText(k *model.KubeChange, d time.Duration) string {
	return fmt.Sprintf("← %s %+dms", k.Source(), d.Milliseconds())
}

// dnsLookback bounds how long before meshscope saw a gateway DNS name's new
// answer istiod may have pushed it: each asks again when its own cached
// answer runs out (at least 30 s, istiod-rules.md G7), so istiod can be up
// to a TTL ahead.
const dnsLookback = time.Minute

// dnsCaused reports whether an EDS push is one a gateway DNS name's new
// answer k causes: it adds a gateway entry at an address the name gives
// now and did not before, or removes one at an address it gave before and
// does not now. (A stream's first push adds every endpoint, the old
// addresses too: not caused by the new answer.)
func dnsCaused(e *xdsclient.Event, k *model.KubeChange) bool {
	if xdsclient.Type(e.Type) != xdsclient.EDS {
		return false
	}
	for _, c := range e.Endpoints {
		now, before := slices.Contains(k.GatewayAddresses, c.Address), slices.Contains(k.GatewayPrevious, c.Address)
		if c.Change == xdsclient.EndpointAdded && now && !before || c.Change == xdsclient.EndpointRemoved && before && !now {
			return true
		}
	}
	return false
}

// changesText summarizes what an entry changed: endpoint changes of an
// EDS push, resources added/removed/changed, the sentence of a state
// event, or the kube change.
func changesText(en entry) string {
	if k := en.kube; k != nil && k.IsDNS() {
		// TYPE says dns: the name and its answer, which must fit.
		return k.GatewayName + ": " + k.AnswerText()
	}
	if en.kube != nil {
		return en.kube.Summary()
	}
	e := en.xds
	if e.Error != "" {
		return e.Error
	}
	var parts []string
	if len(e.Endpoints) > 0 {
		n := en.eps
		if !en.kept {
			n = countChanges(e.Endpoints)
		}
		parts = append(parts, fmt.Sprintf("endpoints +%d -%d ~%d w%d", n.added, n.removed, n.changed, n.weight))
		c := e.Endpoints[0]
		parts = append(parts, fmt.Sprintf("%s %s:%d", c.Change, c.Address, c.Port))
	}
	if len(e.Addresses) > 0 {
		parts = append(parts, wdsText(e))
	} else if len(e.Added)+len(e.Removed)+len(e.Changed) > 0 {
		parts = append(parts, fmt.Sprintf("res +%d -%d ~%d", len(e.Added), len(e.Removed), len(e.Changed)))
	}
	if len(parts) == 0 && e.Message != "" {
		return e.Message
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " · ")
}

// wdsText summarizes a WDS push: workloads and services added, removed and
// changed, and the first change.
func wdsText(e *xdsclient.Event) string {
	counts := map[string]int{}
	for _, a := range e.Addresses {
		counts[a.Kind+" "+a.Change]++
	}
	var parts []string
	for _, kind := range []string{"workload", "service"} {
		a, r, c := counts[kind+" "+xdsclient.AddressAdded], counts[kind+" "+xdsclient.AddressRemoved], counts[kind+" "+xdsclient.AddressChanged]
		if a+r+c > 0 {
			parts = append(parts, fmt.Sprintf("%ss +%d -%d ~%d", kind, a, r, c))
		}
	}
	first := e.Addresses[0]
	return strings.Join(parts, " ") + " · " + first.Change + " " + first.Name
}
