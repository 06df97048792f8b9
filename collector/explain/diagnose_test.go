package explain

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/collector/horizon"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

var testNow = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)

// mpSeed is the seed mesh in multi-primary (meshtest.LabMultiPrimary).
func mpSeed() *model.Snapshot { return meshtest.LabMultiPrimary(testNow) }

func find(ps []Problem, kind string) []Problem {
	var out []Problem
	for _, p := range ps {
		if string(p.Kind) == kind {
			out = append(out, p)
		}
	}
	return out
}

// want checks that exactly one problem of kind exists, with severity sev
// and every text in its sentence.
func want(t *testing.T, ps []Problem, kind string, sev Severity, texts ...string) Problem {
	t.Helper()
	got := find(ps, kind)
	if len(got) != 1 {
		t.Fatalf("%d %s problems, want 1: %+v", len(got), kind, ps)
	}
	if got[0].Severity != sev {
		t.Errorf("%s is %s, want %s: %s", kind, got[0].Severity, sev, got[0].Sentence)
	}
	for _, x := range texts {
		if !strings.Contains(got[0].Sentence, x) {
			t.Errorf("%s sentence lacks %q: %s", kind, x, got[0].Sentence)
		}
	}
	return got[0]
}

func TestDiagnoseHealthy(t *testing.T) {
	if ps := Diagnose(mpSeed(), Inputs{Now: testNow}); len(ps) != 0 {
		t.Errorf("healthy multi-primary mesh has problems: %+v", ps)
	}
}

// The first case: cluster2's remote secret for cluster1 is deleted.
func TestDiagnoseMissingRemoteSecret(t *testing.T) {
	s := mpSeed()
	s.Clusters[0].Sources = s.Clusters[0].Sources[:1]
	ps := Diagnose(s, Inputs{Now: testNow})
	p := want(t, ps, "control-plane-missing-cluster", Error, "istiod cluster2 does not read cluster cluster1",
		"istio-remote-secret-cluster1", "network2", "network1", "1 service(s)", "helloworld.sample")
	if p.Cluster != "cluster2" {
		t.Errorf("concerns %s, want the control plane cluster2", p.Cluster)
	}
	if !HasErrors(ps) {
		t.Error("exit status 1 expected")
	}
	// explain for that control plane predicts from cluster2 alone and says why.
	vp := xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2"}
	v := Explain(s, hello, 5000, vp, "cluster2", nil)
	if len(v.Predicted) != 1 || v.Predicted[0].Address != "10.144.0.15" {
		t.Errorf("predicted %+v, want only cluster2's pod", v.Predicted)
	}
	if len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "does not read cluster cluster1") || !strings.Contains(v.Notes[0], "1 endpoint(s)") {
		t.Errorf("notes %q", v.Notes)
	}
	v = Explain(s, hello, 5000, vp, "cluster1", nil)
	if len(v.Predicted) != 2 || len(v.Notes) != 0 {
		t.Errorf("cluster1 reads both: predicted %+v notes %q", v.Predicted, v.Notes)
	}
}

// Without cluster2's secrets (no context), its istiod's clusterz tells.
func TestDiagnoseMissingClusterFromClusterz(t *testing.T) {
	s := mpSeed()
	s.Clusters[1].Sources = nil
	s.Clusters[1].Source = model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster2", In: "cluster1", Key: "cluster2"}
	s.Clusters[1].SecretsRead = false
	s.Clusters[0].Sources = s.Clusters[0].Sources[:1]
	if ps := find(Diagnose(s, Inputs{Now: testNow}), "control-plane-missing-cluster"); len(ps) != 0 {
		t.Errorf("without clusterz the set of cluster2 is unknown: %+v", ps)
	}
	cz := model.IstiodView{ControlPlane: "cluster2", Clusters: []model.IstiodCluster{{ID: "cluster2", SyncStatus: "synced"}}}
	if got := UnknownControlPlanes(s, nil); len(got) != 1 || got[0] != "cluster2" {
		t.Errorf("unknown control planes %v, want cluster2", got)
	}
	ps := Diagnose(s, Inputs{Now: testNow, Istiod: []model.IstiodView{cz}})
	want(t, ps, "control-plane-missing-cluster", Error, "istiod cluster2 does not read cluster cluster1", "/debug/clusterz lists only cluster2")
	if got := UnknownControlPlanes(s, []model.IstiodView{cz}); len(got) != 0 {
		t.Errorf("clusterz tells: %v", got)
	}
	// explain for that control plane predicts from what clusterz lists.
	v := ExplainWith(s, hello, 5000, xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2"}, "cluster2", nil, Extra{Istiod: []model.IstiodView{cz}})
	if len(v.Predicted) != 1 || len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "its /debug/clusterz does not list it") {
		t.Errorf("predicted %+v notes %q", v.Predicted, v.Notes)
	}
}

