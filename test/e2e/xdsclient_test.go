package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestXDSClientViews: meshscope's xdsclient, in both ADS flavours, sees what
// the real istiod sends each viewpoint.
func TestXDSClientViews(t *testing.T) {
	cases := []struct {
		vp   xdsclient.Viewpoint
		want string
	}{
		{xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}, seedEDSNetwork1},
		{xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2"}, seedEDSNetwork2},
		{xdsclient.Viewpoint{Cluster: "cluster1", NoNetwork: true}, "192.168.60.113:15443 w=1,192.168.60.9:15443 w=1"},
	}
	for _, mode := range []xdsclient.Mode{xdsclient.ModeDelta, xdsclient.ModeSotW} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s", mode, c.vp), func(t *testing.T) {
				p := startProbe(t, c.vp, mode) // follows CDS, like a sidecar
				eventually(t, 15*time.Second, func() string {
					if got := strings.Join(p.eds(helloworldEDS), ","); got != c.want {
						return fmt.Sprintf("EDS %q, want %q (status %+v)", got, c.want, p.c.Status())
					}
					return ""
				})
			})
		}
	}
}

// TestXDSClientPushAndRestart: two more helloworld pods in cluster2 reach a
// network1 proxy as one EDS push whose diff moves the gateway's weight from
// 1 to 3, within 5 s; restarting istiod shows a disconnect and a reconnect,
// then the same EDS again.
func TestXDSClientPushAndRestart(t *testing.T) {
	ctx := context.Background()
	p := startProbe(t, xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}, xdsclient.ModeDelta, helloworldEDS)
	eventually(t, 15*time.Second, func() string {
		if p.eds(helloworldEDS) == nil {
			return "no EDS yet"
		}
		return ""
	})
	mark := p.count()
	added := []string{"helloworld-v2-54df5f84b-e2ea1", "helloworld-v2-54df5f84b-e2ea2"}
	start := time.Now()
	var pods []lab.PodSpec
	for i, name := range added {
		pods = append(pods, lab.PodSpec{Namespace: lab.SampleNamespace, Name: name, IP: fmt.Sprintf("10.144.0.%d", 40+i), Labels: lab.AppLabels("helloworld", "v2", "network2")})
	}
	// Scaled up by two at once: one EndpointSlice update, one push.
	if err := theLab.AddPods(ctx, "cluster2", pods...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range added {
			_ = theLab.RemovePod(context.Background(), "cluster2", lab.SampleNamespace, name)
		}
	})
	eventually(t, 5*time.Second, func() string {
		for _, e := range p.since(mark) {
			if e.Type != "eds" {
				continue
			}
			for _, ch := range e.Endpoints {
				if ch.Address == "192.168.60.9" && ch.Port == 15443 && ch.Change == xdsclient.EndpointWeight && ch.Weight == 3 && ch.OldWeight == 1 {
					t.Logf("weight 1 -> 3 pushed %s after the scale-up began", e.Time.Sub(start).Round(time.Millisecond))
					return ""
				}
			}
		}
		return fmt.Sprintf("no EDS push with 192.168.60.9:15443 weight 1 -> 3; EDS now %v", p.eds(helloworldEDS))
	})
	for _, name := range added {
		if err := theLab.RemovePod(ctx, "cluster2", lab.SampleNamespace, name); err != nil {
			t.Fatal(err)
		}
	}
	want := seedEDSNetwork1
	eventually(t, 10*time.Second, func() string {
		if got := strings.Join(p.eds(helloworldEDS), ","); got != want {
			return "EDS " + got
		}
		return ""
	})

	mark = p.count()
	if err := theLab.RestartIstiod(ctx, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() string {
		var disc, reconn, eds bool
		for _, e := range p.since(mark) {
			switch e.Type {
			case xdsclient.EventDisconnect:
				disc = true
			case xdsclient.EventReconnect:
				reconn = disc
			case "eds":
				eds = reconn
			}
		}
		if !disc || !reconn || !eds {
			return fmt.Sprintf("after an istiod restart: disconnect %v, reconnect %v, EDS again %v", disc, reconn, eds)
		}
		if got := strings.Join(p.eds(helloworldEDS), ","); got != want {
			return "EDS after restart " + got
		}
		return ""
	})
}
