package main

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/xdsclient"
)

// TestFeedTwoControlPlanes: with two control planes (here both served by
// the demo's control plane under two names), the UI's feed runs one stream
// per network viewpoint per control plane, each named VIEWPOINT@CP, each
// with its own EDS.
func TestFeedTwoControlPlanes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	g := &globalOptions{Demo: true}
	m, err := openMesh(ctx, g, &meshOptions{seed: 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	addr := m.Demo.XDSAddress
	m.ControlPlanes = []XDSTarget{{Cluster: "cluster1", Address: addr}, {Cluster: "cluster2", Address: addr}}
	f := startFeed(ctx, m, xdsclient.ModeDelta)
	defer f.close()
	const eds = "outbound|5000||helloworld.sample.svc.cluster.local"
	for {
		var names []string
		got := 0
		for _, vp := range f.Viewpoints() {
			names = append(names, vp.String())
			if la, _, ok := f.Actual(vp.String(), eds); ok && len(la.Endpoints) > 0 {
				got++
			}
		}
		sort.Strings(names)
		if got == 4 {
			want := "cluster1/network1@cluster1,cluster1/network1@cluster2,cluster2/network2@cluster1,cluster2/network2@cluster2"
			if strings.Join(names, ",") != want {
				t.Fatalf("viewpoints %v, want %s", names, want)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of 4 streams have helloworld's EDS; viewpoints %v, status %+v", got, names, f.Status())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