func TestDiagnoseRootCA(t *testing.T) {
	s := mpSeed()
	s.Clusters[1].RootCerts = []model.RootCert{{Fingerprint: strings.Repeat("cd", 32), Subject: "O=cluster.local", NotAfter: testNow.AddDate(0, 0, 10)}}
	ps := Diagnose(s, Inputs{Now: testNow})
	want(t, ps, "root-ca-mismatch", Error, "cluster cluster1 trusts root", "cluster cluster2 trusts root", "sha256 abababab", "sha256 cdcdcdcd", "share no root", "33554536")
	want(t, ps, "root-ca-expiry", Warning, "expires on 2026-12-02 (in 10 days)", "cluster2")
	// A rotation bundle that holds the other's root as well: they talk.
	s.Clusters[1].RootCerts = append(s.Clusters[1].RootCerts, s.Clusters[0].RootCerts...)
	if got := find(Diagnose(s, Inputs{Now: testNow}), "root-ca-mismatch"); len(got) != 0 {
		t.Errorf("bundles sharing a root: %+v", got)
	}
	s.Clusters[1].RootCerts[0].NotAfter = testNow.Add(-time.Hour)
	want(t, Diagnose(s, Inputs{Now: testNow}), "root-ca-expiry", Error, "expired on")
}

func TestDiagnoseMissingService(t *testing.T) {
	s := mpSeed()
	// sleep exists only in cluster1; cluster2 runs sidecars in sample.
	sleepPorts := []model.ServicePort{{Name: "http", Port: 80}}
	ep := model.Endpoint{Cluster: "cluster1", Network: "network1", Address: "10.44.0.14", Pod: "sleep-1", TLSMode: "istio", Ready: true,
		Ports: []model.EndpointPort{{Name: "http", Port: 80}}}
	s.Services = append(s.Services, &model.Service{Hostname: "sleep.sample.svc.cluster.local", Namespace: "sample", Name: "sleep", Ports: sleepPorts,
		Clusters: map[string]*model.ServiceInCluster{"cluster1": {Cluster: "cluster1", Ports: sleepPorts, Endpoints: []model.Endpoint{ep}}}})
	sortServices(s)
	ps := Diagnose(s, Inputs{Now: testNow})
	want(t, ps, "missing-service", Error, "sleep.sample exists in cluster1 but not in cluster2", "helloworld-v2", "ISTIO_META_DNS_CAPTURE")
	// DNS proxying on in every control plane: the lookup is answered.
	for i := range s.MeshConfigs {
		s.MeshConfigs[i].DefaultConfig.ProxyMetadata = map[string]string{"ISTIO_META_DNS_CAPTURE": "true"}
	}
	if got := find(Diagnose(s, Inputs{Now: testNow}), "missing-service"); len(got) != 0 {
		t.Errorf("with DNS proxying: %+v", got)
	}
}

func sortServices(s *model.Snapshot) {
	for i := 1; i < len(s.Services); i++ {
		for j := i; j > 0 && s.Services[j].Hostname < s.Services[j-1].Hostname; j-- {
			s.Services[j], s.Services[j-1] = s.Services[j-1], s.Services[j]
		}
	}
}

func TestDiagnoseInconsistentService(t *testing.T) {
	s := mpSeed()
	c2 := s.Services[0].Clusters["cluster2"]
	c2.Ports = []model.ServicePort{{Name: "tcp-web", Port: 5000}, {Name: "metrics", Port: 9090}}
	c2.Headless = true
	ps := Diagnose(s, Inputs{Now: testNow})
	want(t, ps, "inconsistent-service", Warning, "helloworld.sample differs between cluster1 and cluster2", `port 5000 is "http"/TCP in cluster1 but "tcp-web"/TCP in cluster2`, "port(s) 9090 only in cluster2", "headless in cluster2")
	s = mpSeed()
	c2 = s.Services[0].Clusters["cluster2"]
	c2.Selector = map[string]string{"app": "helloworl"}
	c2.Endpoints = nil
	want(t, Diagnose(s, Inputs{Now: testNow}), "inconsistent-service", Warning, "selector app=helloworl in cluster2 selects no endpoint, while app=helloworld in cluster1 selects 1")
}

