package e2e

// Versions on the real lab: the real istiods serve proxies that tell them
// (ISTIO_VERSION) and show in their image (istio-proxy's tag) versions in
// and out of the skew Istio supports against the version the istiod pods
// carry (lab.IstiodVersion, 1.31); then one primary's istiod pod moves to
// another minor version, an upgrade half done. doctor, with nothing but the
// contexts, reports each and clears when the condition goes.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
)

func TestFleetVersionSkew(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const ns = "fleetskew"
	// meshscope reads a version from an image tag without its variant
	// (1.31.0-dev, 1.31.0-distroless: 1.31.0).
	istiodVersion, _, _ := strings.Cut(lab.IstiodVersion, "-")
	fleetNamespace(ctx, t, ns)
	istiods := labIstiodsXDS()
	conns := map[string]context.CancelFunc{}
	for _, p := range []struct{ name, ip, version string }{
		{"skew-old", "10.44.9.31", "1.27.3"}, // 4 minors older than istiod: outside
		{"skew-new", "10.44.9.32", "1.32.0"}, // newer than istiod: outside
		{"skew-ok", "10.44.9.33", "1.29.1"},  // 2 minors older: supported
	} {
		if err := theLab.AddPod(ctx, "cluster1", lab.PodSpec{Namespace: ns, Name: p.name, IP: p.ip, Labels: map[string]string{"app": p.name},
			Container: "istio-proxy", Image: "example.invalid/istio/proxyv2:" + p.version, Args: []string{"proxy", "sidecar"},
			Env: map[string]string{"ISTIO_META_NETWORK": "network1", "ISTIO_META_CLUSTER_ID": "cluster1"}}); err != nil {
			t.Fatal(err)
		}
		name := p.name
		t.Cleanup(func() { _ = theLab.RemovePod(context.Background(), "cluster1", ns, name) })
		cctx, ccancel := context.WithCancel(ctx)
		conns[p.name] = ccancel
		t.Cleanup(ccancel)
		fakeProxyVersion(cctx, t, p.version, istiods["cluster1"], p.name, ns, "cluster1", "network1", p.ip, ackAll)
	}
	skews := func() []string {
		ps, _ := doctorJSON(t, "--context", "cluster1,cluster2", "--offline")
		var out []string
		for _, p := range ps {
			if p.Kind == model.ProblemVersionSkew {
				out = append(out, p.Sentence+" "+strings.Join(p.Examples, ","))
			}
		}
		return out
	}
	has := func(got []string, words ...string) bool {
		for _, g := range got {
			ok := true
			for _, w := range words {
				ok = ok && strings.Contains(g, w)
			}
			if ok {
				return true
			}
		}
		return false
	}

	// The proxies outside the skew, and only those.
	eventually(t, 90*time.Second, func() string {
		got := skews()
		if !has(got, "skew-old", "1.27.3", "istiod cluster1 "+istiodVersion, "4 minor versions older") ||
			!has(got, "skew-new", "1.32.0", "newer than its istiod") || has(got, "skew-ok") || has(got, "primaries") {
			return fmt.Sprintf("version-skew: %q", got)
		}
		return ""
	})
	f := proxiesJSON(t, "--namespace", ns)
	if p := findProxy(f, ns, "skew-old"); p == nil || p.Version != "1.27.3" || p.IstiodVersion != istiodVersion || p.ControlPlane != "cluster1" {
		t.Errorf("skew-old in proxies: %+v", p)
	}

	// cluster2's istiod pod moves to 1.29: primaries on different minors.
	if err := theLab.SetIstiodPodVersion(ctx, "cluster2", "1.29.2"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = theLab.SetIstiodPodVersion(context.Background(), "cluster2", lab.IstiodVersion) })
	eventually(t, 60*time.Second, func() string {
		if got := skews(); !has(got, "different minor versions", "cluster1 "+istiodVersion, "cluster2 1.29.2") {
			return fmt.Sprintf("version-skew: %q", got)
		}
		return ""
	})

	// The conditions go: the proxies outside the skew leave, the pod is
	// back on the version of cluster1's.
	for _, n := range []string{"skew-old", "skew-new"} {
		conns[n]()
		if err := theLab.RemovePod(ctx, "cluster1", ns, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := theLab.SetIstiodPodVersion(ctx, "cluster2", lab.IstiodVersion); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() string {
		if got := skews(); len(got) > 0 {
			return fmt.Sprintf("version-skew after the conditions went: %q", got)
		}
		return ""
	})
}
