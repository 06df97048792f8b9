package watch

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func TestLocalityAsIstiodDerivesIt(t *testing.T) {
	for _, c := range []struct {
		name string
		pod  map[string]string
		node map[string]string
		want string
	}{
		{"node GA labels, no subzone: trailing slash", nil, map[string]string{model.LabelRegion: "us-east-1", model.LabelZone: "us-east-1a"}, "us-east-1/us-east-1a/"},
		{"node subzone", nil, map[string]string{model.LabelRegion: "r", model.LabelZone: "z", model.LabelSubzone: "s"}, "r/z/s"},
		{"deprecated node labels", nil, map[string]string{model.LabelRegionBeta: "r", model.LabelZoneBeta: "z"}, "r/z/"},
		{"GA wins over deprecated", nil, map[string]string{model.LabelRegion: "r", model.LabelRegionBeta: "old", model.LabelZoneBeta: "z"}, "r/z/"},
		{"zone only", nil, map[string]string{model.LabelZone: "z"}, "/z/"},
		{"no topology labels", nil, map[string]string{"kubernetes.io/hostname": "n"}, ""},
		{"pod label wins, dots become slashes", map[string]string{model.LabelLocality: "r1.z1"}, map[string]string{model.LabelRegion: "r", model.LabelZone: "z"}, "r1/z1"},
		{"pod label with slashes kept as is", map[string]string{model.LabelLocality: "r1/z1.a"}, nil, "r1/z1.a"},
		{"legacy pod label", map[string]string{model.LabelLocalityLegacy: "r2.z2.s2"}, nil, "r2/z2/s2"},
		{"new label wins over legacy", map[string]string{model.LabelLocality: "a.b", model.LabelLocalityLegacy: "c.d"}, nil, "a/b"},
		// GetLocalityLabel returns the new label's empty value without
		// looking at the legacy one; the node then decides.
		{"empty new label hides legacy", map[string]string{model.LabelLocality: "", model.LabelLocalityLegacy: "c.d"}, map[string]string{model.LabelRegion: "r", model.LabelZone: "z"}, "r/z/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := meshtest.Pod("sample", "p", "10.0.0.1", "", true)
			for k, v := range c.pod {
				pod.Labels[k] = v
			}
			node := &corev1.Node{}
			node.Name, node.Labels = "node1", c.node
			in := newInterner()
			cp, _ := in.transformPod(pod)
			cn, _ := transformNode(node)
			sl := meshtest.EndpointSlice("sample", "hw", "hw-1", 80, map[string]string{"p": "10.0.0.1"})
			zone, other := "slice-zone", "other-node"
			sl.Endpoints[0].Zone, sl.Endpoints[0].NodeName = &zone, &other // istiod reads neither
			cs, _ := in.transformEndpointSlice(sl)
			v := build.Caches{
				Services: []*corev1.Service{meshtest.Service("sample", "hw", 80)},
				Slices:   []*build.Slice{cs.(*build.Slice)},
				Pod:      func(string) *build.Pod { return cp.(*build.Pod) },
				Node: func(name string) *build.Node {
					if name == "node1" {
						return cn.(*build.Node)
					}
					return nil
				},
			}
			eps := build.BuildPart(v, "c1", nil).Services["hw.sample.svc.cluster.local"].Endpoints
			if len(eps) != 1 || eps[0].Locality != c.want {
				t.Fatalf("locality = %q, want %q (%+v)", eps[0].Locality, c.want, eps)
			}
		})
	}
}

func TestCachedNodeIsSlim(t *testing.T) {
	n := meshtest.Node("n1", "r", "z")
	n.ResourceVersion = "5"
	n.Labels["gw"] = "yes"
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeExternalIP, Address: "8.8.8.1"}}
	n.Status.Images = []corev1.ContainerImage{{Names: []string{"big/image:1"}, SizeBytes: 1 << 30}}
	o, _ := transformNode(n)
	c := o.(*build.Node)
	if c.Locality != "r/z/" || c.ExternalIP != "8.8.8.1" || c.Labels["gw"] != "yes" {
		t.Fatalf("cached node = %+v", c)
	}
	if k, err := cache.MetaNamespaceKeyFunc(c); err != nil || k != "n1" || c.GetObjectMeta().GetResourceVersion() != "5" {
		t.Fatalf("key = %q, %v", k, err)
	}
	cp := c.DeepCopyObject().(*build.Node)
	cp.Labels["gw"] = "no"
	if c.Labels["gw"] != "yes" {
		t.Fatal("DeepCopyObject shares labels")
	}
}
