package xdsclient

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var labKnown = Known{
	Clusters: map[string]string{"cluster1": "network1", "cluster2": "network2", "both": ""},
	Networks: map[string][]string{"network1": {"cluster1"}, "network2": {"cluster2"}, "both": {"cluster1"}, "shared": {"cluster1", "cluster2"}},
}

func TestParseViewpoint(t *testing.T) {
	cases := []struct {
		in               string
		cluster, network string
		none             bool
		pod              string
		err              string
		str              string
	}{
		{in: "network1", cluster: "cluster1", network: "network1", str: "cluster1/network1"},
		{in: "shared", network: "shared", str: "shared"},
		{in: "cluster2", cluster: "cluster2", network: "network2", str: "cluster2/network2"},
		{in: "cluster1/network1", cluster: "cluster1", network: "network1"},
		{in: "cluster1/none", cluster: "cluster1", none: true, str: "cluster1/none"},
		{in: "none", none: true, str: "none"},
		{in: "cluster:both", cluster: "both"},
		{in: "network:both", cluster: "cluster1", network: "both"},
		{in: "pod:sample/sleep-1@cluster2", cluster: "cluster2", pod: "pod:sample/sleep-1@cluster2", str: "pod:sample/sleep-1@cluster2"},
		{in: "pod:sample/sleep-1", pod: "pod:sample/sleep-1"},
		{in: "both", err: "both a cluster and a network"},
		{in: "typo", err: "neither a known cluster"},
		{in: "", err: "empty"},
		{in: "a/b/c", err: "CLUSTER/NETWORK"},
		{in: "/network1", err: "CLUSTER/NETWORK"},
		{in: "pod:sleep", err: "NAMESPACE/POD"},
		{in: "pod:sample/x@", err: "empty cluster"},
		// found by FuzzParseViewpoint: the hints echoed the name, newline and all
		{in: "0\n0", err: `viewpoint "0\n0": a name cannot contain control characters`},
		{in: "cluster1/net\twork", err: "control characters"},
		// found by FuzzParseViewpoint: "cluster: 0" parsed as the cluster " 0",
		// which String() wrote back and the next parse trimmed
		{in: "cluster: 0", err: `viewpoint "cluster: 0": a name cannot contain spaces (write cluster:0)`},
		{in: "network: 0", err: "cannot contain spaces"},
		{in: "cluster1 / network1", err: "(write cluster1/network1)"},
		{in: "network1@ cluster2", err: "cannot contain spaces"},
		{in: "pod:sample/ x", err: "cannot contain spaces"},
		{in: " cluster1 ", cluster: "cluster1", network: "network1", str: "cluster1/network1"},
	}
	for _, c := range cases {
		vp, err := ParseViewpoint(c.in, labKnown)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if vp.Cluster != c.cluster || vp.Network != c.network || vp.NoNetwork != c.none {
			t.Errorf("%q: got cluster=%q network=%q none=%v", c.in, vp.Cluster, vp.Network, vp.NoNetwork)
		}
		if (vp.Pod == nil) != (c.pod == "") || (vp.Pod != nil && vp.Pod.String() != c.pod) {
			t.Errorf("%q: pod = %v", c.in, vp.Pod)
		}
		want := c.str
		if want == "" {
			want = c.in
			if strings.HasPrefix(c.in, "cluster:") || strings.HasPrefix(c.in, "network:") {
				want = vp.String()
			}
		}
		if vp.String() != want {
			t.Errorf("%q: String() = %q, want %q", c.in, vp.String(), want)
		}
	}
	// With nothing known, a bare name is refused with the explicit forms.
	if _, err := ParseViewpoint("network1", Known{}); err == nil || !strings.Contains(err.Error(), "none known") {
		t.Errorf("unknown bare name: %v", err)
	}
}