func TestDiagnoseLocalityFailover(t *testing.T) {
	s := mpSeed()
	fo := &model.LocalityLbSetting{Failover: []struct {
		From string `json:"from"`
		To   string `json:"to"`
	}{{From: "region1", To: "region2"}}}
	dr := model.DestinationRule{Cluster: "cluster1", Namespace: "sample", Name: "hello-failover", Host: "helloworld", LocalityLb: fo, Fingerprint: "1"}
	s.DestinationRules = []model.DestinationRule{dr, dr}
	s.DestinationRules[1].Cluster = "cluster2"
	ps := Diagnose(s, Inputs{Now: testNow})
	got := find(ps, "locality-failover")
	if len(got) != 2 || !strings.Contains(got[0].Sentence, "DestinationRule sample/hello-failover") || !strings.Contains(got[0].Sentence, "failover (region1→region2) for helloworld but no outlierDetection") {
		t.Fatalf("locality problems %+v", got)
	}
	for i := range s.DestinationRules {
		s.DestinationRules[i].OutlierDetection = true
	}
	if got := find(Diagnose(s, Inputs{Now: testNow}), "locality-failover"); len(got) != 0 {
		t.Errorf("with outlier detection: %+v", got)
	}
	// Mesh-wide failover, no DestinationRule.
	s.DestinationRules = nil
	s.MeshConfigs[0].LocalityLbSetting = fo
	want(t, Diagnose(s, Inputs{Now: testNow}), "locality-failover", Warning, "the mesh config of istiod cluster1 sets locality failover", "helloworld.sample has no DestinationRule")
}

func TestDiagnoseConfigSkew(t *testing.T) {
	s := mpSeed()
	s.DestinationRules = []model.DestinationRule{{Cluster: "cluster1", Namespace: "sample", Name: "helloworld-plain", Host: "helloworld", TLSMode: "DISABLE", Fingerprint: "f1"}}
	ps := Diagnose(s, Inputs{Now: testNow})
	want(t, ps, "config-skew", Warning, "helloworld.sample: istiod cluster1 applies DestinationRule sample/helloworld-plain, istiod cluster2 has none")
	s.DestinationRules = append(s.DestinationRules, s.DestinationRules[0])
	s.DestinationRules[1].Cluster = "cluster2"
	if got := find(Diagnose(s, Inputs{Now: testNow}), "config-skew"); len(got) != 0 {
		t.Errorf("the same rule in both: %+v", got)
	}
	s.DestinationRules[1].Fingerprint = "f2"
	want(t, Diagnose(s, Inputs{Now: testNow}), "config-skew", Warning, "DestinationRule sample/helloworld-plain differs between istiod cluster1 and istiod cluster2")
	s.DestinationRules = nil
	s.PeerAuthentications = []model.PeerAuthentication{{Cluster: "cluster2", Namespace: "istio-system", Name: "default", Mode: "STRICT", Fingerprint: "p"}}
	want(t, Diagnose(s, Inputs{Now: testNow}), "config-skew", Warning, "istiod cluster2 applies PeerAuthentication istio-system/default, istiod cluster1 has none")
	s.PeerAuthentications = nil
	s.MeshConfigs[1].TrustDomain = "other.local"
	want(t, Diagnose(s, Inputs{Now: testNow}), "config-skew", Warning, "mesh setting trustDomain differs between istiod cluster1", `"other.local"`)
}

func TestDiagnoseEastWestGateways(t *testing.T) {
	gw := func(s *model.Snapshot, c string) *model.ServiceInCluster {
		return s.Service("istio-eastwestgateway.istio-system.svc.cluster.local").Clusters[c]
	}
	s := mpSeed()
	gw(s, "cluster2").Labels[model.LabelGatewayPort] = "15444"
	s.Gateways = s.Gateways[:1]
	want(t, Diagnose(s, Inputs{Now: testNow}), "gateway-port", Error, "exposes neither port 15444", "networking.istio.io/gatewayPort", "15443 tls")

	s = mpSeed()
	s.Gateways = s.Gateways[:1]
	g := gw(s, "cluster2")
	g.LBPending, g.Created = true, testNow.Add(-20*time.Second)
	want(t, Diagnose(s, Inputs{Now: testNow}), "gateway-lb-pending", Info, "still waiting for its load balancer for 20s (error after 1m0s)")
	want(t, Diagnose(s, Inputs{Now: testNow.Add(2 * time.Minute)}), "gateway-lb-pending", Error, "has been waiting for its load balancer for 2m20s")

	s = mpSeed()
	gw(s, "cluster2").Endpoints[0].Ready = false
	want(t, Diagnose(s, Inputs{Now: testNow}), "gateway-not-ready", Error, "no ready pod behind it")

	s = mpSeed()
	s.Gateways[1].Address = s.Gateways[0].Address
	want(t, Diagnose(s, Inputs{Now: testNow}), "gateway-address-conflict", Error, "gateways of 2 networks share address 192.168.60.113")
}

