package xdsclient

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzParseViewpoint: any viewpoint string parses or gives a one-line error
// that names the viewpoint, never a panic. A parsed viewpoint is a valid
// sidecar identity whose String() reads back as the same viewpoint, as long
// as no name in it is itself viewpoint syntax (contains '/', '@' or ':',
// or is "none": cluster IDs that Istio accepts never do).
func FuzzParseViewpoint(f *testing.F) {
	known := Known{
		Clusters: map[string]string{"cluster1": "network1", "cluster2": "network2", "cluster3": "network2", "both": ""},
		Networks: map[string][]string{"network1": {"cluster1"}, "network2": {"cluster2", "cluster3"}, "both": nil},
	}
	for _, s := range []string{
		"network1", "network2", "cluster1", "cluster1/network1", "cluster1/none", "none", "both",
		"cluster:both", "network:both", "cluster1/network1@cluster2", "network2@cluster1",
		"pod:sample/helloworld-v1-abc@cluster1", "pod:sample/x", "pod:/x", "pod:a/b/c", "pod:a/b@",
		"x@", "@x", "a/b/c", "/", "nosuch", " cluster1 ", "", "cluster1@@x",
		"cluster: 0", "network: 0", "a / b", "x@ y", "pod: a/b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vp, err := ParseViewpoint(s, known)
		if err != nil {
			// Every sentence starts by saying which viewpoint (quoted with
			// %q, so a newline typed in it stays on the line).
			msg := err.Error()
			if strings.Contains(msg, "\n") || !(strings.HasPrefix(msg, "viewpoint \"") || strings.HasPrefix(msg, "empty viewpoint: ")) {
				t.Fatalf("error is not one line naming the viewpoint: %q", msg)
			}
			return
		}
		if vp.NodeType != Sidecar || vp.Namespace == "" || (vp.NoNetwork && vp.Network != "") {
			t.Fatalf("parsed viewpoint is not a sidecar identity: %+v", vp)
		}
		if vp.Pod != nil {
			if vp.Pod.Namespace == "" || vp.Pod.Name == "" || vp.Cluster != vp.Pod.Cluster {
				t.Fatalf("pod viewpoint without namespace or name: %+v", vp.Pod)
			}
			return
		}
		for _, name := range []string{vp.Cluster, vp.Network, vp.ControlPlane, vp.Namespace} {
			if strings.IndexFunc(name, unicode.IsSpace) >= 0 {
				t.Fatalf("parsed a name with a space: %+v", vp)
			}
		}
		if err := vp.validate(); err != nil {
			t.Fatalf("parsed viewpoint does not validate: %v (%+v)", err, vp)
		}
		for _, name := range []string{vp.Cluster, vp.Network, vp.ControlPlane} {
			if strings.ContainsAny(name, "/@:") || name == "none" {
				return // not a name Istio gives a cluster or network
			}
		}
		// Read back what String() wrote, knowing what the first parse knew
		// of these names (an explicit cluster:X may name an unknown cluster).
		k := Known{Clusters: map[string]string{}, Networks: map[string][]string{}}
		if vp.Cluster != "" {
			k.Clusters[vp.Cluster] = vp.Network
		}
		if vp.Network != "" && vp.Network != vp.Cluster {
			k.Networks[vp.Network] = []string{vp.Cluster}
		}
		again, err := ParseViewpoint(vp.String(), k)
		if err != nil {
			t.Fatalf("String() %q of %+v does not parse: %v", vp.String(), vp, err)
		}
		if again.Cluster != vp.Cluster || again.Network != vp.Network || again.NoNetwork != vp.NoNetwork || again.ControlPlane != vp.ControlPlane {
			t.Fatalf("String() %q reads back as %+v, not %+v", vp.String(), again, vp)
		}
	})
}
