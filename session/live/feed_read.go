package live

import (
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/xdsclient"
)

// Snapshots delivers collector snapshots, latest wins.
func (f *Feed) Snapshots() <-chan *model.Snapshot { return f.snaps }

// Events delivers every stream's xDS events, bounded: when the reader
// falls behind, new events are dropped.
func (f *Feed) Events() <-chan xdsclient.Event { return f.events }

// client is the stream of a viewpoint and its control plane (nil if none).
func (f *Feed) client(viewpoint string) (*xdsclient.Client, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clients[viewpoint], f.cps[viewpoint]
}

// Actual is the EDS a viewpoint (xdsclient.Viewpoint.String()) last got
// for an EDS cluster name, and the control plane that sent it.
func (f *Feed) Actual(viewpoint, edsCluster string) (*xdsclient.LoadAssignment, string, bool) {
	c, cp := f.client(viewpoint)
	if c == nil {
		return nil, "", false
	}
	la, ok := c.LoadAssignment(edsCluster)
	if !ok {
		return nil, cp, false
	}
	return &la, cp, true
}

// Viewpoints are the viewpoints the feed has streams for, or tried to
// start one for, in the order they appeared.
func (f *Feed) Viewpoints() []xdsclient.Viewpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]xdsclient.Viewpoint(nil), f.order...)
}

// Status is the stream state of every viewpoint, in Viewpoints' order,
// then of every ztunnel (named "ztunnel@CONTROLPLANE"), in Ztunnels' order.
func (f *Feed) Status() []xdsclient.StreamStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]xdsclient.StreamStatus, 0, len(f.order))
	for _, vp := range f.order {
		k := vp.String()
		if c := f.clients[k]; c != nil {
			st := c.Status()
			out = append(out, xdsclient.StreamStatus{Viewpoint: k, ControlPlane: f.cps[k], State: st.State, Stale: st.Stale, LastPush: st.LastResponse,
				Progress: c.Progress()})
			continue
		}
		out = append(out, xdsclient.StreamStatus{Viewpoint: k, State: xdsclient.StateNoStream, Reason: f.failed[k].why, Stale: true})
	}
	return append(out, f.ztunnelStatus()...)
}

// Config is the CDS, LDS and RDS a viewpoint holds; false until its CDS
// has arrived.
func (f *Feed) Config(viewpoint string) (xdsclient.ProxyConfig, bool) {
	c, _ := f.client(viewpoint)
	if c == nil {
		return xdsclient.ProxyConfig{}, false
	}
	pc := c.Config()
	return pc, len(pc.Clusters) > 0
}

// WatchListeners subscribes LDS and RDS for a viewpoint, on demand; for a
// gateway name (GatewayNames) it starts that gateway's stream.
func (f *Feed) WatchListeners(viewpoint string) {
	if f.watchGateway(viewpoint) {
		return
	}
	c, _ := f.client(viewpoint)
	if c != nil {
		_ = c.WatchListeners()
	}
}

// Istiod is istiod's last polled view of each control plane it could be
// read from.
func (f *Feed) Istiod() []istiod.View {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.istiod
}

// SharedEDS says how much the streams shared: EDS resources one stream
// took already decoded from another (hits), decoded (misses), and the
// distinct resources held now.
func (f *Feed) SharedEDS() xdsclient.SharedStats { return f.shared.Stats() }