func TestNodeIdentity(t *testing.T) {
	vp := Viewpoint{Cluster: "cluster1", Network: "network1", Namespace: "sample", Labels: map[string]string{"app": "probe"},
		RequestedNetworkView: []string{"network1", "network2"}, Metadata: map[string]string{"MESH_ID": "mesh1", "FOO": "bar", "NETWORK": "ignored"}}
	if got := vp.NodeID(); got != "sidecar~192.0.2.10~meshscope-probe.sample~sample.svc.cluster.local" {
		t.Errorf("node id = %q", got)
	}
	node, err := vp.Node()
	if err != nil {
		t.Fatal(err)
	}
	f := node.GetMetadata().GetFields()
	for k, want := range map[string]string{
		"ISTIO_VERSION": probeVersion(defaultIstioVersion), "CLUSTER_ID": "cluster1", "NETWORK": "network1", "NAMESPACE": "sample",
		"INSTANCE_IPS": "192.0.2.10", "MESH_ID": "mesh1", "FOO": "bar", "REQUESTED_NETWORK_VIEW": "network1,network2",
	} {
		if got := f[k].GetStringValue(); got != want {
			t.Errorf("metadata %s = %q, want %q", k, got, want)
		}
	}
	if f["LABELS"].GetStructValue().GetFields()["app"].GetStringValue() != "probe" {
		t.Errorf("LABELS = %v", f["LABELS"])
	}
	if f["PROXY_CONFIG"].GetStructValue() == nil {
		t.Error("PROXY_CONFIG missing: istiod would not count this node as a proxy")
	}

	// cluster1/none: no NETWORK key at all, even if copied metadata has one.
	none := Viewpoint{Cluster: "cluster1", NoNetwork: true, NodeType: Router, Metadata: map[string]string{"NETWORK": "network1"}}
	n2, err := none.Node()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := n2.GetMetadata().GetFields()["NETWORK"]; ok {
		t.Error("NoNetwork viewpoint sent a NETWORK")
	}
	if !strings.HasPrefix(n2.GetId(), "router~") {
		t.Errorf("router id = %q", n2.GetId())
	}
	// istiod refuses what Validate refuses.
	for _, bad := range []Viewpoint{{IP: "not-an-ip"}, {NodeType: "waypoint"}, {Network: "n", NoNetwork: true}, {Pod: &PodRef{Namespace: "a", Name: "b"}}} {
		if _, err := bad.Node(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	// Flat JSON: extra keys sit next to the named ones.
	b, _ := json.Marshal(vp.nodeMetadata())
	if !strings.Contains(string(b), `"FOO":"bar"`) || !strings.Contains(string(b), `"NETWORK":"network1"`) {
		t.Errorf("json = %s", b)
	}
}

func TestViewpointFromPod(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "helloworld-v2-x", Namespace: "sample",
			Labels: map[string]string{"app": "helloworld", "pod-template-hash": "abc", "topology.istio.io/network": "network2"}},
		Spec: corev1.PodSpec{ServiceAccountName: "helloworld", Containers: []corev1.Container{
			{Name: "helloworld"},
			{Name: "istio-proxy", Env: []corev1.EnvVar{
				{Name: "ISTIO_META_CLUSTER_ID", Value: "cluster2"},
				{Name: "ISTIO_META_MESH_ID", Value: "mesh1"},
				{Name: "ISTIO_META_WORKLOAD_NAME", Value: "helloworld-v2"},
				{Name: "ISTIO_META_POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "ISTIO_META_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}},
				{Name: "ISTIO_METAJSON_ANNOTATIONS", Value: `{"a":"b"}`},
				{Name: "PILOT_CERT_PROVIDER", Value: "istiod"},
			}},
		}},
		Status: corev1.PodStatus{PodIP: "10.144.0.15", PodIPs: []corev1.PodIP{{IP: "10.144.0.15"}}},
	}
	vp, err := ViewpointFromPod(pod, "")
	if err != nil {
		t.Fatal(err)
	}
	if vp.IP != "10.144.0.15" || vp.Namespace != "sample" || vp.ServiceAccount != "helloworld" || vp.Cluster != "cluster2" || vp.Network != "network2" {
		t.Errorf("viewpoint = %+v", vp)
	}
	if _, ok := vp.Labels["pod-template-hash"]; ok {
		t.Error("pod-template-hash copied")
	}
	if vp.Metadata["POD_NAME"] != "helloworld-v2-x" || vp.Metadata["a"] != "b" || vp.Metadata["MESH_ID"] != "mesh1" {
		t.Errorf("metadata = %v", vp.Metadata)
	}
	if _, ok := vp.Metadata["SECRET"]; ok {
		t.Error("secret-sourced env copied")
	}
	if _, ok := vp.Metadata["PILOT_CERT_PROVIDER"]; ok {
		t.Error("non ISTIO_META env copied")
	}
	if got := vp.NodeID(); got != "sidecar~10.144.0.15~helloworld-v2-x.sample~sample.svc.cluster.local" {
		t.Errorf("node id = %q", got)
	}
	md := vp.nodeMetadata()
	if md.ServiceAccount != "helloworld" || md.WorkloadName != "helloworld-v2" || md.ClusterID != "cluster2" {
		t.Errorf("metadata = %+v", md)
	}
	// The cluster it was read from wins over the env.
	vp2, _ := ViewpointFromPod(pod, "clusterX")
	if vp2.Cluster != "clusterX" || vp2.nodeMetadata().ClusterID != "clusterX" {
		t.Errorf("cluster = %q", vp2.Cluster)
	}
	// No IP yet: an error that says so.
	pod.Status.PodIP = ""
	if _, err := ViewpointFromPod(pod, "c"); err == nil || !strings.Contains(err.Error(), "no IP") {
		t.Errorf("err = %v", err)
	}
}

func TestParsePodRef(t *testing.T) {
	r, err := ParsePodRef("sample/sleep@cluster2")
	if err != nil || r != (PodRef{Namespace: "sample", Name: "sleep", Cluster: "cluster2"}) {
		t.Errorf("%+v %v", r, err)
	}
	if _, err := ParsePodRef("sleep"); err == nil {
		t.Error("no error for a bare name")
	}
}

func TestParseMode(t *testing.T) {
	if m, _ := ParseMode(""); m != ModeDelta {
		t.Errorf("default mode = %q", m)
	}
	if m, _ := ParseMode("sotw"); m != ModeSotW {
		t.Errorf("sotw = %q", m)
	}
	if _, err := ParseMode("rest"); err == nil {
		t.Error("rest accepted")
	}
}
