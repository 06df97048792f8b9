package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestPortForwardToIstiod: without --xds-address, meshscope finds the
// istiod Pod through the kube context and port-forwards to it through the
// API server's pods/portforward subresource, as istioctl does — its default
// way in. The lab's API servers are real; behind them the lab's kubelet
// stand-in (lab/kubelet.go) forwards the Pod's ports to the real istiod.
func TestPortForwardToIstiod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	want := map[string]string{
		"cluster1/network1": seedEDSNetwork1,
		"cluster2/network2": seedEDSNetwork2,
	}
	// The library path, in each cluster to its own istiod (multi-primary).
	for _, is := range theLab.Istiods() {
		c := theLab.Cluster(is.Cluster)
		pod, err := istiod.FindPod(ctx, c.Client(), lab.SystemNamespace, "")
		if err != nil {
			t.Fatalf("%s: %v", is.Cluster, err)
		}
		if pod.Name != lab.IstiodPod(is.Cluster) {
			t.Fatalf("%s: found istiod pod %s, want %s", is.Cluster, pod.Name, lab.IstiodPod(is.Cluster))
		}
		pf, err := istiod.StartPortForward(ctx, c.RESTConfig(), pod.Namespace, pod.Name, 15010, 20*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", is.Cluster, err)
		}
		t.Cleanup(pf.Close)
		if pf.Address == is.XDSAddress() {
			t.Fatalf("%s: the forward's local address %s is istiod's own", is.Cluster, pf.Address)
		}
		for key, eds := range want {
			cl, nw, _ := strings.Cut(key, "/")
			vp := xdsclient.Viewpoint{Cluster: cl, Network: nw}
			p := runProbe(t, xdsclient.Options{Viewpoint: vp, ControlPlane: is.Cluster, EDSNames: []string{helloworldEDS},
				Transport: xdsclient.TransportConfig{Address: pf.Address}})
			eventually(t, 30*time.Second, func() string {
				if got := strings.Join(p.eds(helloworldEDS), ","); got != eds {
					return "through the port-forward to " + pod.Name + ", " + key + " got " + got + ", want " + eds
				}
				return ""
			})
		}
	}
	// A Pod that is not there is a clear error, not a hang.
	if _, err := istiod.StartPortForward(ctx, theLab.Cluster("cluster1").RESTConfig(), lab.SystemNamespace, "istiod-missing", 15010, 10*time.Second); err == nil || !strings.Contains(err.Error(), "istiod-missing") {
		t.Errorf("port-forward to a missing pod: %v", err)
	}

	// The binary, as a user runs it: explain with no --xds-address.
	cmd := exec.CommandContext(ctx, meshscopeBinary(t), "explain", "helloworld", "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1", "--log-file", "-")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("explain through the port-forward: %v\n%s", err, out)
	}
	for key := range want {
		if !strings.Contains(string(out), "from "+key+" (control plane cluster1): MATCH") {
			t.Errorf("explain output lacks a MATCH from %s:\n%s", key, out)
		}
	}
	for _, gw := range []string{"192.168.60.9:15443", "192.168.60.113:15443"} {
		if !strings.Contains(string(out), gw) {
			t.Errorf("explain output lacks gateway %s:\n%s", gw, out)
		}
	}
	// --revision narrows the pod: the lab's istiods are the default
	// revision; asking for another names what was looked for.
	cmd = exec.CommandContext(ctx, meshscopeBinary(t), "explain", "helloworld", "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1", "--revision", "canary", "--log-file", "-")
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "istio.io/rev=canary") {
		t.Errorf("explain --revision canary: %v\n%s", err, out)
	}
	// doctor with no --istiod-debug-address reads istiod's own view
	// through a port-forward to the pod's 8080: on the healthy lab, no
	// problem at all — not even "istiod-unreachable".
	cmd = exec.CommandContext(ctx, meshscopeBinary(t), "doctor", "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1", "--log-file", "-")
	out, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "No problems found.") || strings.Contains(string(out), "istiod-unreachable") {
		t.Errorf("doctor through the port-forward: %v\n%s", err, out)
	}
}
