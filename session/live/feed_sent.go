package live

import (
	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// What the feed's streams hold, in the shapes explain reads: doctor's
// comparison of what each control plane sends (explain.Sent) and the CDS
// cluster whose load balancing decides the shares (tui.SentFeed).

// Sent is what every live stream holds, one entry per viewpoint, as doctor
// collects it: the EDS of every cluster its CDS names. A stream that is
// connected and current gives everything it holds; a stream that is down
// after having been up, or that could not start, gives only why (doctor
// says it cannot compare); a stream still connecting to its first answer
// is left out. Its control plane is named by cluster ID: a control plane
// given by address only is the first context's istiod, as doctor takes it.
func (f *Feed) Sent() []explain.Sent {
	type stream struct {
		vp     xdsclient.Viewpoint
		c      *xdsclient.Client
		cp     string
		failed string
	}
	f.mu.Lock()
	streams := make([]stream, len(f.order))
	for i, vp := range f.order {
		k := vp.String()
		streams[i] = stream{vp: vp, c: f.clients[k], cp: f.cps[k], failed: f.failed[k].why}
	}
	f.mu.Unlock()
	snap := f.s.reg.Snapshot()
	var out []explain.Sent
	for _, s := range streams {
		cp := s.cp
		if cp == "" {
			cp = s.vp.ControlPlane
		}
		sent := explain.Sent{ControlPlane: clusterIDOf(snap, cp), Viewpoint: s.vp}
		if s.c == nil {
			if s.failed == "" {
				continue
			}
			sent.Error = "no stream: " + s.failed
			out = append(out, sent)
			continue
		}
		st := s.c.Status()
		switch {
		case st.State == xdsclient.StateConnected && !st.Stale:
		case st.LastResponse.IsZero():
			continue // still starting: nothing to say yet
		default:
			sent.Error = "stream " + string(st.State) + ": " + st.Message
			out = append(out, sent)
			continue
		}
		for _, cl := range s.c.Clusters() {
			if cl.Type == "EDS" {
				sent.Clusters = append(sent.Clusters, cl.EDSName())
			}
		}
		las := s.c.LoadAssignments()
		sent.EDS = make(map[string]xdsclient.LoadAssignment, len(las))
		for _, la := range las {
			sent.EDS[la.Cluster] = la
		}
		out = append(out, sent)
	}
	return out
}

// Cluster is the CDS cluster a viewpoint last got under a name (an EDS
// cluster name: istiod names an outbound cluster and its EDS alike).
func (f *Feed) Cluster(viewpoint, name string) (*xdsclient.Cluster, bool) {
	c, _ := f.client(viewpoint)
	if c == nil {
		return nil, false
	}
	cl, ok := c.Cluster(name)
	if !ok {
		return nil, false
	}
	return &cl, true
}

// clusterIDOf names a control plane by the ID of the cluster it is primary
// of: cp itself when it is one, else (an address given without a cluster)
// the first context cluster.
func clusterIDOf(snap *model.Snapshot, cp string) string {
	if snap == nil || snap.ClusterByID(model.ControlPlaneCluster(cp)) != nil {
		return cp
	}
	for i := range snap.Clusters {
		if snap.Clusters[i].IsContext() {
			return snap.Clusters[i].ID
		}
	}
	return cp
}
