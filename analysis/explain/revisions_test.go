package explain

import (
	"cmp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// revMesh is the multi-primary seed with the given istiods in cluster1
// (revision → ready), namespace sample's labels in cluster1, and cluster1's
// revision tags. cluster2 keeps its one default istiod.
func revMesh(istiods map[string]bool, nsLabels map[string]string, tags ...model.RevisionTag) *model.Snapshot {
	s := mpSeed()
	c := &s.Clusters[0]
	c.Istiods = nil
	for rev, ready := range istiods {
		c.Istiods = append(c.Istiods, model.IstiodPod{Name: "istiod-" + rev, ClusterID: "cluster1", Revision: rev, Ready: ready})
	}
	c.RevisionTags = tags
	s.Ambient = []model.AmbientCluster{{Cluster: "cluster1", Namespaces: map[string]map[string]string{"sample": nsLabels, "istio-system": {}}}}
	return s
}

func proxy(cluster, ns, name, rev string) model.ProxyPod {
	return model.ProxyPod{Cluster: cluster, Namespace: ns, Name: name, Kind: model.ProxySidecar, Ready: true,
		Injected: &model.InjectedIdentity{Kind: model.ProxySidecar, Revision: rev}}
}

func TestNamespaceRevision(t *testing.T) {
	both := map[string]bool{"default": true, "canary": true}
	for _, tc := range []struct {
		name    string
		istiods map[string]bool
		labels  map[string]string
		tags    []model.RevisionTag
		want    []string // nil for no problem
		edit    func(*model.Snapshot)
		cluster string // the cluster the problem concerns, when not cluster1
	}{
		{"no label", both, nil, nil, nil, nil, ""},
		{"a running revision", both, map[string]string{model.LabelRev: "canary"}, nil, nil, nil, ""},
		{"the default revision", both, map[string]string{model.LabelRev: "default"}, nil, nil, nil, ""},
		{"injection enabled", both, map[string]string{model.LabelInjection: "enabled"}, nil, nil, nil, ""},
		{"injection disabled wins", both, map[string]string{model.LabelInjection: "disabled", model.LabelRev: "nonexistent"}, nil, nil, nil, ""},
		{"injection enabled wins over a missing revision", both, map[string]string{model.LabelInjection: "enabled", model.LabelRev: "nonexistent"}, nil, nil, nil, ""},
		{"a revision no istiod runs", both, map[string]string{model.LabelRev: "nonexistent"}, nil,
			[]string{"namespace sample in cluster1 is labelled istio.io/rev=nonexistent", "no istiod of revision nonexistent runs in cluster1 (revisions there: canary, default)", "get no sidecar"}, nil, ""},
		{"injection enabled with no default revision", map[string]bool{"canary": true}, map[string]string{model.LabelInjection: "enabled"}, nil,
			[]string{"istio-injection=enabled (the default revision)", "no istiod of revision default runs"}, nil, ""},
		{"a tag of a running revision", both, map[string]string{model.LabelRev: "prod"}, []model.RevisionTag{{Tag: "prod", Revision: "canary"}}, nil, nil, ""},
		{"a default tag", map[string]bool{"canary": true}, map[string]string{model.LabelInjection: "enabled"}, []model.RevisionTag{{Tag: "default", Revision: "canary"}}, nil, nil, ""},
		{"a tag of a revision gone", both, map[string]string{model.LabelRev: "prod"}, []model.RevisionTag{{Tag: "prod", Revision: "1-27"}},
			[]string{"labelled istio.io/rev=prod", "no istiod of revision prod (a tag of revision 1-27) runs in cluster1"}, nil, ""},
		{"a revision not ready", map[string]bool{"default": true, "canary": false}, map[string]string{model.LabelRev: "canary"}, nil,
			[]string{"the istiod pods of revision canary in cluster1 are not ready"}, nil, ""},
		// A remote cluster's namespaces are served by the primary that reads it.
		{name: "a remote's namespace", istiods: both, edit: func(s *model.Snapshot) {
			s.Clusters[1].Istiods = nil // cluster2 is a remote of cluster1
			s.Ambient = append(s.Ambient, model.AmbientCluster{Cluster: "cluster2", Namespaces: map[string]map[string]string{
				"sample": {model.LabelRev: "canary"}, "other": {model.LabelRev: "nonexistent"}}})
		}, want: []string{"namespace other in cluster2", "no istiod of revision nonexistent runs in cluster1"}, cluster: "cluster2"},
		// Without any istiod pod in sight the check cannot tell: nothing.
		{name: "no istiod known", labels: map[string]string{model.LabelRev: "nonexistent"}, edit: func(s *model.Snapshot) { s.Clusters[1].Istiods = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := revMesh(tc.istiods, tc.labels, tc.tags...)
			if tc.edit != nil {
				tc.edit(s)
			}
			ps := Diagnose(s, Inputs{Now: testNow})
			if tc.want == nil {
				if got := find(ps, string(model.ProblemNamespaceRevision)); len(got) != 0 {
					t.Fatalf("want none, got %+v", got)
				}
				return
			}
			p := want(t, ps, string(model.ProblemNamespaceRevision), model.SeverityError, tc.want...)
			if c := cmp.Or(tc.cluster, "cluster1"); p.Cluster != c {
				t.Errorf("cluster %q, want %s", p.Cluster, c)
			}
		})
	}
}

func TestProxyRevision(t *testing.T) {
	s := revMesh(map[string]bool{"default": true, "canary": true}, map[string]string{model.LabelRev: "canary"})
	s.Proxies = []model.ProxyPod{
		proxy("cluster1", "sample", "a-1", "1-27"),
		proxy("cluster1", "sample", "a-2", "1-27"),
		proxy("cluster1", "sample", "b-1", "default"), // on the revision its namespace left
		proxy("cluster1", "sample", "c-1", "canary"),
		proxy("cluster2", "sample", "d-1", "default"), // cluster2's own istiod
	}
	ps := Diagnose(s, Inputs{Now: testNow})
	p := want(t, ps, string(model.ProblemProxyRevision), model.SeverityError, "2 proxies in cluster1 were injected by revision 1-27", "a-1", "a-2", "reach no istiod")
	if p.Count != 2 {
		t.Errorf("count %d, want 2", p.Count)
	}
	want(t, ps, string(model.ProblemProxyRevisionOutdated), model.SeverityInfo, "sample/b-1 in cluster1 runs the sidecar of revision default, but its namespace now asks for revision canary")
}

func TestRevisionConfigDiffers(t *testing.T) {
	local := []model.ServiceSettings{{Hosts: []string{"*.sample.svc.cluster.local"}}}
	local[0].Settings.ClusterLocal = true
	nets := &model.MeshNetworks{Networks: map[string]model.MeshNetwork{"network1": {}}}
	for _, tc := range []struct {
		name         string
		base, canary model.RevisionConfig
		want         string
	}{
		{"same", model.RevisionConfig{Found: true}, model.RevisionConfig{Found: true}, ""},
		{"no ConfigMap, nothing that matters", model.RevisionConfig{Found: true, MeshNetworks: &model.MeshNetworks{}}, model.RevisionConfig{}, ""},
		{"serviceSettings", model.RevisionConfig{Found: true}, model.RevisionConfig{Found: true, ServiceSettings: local},
			"read different serviceSettings (ConfigMap istio-system/istio-canary, ConfigMap istio-system/istio); cluster-local for default only: helloworld.sample"},
		{"meshNetworks", model.RevisionConfig{Found: true, MeshNetworks: nets}, model.RevisionConfig{Found: true}, "read different meshNetworks"},
		{"discoverySelectors", model.RevisionConfig{Found: true}, model.RevisionConfig{DiscoverySelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b"}}}}, "discoverySelectors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := revMesh(map[string]bool{"default": true, "canary": true}, nil)
			tc.base.Revision, tc.base.ConfigMap = "canary", "istio-system/istio-canary"
			tc.canary.Revision, tc.canary.ConfigMap = "default", "istio-system/istio"
			s.Clusters[0].RevisionConfigs = []model.RevisionConfig{tc.base, tc.canary}
			ps := Diagnose(s, Inputs{Now: testNow})
			if tc.want == "" {
				if got := find(ps, string(model.ProblemRevisionConfigDiffers)); len(got) != 0 {
					t.Fatalf("want none, got %+v", got)
				}
				return
			}
			p := want(t, ps, string(model.ProblemRevisionConfigDiffers), model.SeverityWarning, tc.want, "revisions canary and default of cluster1", "istio-system/istio-canary")
			if strings.Contains(tc.name, "discovery") && !strings.Contains(p.Sentence, "no ConfigMap istio-system/istio: istiod's defaults") {
				t.Errorf("missing ConfigMap not said: %s", p.Sentence)
			}
		})
	}
}

func TestRevisionLabelledConfig(t *testing.T) {
	s := revMesh(map[string]bool{"default": true, "canary": true}, nil)
	if got := find(Diagnose(s, Inputs{Now: testNow}), string(model.ProblemRevisionLabelledConfig)); len(got) != 0 {
		t.Fatalf("none labelled: %+v", got)
	}
	s.Clusters[0].PredictedRevision = "default"
	s.Clusters[0].OtherRevisionsConfig = map[string][]string{"canary": {"DestinationRule sample/a", "DestinationRule sample/b", "Sidecar sample/c", "VirtualService sample/d"}}
	want(t, Diagnose(s, Inputs{Now: testNow}), string(model.ProblemRevisionLabelledConfig), model.SeverityInfo,
		"4 Istio config object(s) in cluster1 are labelled istio.io/rev=canary (DestinationRule sample/a, DestinationRule sample/b, Sidecar sample/c, 1 more)",
		"meshscope predicts cluster1 for revision default", "--revision canary")
	// With the canary a control plane of its own, it is named instead.
	s.RevisionPlanes = []model.RevisionPlane{{Cluster: "cluster1", Revision: "canary"}}
	want(t, Diagnose(s, Inputs{Now: testNow}), string(model.ProblemRevisionLabelledConfig), model.SeverityInfo,
		"control plane cluster1@canary (that revision's istiod) is predicted with them")
}

func TestRevisionNote(t *testing.T) {
	s := revMesh(map[string]bool{"default": true}, nil)
	s.Clusters[0].PredictedRevision = "default"
	if n := revisionNote(s, "cluster1"); n != "" {
		t.Errorf("one revision: %q", n)
	}
	s = revMesh(map[string]bool{"default": true, "canary": true}, nil)
	s.Clusters[0].PredictedRevision = "canary"
	n := revisionNote(s, "cluster1")
	for _, x := range []string{"istiod cluster1 runs revisions canary, default", "for revision canary (ConfigMap istio-canary", "the other is control plane cluster1@default (VIEWPOINT@cluster1@default)"} {
		if !strings.Contains(n, x) {
			t.Errorf("note lacks %q: %s", x, n)
		}
	}
	// The other revision as a control plane of its own.
	s.RevisionPlanes = []model.RevisionPlane{{Cluster: "cluster1", Revision: "default"}}
	n = revisionNote(s, "cluster1@default")
	for _, x := range []string{"this prediction is for revision default (ConfigMap istio,", "the other is control plane cluster1 (VIEWPOINT@cluster1)"} {
		if !strings.Contains(n, x) {
			t.Errorf("note for cluster1@default lacks %q: %s", x, n)
		}
	}
}

func TestRevisionsSendDifferently(t *testing.T) {
	la := func(eps ...xdsclient.Endpoint) xdsclient.LoadAssignment {
		return xdsclient.LoadAssignment{Endpoints: eps}
	}
	ep := func(addr string, port, w uint32) xdsclient.Endpoint {
		return xdsclient.Endpoint{Address: addr, Port: port, Weight: w, Health: "HEALTHY", TLSMode: "istio"}
	}
	const hw = "outbound|5000||helloworld.sample.svc.cluster.local"
	both := la(ep("10.44.0.13", 5000, 1), ep("192.168.60.9", 15443, 1))
	local := la(ep("10.44.0.13", 5000, 1))
	vp := xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}
	sent := func(cp string, v xdsclient.Viewpoint, eds map[string]xdsclient.LoadAssignment) Sent {
		v.ControlPlane = cp
		return Sent{ControlPlane: cp, Viewpoint: v, EDS: eds, Clusters: []string{hw}}
	}
	other := vp
	other.Network = "network2"
	for _, tc := range []struct {
		name string
		sent []Sent
		want []string // sentence parts; nil for no problem
	}{
		{"same endpoints", []Sent{sent("cluster1", vp, map[string]xdsclient.LoadAssignment{hw: both}), sent("cluster1@canary", vp, map[string]xdsclient.LoadAssignment{hw: both})}, nil},
		{"canary cluster-local", []Sent{sent("cluster1", vp, map[string]xdsclient.LoadAssignment{hw: both}), sent("cluster1@canary", vp, map[string]xdsclient.LoadAssignment{hw: local})},
			[]string{"revisions default and canary of cluster1 send a cluster1/network1 proxy different endpoints for 1 cluster(s)",
				"helloworld.sample:5000 (default: 10.44.0.13:5000 w=1, 192.168.60.9:15443 w=1; canary: 10.44.0.13:5000 w=1)"}},
		{"a TLS mode differs", []Sent{sent("cluster1", vp, map[string]xdsclient.LoadAssignment{hw: local}),
			sent("cluster1@canary", vp, map[string]xdsclient.LoadAssignment{hw: la(xdsclient.Endpoint{Address: "10.44.0.13", Port: 5000, Weight: 1, Health: "HEALTHY"})})},
			[]string{"canary: 10.44.0.13:5000 w=1 tls=none"}},
		{"different viewpoints are not compared", []Sent{sent("cluster1", vp, map[string]xdsclient.LoadAssignment{hw: both}), sent("cluster1@canary", other, map[string]xdsclient.LoadAssignment{hw: local})}, nil},
		{"two primaries are not compared", []Sent{sent("cluster1", vp, map[string]xdsclient.LoadAssignment{hw: both}), sent("cluster2", vp, map[string]xdsclient.LoadAssignment{hw: local})}, nil},
		{"a cluster only one sent is not compared", []Sent{sent("cluster1", vp, map[string]xdsclient.LoadAssignment{hw: both}), sent("cluster1@canary", vp, map[string]xdsclient.LoadAssignment{"outbound|80||sleep.sample.svc.cluster.local": local})}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := revMesh(map[string]bool{"default": true, "canary": true}, nil)
			got := revisionsSentProblems(s, tc.sent)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("want none, got %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Kind != model.ProblemRevisionsSendDifferently || got[0].Severity != model.SeverityWarning || got[0].Cluster != "cluster1" {
				t.Fatalf("got %+v", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0].Sentence, w) {
					t.Errorf("sentence %q lacks %q", got[0].Sentence, w)
				}
			}
		})
	}
}
