package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestLiveSessionOnLab: the live session from nothing but the cluster1
// context, as the UI runs it: the collector settles on both clusters, the
// feed starts one sidecar stream per network through a port-forward to the
// real istiod (found through the API server), each gets the EDS istiod
// really sends that network, and istiod's own view comes through a second
// port-forward, to its debug port.
func TestLiveSessionOnLab(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := live.Open(ctx, live.Options{Collector: collector.Options{
		Kubeconfig: theLab.Kubeconfig, Contexts: []string{"cluster1"}, SyncTimeout: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap, err := s.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := cluster(snap, "cluster2"); c.State != model.StateSynced {
		t.Fatalf("cluster2 is %s (%s)", c.State, c.Reason)
	}
	feed := s.Feed(ctx, xdsclient.ModeDelta)
	defer feed.Close()
	want := map[string]string{"cluster1/network1": seedEDSNetwork1, "cluster2/network2": seedEDSNetwork2}
	eventually(t, 60*time.Second, func() string {
		var bad []string
		for vp, eds := range want {
			la, cp, ok := feed.Actual(vp, helloworldEDS)
			if !ok {
				bad = append(bad, vp+": no EDS yet")
				continue
			}
			if got := strings.Join(edsKeys(*la), ","); got != eds || cp != "cluster1" {
				bad = append(bad, fmt.Sprintf("%s: %s from %q, want %s from cluster1", vp, got, cp, eds))
			}
		}
		if len(bad) > 0 {
			return fmt.Sprintf("%s; status %+v", strings.Join(bad, "; "), feed.Status())
		}
		return ""
	})
	for _, st := range feed.Status() {
		if st.State != xdsclient.StateConnected || st.Stale {
			t.Errorf("stream %s is %s", st.Viewpoint, st.Text())
		}
	}
	eventually(t, 30*time.Second, func() string {
		vs := feed.Istiod()
		if len(vs) != 1 || vs[0].ControlPlane != "cluster1" || len(vs[0].Clusters) != 2 {
			return fmt.Sprintf("istiod's view through the port-forward: %+v", vs)
		}
		for _, c := range vs[0].Clusters {
			if c.SyncStatus != "synced" {
				return fmt.Sprintf("istiod says %s is %s", c.ID, c.SyncStatus)
			}
		}
		return ""
	})
}

// TestLiveWatchOnLab: watch's streams without an xDS address port-forward
// to the istiod pod of the first context and deliver its pushes: here the
// EDS a cluster2/network2 sidecar gets from cluster1's istiod.
func TestLiveWatchOnLab(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var (
		mu      sync.Mutex
		got     string
		forward string
	)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	err := live.Watch(wctx, live.WatchOptions{
		Viewpoints: []xdsclient.Viewpoint{{Cluster: "cluster2", Network: "network2", NodeType: xdsclient.Sidecar}},
		Kube:       istiod.Kube{Kubeconfig: theLab.Kubeconfig, Contexts: []string{"cluster1"}},
		Transport:  xdsclient.TransportConfig{DialTimeout: 20 * time.Second},
		Mode:       xdsclient.ModeDelta, EDSNames: []string{helloworldEDS},
		OnForward: func(pod, addr string) {
			mu.Lock()
			defer mu.Unlock()
			forward = pod
		},
		OnEvent: func(ev xdsclient.Event) {
			if ev.Type != xdsclient.EventEDS || ev.ControlPlane != "cluster1" {
				return
			}
			var eps []string
			for _, e := range ev.Endpoints {
				eps = append(eps, fmt.Sprintf("%s:%d w=%d", e.Address, e.Port, e.Weight))
			}
			sort.Strings(eps)
			mu.Lock()
			defer mu.Unlock()
			got = strings.Join(eps, ",")
			if got == seedEDSNetwork2 {
				stop()
			}
		},
	})
	mu.Lock()
	defer mu.Unlock()
	if got != seedEDSNetwork2 {
		t.Fatalf("watch ended (%v) with EDS %q, want %s", err, got, seedEDSNetwork2)
	}
	if want := lab.SystemNamespace + "/" + lab.IstiodPod("cluster1"); forward != want {
		t.Errorf("forwarded to %q, want %s", forward, want)
	}
}