func TestDiagnoseRemoteSecrets(t *testing.T) {
	s := mpSeed()
	// cluster1 holds a second secret for cluster2's API server, "cluster2-b".
	dup := s.Clusters[1]
	dup.ID, dup.Source = "cluster2-b", model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-b", In: "cluster1", Key: "cluster2-b"}
	dup.Sources, dup.SecretsRead = nil, false
	dup.Forbidden = []string{"nodes", "istiod pods"}
	s.Clusters = append(s.Clusters, dup)
	ps := Diagnose(s, Inputs{Now: testNow})
	want(t, ps, "remote-secret-duplicate", Error, "istiod cluster1 reads the API server https://127.0.0.1:6444 twice, as clusters cluster2 and cluster2-b")
	want(t, ps, "remote-secret-cluster-id", Error, `remote secret istio-system/istio-remote-secret-b in cluster1 calls the API server https://127.0.0.1:6444 "cluster2-b"`, `CLUSTER_ID "cluster2"`)
	p := want(t, ps, "remote-secret-rbac", Error, "may not list/watch nodes in cluster2-b", "grant get/list/watch on nodes")
	if strings.Contains(p.Sentence, "istiod pods") {
		t.Errorf("only what istiod needs: %s", p.Sentence)
	}
	// A second secret in cluster1 for cluster2's API server, under another
	// key, merged into the context cluster2.
	s = mpSeed()
	s.Clusters[1].Sources = append(s.Clusters[1].Sources, model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/alias", In: "cluster1", Key: "cluster2-alias"})
	want(t, Diagnose(s, Inputs{Now: testNow}), "remote-secret-duplicate", Error, `istiod cluster1 reads the API server https://127.0.0.1:6444 (cluster cluster2) twice, as "cluster2" from remote secret istio-system/istio-remote-secret-cluster2 and "cluster2-alias" from remote secret istio-system/alias`)
	// A secret in cluster1 for cluster1 itself under another ID.
	s = mpSeed()
	s.Clusters[0].Sources = append(s.Clusters[0].Sources, model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/self", In: "cluster1", Key: "c1-again"})
	want(t, Diagnose(s, Inputs{Now: testNow}), "remote-secret-duplicate", Error, `declares cluster "c1-again" for cluster1's own API server`)
}

func addPods(sic *model.ServiceInCluster, n int, ready bool) {
	for i := 0; i < n; i++ {
		e := sic.Endpoints[0]
		e.Address = fmt.Sprintf("10.144.1.%d", i)
		e.Pod = fmt.Sprintf("extra-%d", i)
		e.Ready = ready
		sic.Endpoints = append(sic.Endpoints, e)
	}
}

func TestDiagnoseSkewOnlyBeyondEndpointCounts(t *testing.T) {
	// Three pods in cluster2 against one in cluster1: 75% crosses, as the
	// counts say — not a problem.
	s := mpSeed()
	addPods(s.Services[0].Clusters["cluster2"], 2, true)
	if got := find(Diagnose(s, Inputs{Now: testNow}), "skew"); len(got) != 0 {
		t.Errorf("skew that follows endpoint counts: %+v", got)
	}
	// The cluster2 pod is not ready: istiod still counts it in the
	// gateway's weight, so half of network1's traffic goes to a network
	// with no healthy endpoint.
	s = mpSeed()
	s.Services[0].Clusters["cluster2"].Endpoints[0].Ready = false
	want(t, Diagnose(s, Inputs{Now: testNow}), "skew", Warning, "a network1 proxy sends 50% of its traffic across networks, but its endpoint counts give 0%", "counts 1 unhealthy endpoint", "threshold ±10 points")
	if got := find(Diagnose(s, Inputs{Now: testNow, SkewThreshold: 60}), "skew"); len(got) != 0 {
		t.Errorf("within a 60-point threshold: %+v", got)
	}
	// The same gateway in two locality groups: Envoy keeps one. That is a
	// duplicate-gateway error, and not said again as skew.
	s = mpSeed()
	sic := s.Services[0].Clusters["cluster2"]
	addPods(sic, 1, true)
	sic.Endpoints[1].Locality = "region2/zone-b"
	ps := Diagnose(s, Inputs{Now: testNow})
	want(t, ps, "duplicate-gateway", Error, "network2 gets 50 % of a network1 proxy's requests instead of 67 %", "istio#56355")
	if got := find(ps, "skew"); len(got) != 0 {
		t.Errorf("duplicate gateway entries reported as skew too: %+v", got)
	}
}

func TestGroupRepeatedCauses(t *testing.T) {
	s := mpSeed()
	sic := s.Services[0].Clusters["cluster2"]
	addPods(sic, 5, true)
	for i := range sic.Endpoints {
		sic.Endpoints[i].TLSMode = ""
	}
	ps := Diagnose(s, Inputs{Now: testNow})
	p := want(t, ps, "drop", Error, "6 endpoints in cluster2 are dropped for network1 proxies", "and 3 more", "lack security.istio.io/tlsMode=istio")
	if p.Count != 6 || len(p.Examples) != 3 {
		t.Errorf("count %d examples %v", p.Count, p.Examples)
	}
	// One occurrence keeps its own sentence.
	s = mpSeed()
	s.Services[0].Clusters["cluster2"].Endpoints[0].TLSMode = ""
	p = want(t, Diagnose(s, Inputs{Now: testNow}), "drop", Error, "10.144.0.15:5000 (helloworld-v2 in cluster2, network2) is dropped for network1")
	if p.Count != 0 {
		t.Errorf("single problem with count %d", p.Count)
	}
}

// sentFor is what a control plane that sends exactly the prediction sends.
func sentFor(s *model.Snapshot, cp string, vp xdsclient.Viewpoint) Sent {
	p := horizon.Predict(s.ForControlPlane(cp), hello, 5000, proxyOf(vp))
	la := xdsclient.LoadAssignment{Cluster: p.EDSCluster}
	for _, e := range p.Endpoints {
		x := xdsclient.Endpoint{Address: e.Address, Port: e.Port, Weight: e.Weight, Health: string(e.Health), Workload: xdsclient.Workload{Cluster: e.Cluster, Name: e.Pod}}
		if e.Kind == horizon.Gateway {
			x.Workload.Name = ""
		}
		la.Endpoints = append(la.Endpoints, x)
	}
	return Sent{ControlPlane: cp, Viewpoint: vp, EDS: map[string]xdsclient.LoadAssignment{p.EDSCluster: la}, Clusters: []string{p.EDSCluster}}
}

func TestDiagnoseSent(t *testing.T) {
	s := mpSeed()
	vp2 := xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2", ControlPlane: "cluster1"}
	sent := sentFor(s, "cluster1", vp2)
	if ps := Diagnose(s, Inputs{Now: testNow, Sent: []Sent{sent}}); len(ps) != 0 {
		t.Fatalf("istiod sends the prediction: %+v", ps)
	}
	// The cluster2 pod is gone, but istiod cluster1 still sends it.
	gone := mpSeed()
	gone.Services[0].Clusters["cluster2"].Endpoints = nil
	tr := &StaleTracker{}
	in := Inputs{Now: testNow, Since: testNow.Add(-time.Minute), Sent: []Sent{sent}, Stale: tr}
	want(t, Diagnose(gone, in), "stale-endpoint", Error, "istiod cluster1 still sends 10.144.0.15:5000 (workload helloworld-v2, cluster2)", "its pod of workload helloworld-v2 is gone",
		"stale for at least 1m0s (as long as meshscope has been watching)", "remote secret istio-system/istio-remote-secret-cluster2 in cluster1")
	in.Now = testNow.Add(30 * time.Second)
	want(t, Diagnose(gone, in), "stale-endpoint", Error, "stale for 30s")
	// Not ready, sent healthy.
	notReady := mpSeed()
	notReady.Services[0].Clusters["cluster2"].Endpoints[0].Ready = false
	want(t, Diagnose(notReady, Inputs{Now: testNow, Sent: []Sent{sent}}), "stale-endpoint", Error, "pod helloworld-v2 in cluster2 is not ready, but istiod sends it HEALTHY")
	// An endpoint missing for another reason: xds-differs with its cause.
	short := sent
	la := short.EDS[sent.Clusters[0]]
	la.Endpoints = la.Endpoints[1:]
	short.EDS = map[string]xdsclient.LoadAssignment{sent.Clusters[0]: la}
	want(t, Diagnose(s, Inputs{Now: testNow, Sent: []Sent{short}}), "xds-differs", Error, "istiod cluster1 → cluster2/network2@cluster1 proxy, helloworld.sample port 5000: istiod does not send")
	// Nothing arrived.
	want(t, Diagnose(s, Inputs{Now: testNow, Sent: []Sent{{ControlPlane: "cluster1", Viewpoint: vp2, Error: "no CDS"}}}), "istiod-unreachable", Warning, "no CDS")
}
