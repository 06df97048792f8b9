package tui

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/xdsclient"
)

// EventKube is the Type of a timeline entry for a change meshscope saw in a
// cluster (collector.KubeChange), shown beside the xDS pushes it causes.
const EventKube xdsclient.EventType = "kube"

var kubeSeq atomic.Uint64

// KubeEvent is the timeline entry of a kube change: the cluster stands in
// the control-plane column, the service (or gateway) in the viewpoint
// column, the summary in the changes column. The feed sends these on
// Events next to the xDS events.
func KubeEvent(c collector.KubeChange) xdsclient.Event {
	subject := c.Service
	if subject == "" {
		subject = "gateway"
	}
	return xdsclient.Event{
		Seq:  1<<62 + kubeSeq.Add(1), // apart from the xDS clients' sequence numbers
		Time: c.Time, ControlPlane: c.Cluster, Viewpoint: subject, Type: EventKube,
		Resources: len(c.Added) + len(c.Removed) + len(c.Ready) + len(c.NotReady),
		Message:   c.Summary(),
	}
}

// causeWindow bounds how long before a push a kube change may have caused it
// (istiod debounces for up to 10 s; 30 s leaves room for slow watches).
const causeWindow = 30 * time.Second

// edsHosts are the service hostnames an EDS event is about (from the
// outbound|PORT||HOST names it changed or whose endpoints changed).
func edsHosts(e xdsclient.Event) []string {
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
	for _, c := range e.Endpoints {
		add(c.Cluster)
	}
	return out
}

// cause links an EDS push to the latest kube change of one of its services
// (or of a gateway) within causeWindow before it, with the delay.
func cause(e xdsclient.Event, lastKube map[string]xdsclient.Event) (xdsclient.Event, time.Duration, bool) {
	var best xdsclient.Event
	found := false
	consider := func(k xdsclient.Event) {
		d := e.Time.Sub(k.Time)
		// A little negative slack: meshscope may publish its snapshot a few
		// milliseconds after istiod already pushed.
		if d < -time.Second || d > causeWindow {
			return
		}
		if !found || k.Time.After(best.Time) {
			best, found = k, true
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
	return best, e.Time.Sub(best.Time), found
}

func causeText(k xdsclient.Event, d time.Duration) string {
	return fmt.Sprintf("← %s %+dms", k.ControlPlane, d.Milliseconds())
}
