package explain

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

var testNow = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)

// mpSeed is the seed mesh in multi-primary (meshtest.LabMultiPrimary).
func mpSeed() *model.Snapshot { return meshtest.LabMultiPrimary(testNow) }

func find(ps []model.Problem, kind string) []model.Problem {
	var out []model.Problem
	for _, p := range ps {
		if string(p.Kind) == kind {
			out = append(out, p)
		}
	}
	return out
}

// want checks that exactly one problem of kind exists, with severity sev
// and every text in its sentence.
func want(t *testing.T, ps []model.Problem, kind string, sev model.Severity, texts ...string) model.Problem {
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

// diagnoseCase is a mesh with one thing changed and what Diagnose must
// say of it.
type diagnoseCase struct {
	name string
	seed func() *model.Snapshot       // nil: mpSeed
	edit func(*model.Snapshot)        // nil: the seed as it is
	in   func(*model.Snapshot) Inputs // nil: Inputs{Now: testNow}
	kind model.ProblemKind            // "": no problem at all
	sev  model.Severity
	// texts are in the one problem of kind; nil: no problem of kind.
	texts []string
	// n, when more than one, is how many problems of kind there are
	// (texts are in the first).
	n     int
	check func(t *testing.T, ps, got []model.Problem)
}

func (c diagnoseCase) run(t *testing.T) {
	t.Helper()
	seedFn := c.seed
	if seedFn == nil {
		seedFn = mpSeed
	}
	s := seedFn()
	if c.edit != nil {
		c.edit(s)
	}
	in := Inputs{Now: testNow}
	if c.in != nil {
		in = c.in(s)
	}
	ps := Diagnose(s, in)
	checkKinds(t, ps)
	var got []model.Problem
	switch {
	case c.kind == "":
		if len(ps) != 0 {
			t.Fatalf("want no problem, got %+v", ps)
		}
	case c.texts == nil && c.n == 0:
		if got = find(ps, string(c.kind)); len(got) != 0 {
			t.Fatalf("want no %s, got %+v", c.kind, got)
		}
	case c.n > 1:
		got = find(ps, string(c.kind))
		if len(got) != c.n {
			t.Fatalf("%d %s problems, want %d: %+v", len(got), c.kind, c.n, ps)
		}
		for _, p := range got {
			if p.Severity != c.sev {
				t.Errorf("%s is %s, want %s: %s", c.kind, p.Severity, c.sev, p.Sentence)
			}
		}
		for _, x := range c.texts {
			if !strings.Contains(got[0].Sentence, x) {
				t.Errorf("%s sentence lacks %q: %s", c.kind, x, got[0].Sentence)
			}
		}
	default:
		got = []model.Problem{want(t, ps, string(c.kind), c.sev, c.texts...)}
	}
	if c.check != nil {
		c.check(t, ps, got)
	}
}

// Edits of the seed meshes the cases share.
var (
	// cluster2's remote secret for cluster1 is deleted (the first case).
	dropSecretForCluster1 = func(s *model.Snapshot) { s.Clusters[0].Sources = s.Clusters[0].Sources[:1] }
	// cluster2 is known only from its remote secret in cluster1 (no
	// context: its secrets unread), and cluster2 holds none for cluster1.
	cluster2FromSecretOnly = func(s *model.Snapshot) {
		s.Clusters[1].Sources = nil
		s.Clusters[1].Source = model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster2", In: "cluster1", Key: "cluster2"}
		s.Clusters[1].SecretsRead = false
		s.Clusters[0].Sources = s.Clusters[0].Sources[:1]
	}
	clusterzOfCluster2 = model.IstiodView{ControlPlane: "cluster2", Clusters: []model.IstiodCluster{{ID: "cluster2", SyncStatus: "synced"}}}
	// cluster2 trusts another root, expiring in 10 days.
	otherRoot = func(s *model.Snapshot) {
		s.Clusters[1].RootCerts = []model.RootCert{{Fingerprint: strings.Repeat("cd", 32), Subject: "O=cluster.local", NotAfter: testNow.AddDate(0, 0, 10)}}
	}
	// and a rotation bundle that holds the other's root as well.
	bundleWithBothRoots = func(s *model.Snapshot) {
		otherRoot(s)
		s.Clusters[1].RootCerts = append(s.Clusters[1].RootCerts, s.Clusters[0].RootCerts...)
	}
	// sleep exists only in cluster1; cluster2 runs sidecars in sample.
	sleepInCluster1Only = func(s *model.Snapshot) {
		sleepPorts := []model.ServicePort{{Name: "http", Port: 80}}
		ep := model.Endpoint{Cluster: "cluster1", Network: "network1", Address: "10.44.0.14", Pod: "sleep-1", TLSMode: "istio", Ready: true,
			Ports: []model.EndpointPort{{Name: "http", Port: 80}}}
		s.Services = append(s.Services, &model.Service{Hostname: "sleep.sample.svc.cluster.local", Namespace: "sample", Name: "sleep", Ports: sleepPorts,
			Clusters: map[string]*model.ServiceInCluster{"cluster1": {Cluster: "cluster1", Ports: sleepPorts, Endpoints: []model.Endpoint{ep}}}})
		sortServices(s)
	}
	failover = &model.LocalityLbSetting{Failover: []struct {
		From string `json:"from"`
		To   string `json:"to"`
	}{{From: "region1", To: "region2"}}}
	// both primaries apply a DestinationRule with locality failover.
	failoverRules = func(s *model.Snapshot) {
		dr := model.DestinationRule{Cluster: "cluster1", Namespace: "sample", Name: "hello-failover", Host: "helloworld", LocalityLb: failover, Fingerprint: "1"}
		s.DestinationRules = []model.DestinationRule{dr, dr}
		s.DestinationRules[1].Cluster = "cluster2"
	}
	plainRule = model.DestinationRule{Cluster: "cluster1", Namespace: "sample", Name: "helloworld-plain", Host: "helloworld", TLSMode: "DISABLE", Fingerprint: "f1"}
	// the same rule in both primaries, with fingerprint f in cluster2.
	plainRuleInBoth = func(f string) func(*model.Snapshot) {
		return func(s *model.Snapshot) {
			s.DestinationRules = []model.DestinationRule{plainRule, plainRule}
			s.DestinationRules[1].Cluster, s.DestinationRules[1].Fingerprint = "cluster2", f
		}
	}
	eastWest = func(s *model.Snapshot, c string) *model.ServiceInCluster {
		return s.Service("istio-eastwestgateway.istio-system.svc.cluster.local").Clusters[c]
	}
	// cluster2's gateway waits 20 s for its load balancer.
	gatewayLBPending = func(s *model.Snapshot) {
		s.Gateways = s.Gateways[:1]
		g := eastWest(s, "cluster2")
		g.LBPending, g.Created = true, testNow.Add(-20*time.Second)
	}
	// cluster1 holds a second secret for cluster2's API server, "cluster2-b".
	secondSecretForCluster2 = func(s *model.Snapshot) {
		dup := s.Clusters[1]
		dup.ID, dup.Source = "cluster2-b", model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-b", In: "cluster1", Key: "cluster2-b"}
		dup.Sources, dup.SecretsRead = nil, false
		dup.Forbidden = []string{"nodes", "istiod pods"}
		s.Clusters = append(s.Clusters, dup)
	}
	// the cluster2 pod of helloworld is not ready.
	helloV2NotReady = func(s *model.Snapshot) { s.Services[0].Clusters["cluster2"].Endpoints[0].Ready = false }
	// the cluster2 pod of helloworld is gone.
	helloV2Gone = func(s *model.Snapshot) { s.Services[0].Clusters["cluster2"].Endpoints = nil }
	// vp2 is a cluster2 sidecar served by cluster1's istiod.
	vp2 = xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2", ControlPlane: "cluster1"}
	// sentSeed is what cluster1's istiod sends vp2 on the seed mesh: the prediction.
	sentSeed = func() Sent { return sentFor(mpSeed(), "cluster1", vp2) }
	sending  = func(sent ...Sent) func(*model.Snapshot) Inputs {
		return func(*model.Snapshot) Inputs { return Inputs{Now: testNow, Sent: sent} }
	}
	// noInputs is Diagnose's zero Inputs (the lab seed's cases).
	noInputs = func(*model.Snapshot) Inputs { return Inputs{} }
	noErrors = func(t *testing.T, ps, _ []model.Problem) {
		if HasErrors(ps) {
			t.Errorf("errors: %+v", ps)
		}
	}
	hasErrors = func(t *testing.T, ps, _ []model.Problem) {
		if !HasErrors(ps) {
			t.Error("exit status 1 expected")
		}
	}
	// lab seed: cluster2 is in error, cluster1 cannot read remote secrets,
	// network3 has a hostname gateway and cluster1's gateway Service gives none.
	clustersAndGatewaysBroken = func(s *model.Snapshot) {
		s.Clusters[1].State = model.StateError
		s.Clusters[1].Reason = "x509: certificate signed by unknown authority (TLS/CA mismatch)"
		s.Clusters[0].Warnings = []string{"cannot read remote secrets: forbidden"}
		s.Gateways = append(s.Gateways, model.Gateway{Network: "network3", Address: "gw.example.com", Port: 15443, Hostname: true})
		s.Gateways = s.Gateways[1:]
	}
	// lab seed with the VM service, its ServiceEntry selecting nothing, a
	// mesh config that does not parse and a ServiceEntry for helloworld's
	// host with another port name.
	serviceEntriesBroken = func(s *model.Snapshot) {
		withVM(s, "istio")
		s.Services[2].ServiceEntries[0].Endpoints = nil
		s.MeshConfigs = []model.MeshConfig{{Cluster: "cluster1", Source: "configmap istio-system/istio", Error: "mesh config: bad yaml"}}
		s.Services[0].ServiceEntries = []*model.ServiceEntryHost{{Cluster: "cluster1", Namespace: "sample", Name: "hw-extra", Resolution: "STATIC",
			Ports: []model.ServicePort{{Name: "web", Port: 5000}}, Endpoints: []model.Endpoint{{Address: "10.44.0.90"}}}}
	}
)

// TestDiagnose: every doctor check on a mesh with one thing wrong, and
// the same mesh without it.
func TestDiagnose(t *testing.T) {
	for _, c := range []diagnoseCase{
		{name: "healthy multi-primary"},
		{name: "healthy lab", seed: seed, in: noInputs},

		// Control planes and the clusters they read.
		{name: "remote secret missing", edit: dropSecretForCluster1, kind: model.ProblemControlPlaneMissingCluster, sev: model.SeverityError,
			texts: []string{"istiod cluster2 does not read cluster cluster1", "istio-remote-secret-cluster1", "network2", "network1", "1 service(s)", "helloworld.sample"},
			check: func(t *testing.T, ps, got []model.Problem) {
				if got[0].Cluster != "cluster2" {
					t.Errorf("concerns %s, want the control plane cluster2", got[0].Cluster)
				}
				hasErrors(t, ps, got)
			}},
		{name: "without clusterz the clusters of cluster2 are unknown", edit: cluster2FromSecretOnly, kind: model.ProblemControlPlaneMissingCluster},
		{name: "clusterz tells", edit: cluster2FromSecretOnly, kind: model.ProblemControlPlaneMissingCluster, sev: model.SeverityError,
			in: func(*model.Snapshot) Inputs {
				return Inputs{Now: testNow, Istiod: []model.IstiodView{clusterzOfCluster2}}
			},
			texts: []string{"istiod cluster2 does not read cluster cluster1", "/debug/clusterz lists only cluster2"}},
		{name: "cluster in error", seed: seed, edit: clustersAndGatewaysBroken, in: noInputs, kind: model.ProblemRemoteSecret, sev: model.SeverityError, texts: []string{"TLS/CA mismatch"},
			check: func(t *testing.T, ps, _ []model.Problem) {
				if ps[0].Severity != model.SeverityError {
					t.Errorf("errors must come first: %+v", ps[0])
				}
			}},
		{name: "cluster warning", seed: seed, edit: clustersAndGatewaysBroken, in: noInputs, kind: model.ProblemClusterWarning, sev: model.SeverityWarning, texts: []string{"forbidden"}},
		{name: "remote secret duplicate", edit: secondSecretForCluster2, kind: model.ProblemRemoteSecretDuplicate, sev: model.SeverityError,
			texts: []string{"istiod cluster1 reads the API server https://127.0.0.1:6444 twice, as clusters cluster2 and cluster2-b"}},
		{name: "remote secret cluster ID", edit: secondSecretForCluster2, kind: model.ProblemRemoteSecretClusterID, sev: model.SeverityError,
			texts: []string{`remote secret istio-system/istio-remote-secret-b in cluster1 calls the API server https://127.0.0.1:6444 "cluster2-b"`, `CLUSTER_ID "cluster2"`}},
		{name: "remote secret RBAC", edit: secondSecretForCluster2, kind: model.ProblemRemoteSecretRBAC, sev: model.SeverityError,
			texts: []string{"may not list/watch nodes in cluster2-b", "grant get/list/watch on nodes"},
			check: func(t *testing.T, _, got []model.Problem) {
				if strings.Contains(got[0].Sentence, "istiod pods") {
					t.Errorf("only what istiod needs: %s", got[0].Sentence)
				}
			}},
		// A second secret in cluster1 for cluster2's API server, under
		// another key, merged into the context cluster2.
		{name: "remote secret alias", kind: model.ProblemRemoteSecretDuplicate, sev: model.SeverityError,
			edit: func(s *model.Snapshot) {
				s.Clusters[1].Sources = append(s.Clusters[1].Sources, model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/alias", In: "cluster1", Key: "cluster2-alias"})
			},
			texts: []string{`istiod cluster1 reads the API server https://127.0.0.1:6444 (cluster cluster2) twice, as "cluster2" from remote secret istio-system/istio-remote-secret-cluster2 and "cluster2-alias" from remote secret istio-system/alias`}},
		{name: "remote secret for its own cluster", kind: model.ProblemRemoteSecretDuplicate, sev: model.SeverityError,
			edit: func(s *model.Snapshot) {
				s.Clusters[0].Sources = append(s.Clusters[0].Sources, model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/self", In: "cluster1", Key: "c1-again"})
			},
			texts: []string{`declares cluster "c1-again" for cluster1's own API server`}},

		// Root CAs.
		{name: "roots differ", edit: otherRoot, kind: model.ProblemRootCAMismatch, sev: model.SeverityError,
			texts: []string{"cluster cluster1 trusts root", "cluster cluster2 trusts root", "sha256 abababab", "sha256 cdcdcdcd", "share no root", "33554536"}},
		{name: "root expires", edit: otherRoot, kind: model.ProblemRootCAExpiry, sev: model.SeverityWarning, texts: []string{"expires on 2026-12-02 (in 10 days)", "cluster2"}},
		{name: "bundles sharing a root", edit: bundleWithBothRoots, kind: model.ProblemRootCAMismatch},
		{name: "root expired", kind: model.ProblemRootCAExpiry, sev: model.SeverityError, texts: []string{"expired on"},
			edit: func(s *model.Snapshot) {
				bundleWithBothRoots(s)
				s.Clusters[1].RootCerts[0].NotAfter = testNow.Add(-time.Hour)
			}},

		// Services across clusters.
		{name: "missing service", edit: sleepInCluster1Only, kind: model.ProblemMissingService, sev: model.SeverityError,
			texts: []string{"sleep.sample exists in cluster1 but not in cluster2", "helloworld-v2", "ISTIO_META_DNS_CAPTURE"}},
		{name: "missing service with DNS proxying", kind: model.ProblemMissingService,
			edit: func(s *model.Snapshot) {
				sleepInCluster1Only(s)
				for i := range s.MeshConfigs {
					s.MeshConfigs[i].DefaultConfig.ProxyMetadata = map[string]string{"ISTIO_META_DNS_CAPTURE": "true"}
				}
			}},
		{name: "inconsistent ports", kind: model.ProblemInconsistentService, sev: model.SeverityWarning,
			edit: func(s *model.Snapshot) {
				c2 := s.Services[0].Clusters["cluster2"]
				c2.Ports = []model.ServicePort{{Name: "tcp-web", Port: 5000}, {Name: "metrics", Port: 9090}}
				c2.Headless = true
			},
			texts: []string{"helloworld.sample differs between cluster1 and cluster2", `port 5000 is "http"/TCP in cluster1 but "tcp-web"/TCP in cluster2`, "port(s) 9090 only in cluster2", "headless in cluster2"}},
		{name: "inconsistent selector", kind: model.ProblemInconsistentService, sev: model.SeverityWarning,
			edit: func(s *model.Snapshot) {
				c2 := s.Services[0].Clusters["cluster2"]
				c2.Selector = map[string]string{"app": "helloworl"}
				c2.Endpoints = nil
			},
			texts: []string{"selector app=helloworl in cluster2 selects no endpoint, while app=helloworld in cluster1 selects 1"}},

		// Locality failover.
		{name: "failover without outlier detection", edit: failoverRules, kind: model.ProblemLocalityFailover, sev: model.SeverityWarning, n: 2,
			texts: []string{"DestinationRule sample/hello-failover", "failover (region1→region2) for helloworld but no outlierDetection"}},
		{name: "failover with outlier detection", kind: model.ProblemLocalityFailover,
			edit: func(s *model.Snapshot) {
				failoverRules(s)
				for i := range s.DestinationRules {
					s.DestinationRules[i].OutlierDetection = true
				}
			}},
		{name: "mesh-wide failover", kind: model.ProblemLocalityFailover, sev: model.SeverityWarning,
			edit:  func(s *model.Snapshot) { s.MeshConfigs[0].LocalityLbSetting = failover },
			texts: []string{"the mesh config of istiod cluster1 sets locality failover", "helloworld.sample has no DestinationRule"}},

		// Config skew between primaries.
		{name: "a rule in one primary", kind: model.ProblemConfigSkew, sev: model.SeverityWarning,
			edit:  func(s *model.Snapshot) { s.DestinationRules = []model.DestinationRule{plainRule} },
			texts: []string{"helloworld.sample: istiod cluster1 applies DestinationRule sample/helloworld-plain, istiod cluster2 has none"}},
		{name: "the same rule in both", edit: plainRuleInBoth("f1"), kind: model.ProblemConfigSkew},
		{name: "the rule differs", edit: plainRuleInBoth("f2"), kind: model.ProblemConfigSkew, sev: model.SeverityWarning,
			texts: []string{"DestinationRule sample/helloworld-plain differs between istiod cluster1 and istiod cluster2"}},
		{name: "a PeerAuthentication in one primary", kind: model.ProblemConfigSkew, sev: model.SeverityWarning,
			edit: func(s *model.Snapshot) {
				s.PeerAuthentications = []model.PeerAuthentication{{Cluster: "cluster2", Namespace: "istio-system", Name: "default", Mode: "STRICT", Fingerprint: "p"}}
			},
			texts: []string{"istiod cluster2 applies PeerAuthentication istio-system/default, istiod cluster1 has none"}},
		{name: "a mesh setting differs", kind: model.ProblemConfigSkew, sev: model.SeverityWarning,
			edit:  func(s *model.Snapshot) { s.MeshConfigs[1].TrustDomain = "other.local" },
			texts: []string{"mesh setting trustDomain differs between istiod cluster1", `"other.local"`}},

		// East-west gateways.
		{name: "gateway port", kind: model.ProblemGatewayPort, sev: model.SeverityError,
			edit: func(s *model.Snapshot) {
				eastWest(s, "cluster2").Labels[model.LabelGatewayPort] = "15444"
				s.Gateways = s.Gateways[:1]
			},
			texts: []string{"exposes neither port 15444", "networking.istio.io/gatewayPort", "15443 tls"}},
		{name: "gateway LB pending", edit: gatewayLBPending, kind: model.ProblemGatewayLBPending, sev: model.SeverityInfo,
			texts: []string{"still waiting for its load balancer for 20s (error after 1m0s)"}},
		{name: "gateway LB pending too long", edit: gatewayLBPending, kind: model.ProblemGatewayLBPending, sev: model.SeverityError,
			in:    func(*model.Snapshot) Inputs { return Inputs{Now: testNow.Add(2 * time.Minute)} },
			texts: []string{"has been waiting for its load balancer for 2m20s"}},
		{name: "gateway not ready", kind: model.ProblemGatewayNotReady, sev: model.SeverityError,
			edit:  func(s *model.Snapshot) { eastWest(s, "cluster2").Endpoints[0].Ready = false },
			texts: []string{"no ready pod behind it"}},
		{name: "gateway address conflict", kind: model.ProblemGatewayAddressConflict, sev: model.SeverityError,
			edit:  func(s *model.Snapshot) { s.Gateways[1].Address = s.Gateways[0].Address },
			texts: []string{"gateways of 2 networks share address 192.168.60.113"}},
		{name: "gateway hostname", seed: seed, edit: clustersAndGatewaysBroken, in: noInputs, kind: model.ProblemGatewayHostname, sev: model.SeverityWarning, texts: []string{"gw.example.com"}},
		{name: "gateway no address", seed: seed, edit: clustersAndGatewaysBroken, in: noInputs, kind: model.ProblemGatewayNoAddress, sev: model.SeverityError, texts: []string{"cluster1"}},
		// The same gateway in two locality groups: Envoy keeps one.
		{name: "duplicate gateway", seed: twoZones, in: noInputs, kind: model.ProblemDuplicateGateway, sev: model.SeverityError,
			texts: []string{"network2 gets 50 % of a network1 proxy's requests instead of 67 % (and network1 50 % instead of 33 %): Envoy keeps only the first of 2 gateway entries for 192.168.60.9:15443 (one per locality: region2/zone-b, region2/zone-c) — istio#56355",
				"topology.istio.io/locality"},
			check: hasErrors},
		{name: "one zone: no duplicate gateway", seed: seed, in: noInputs, kind: model.ProblemDuplicateGateway},
		// A duplicate-gateway error is not said again as skew.
		{name: "duplicate gateway, not skew", kind: model.ProblemDuplicateGateway, sev: model.SeverityError,
			edit: func(s *model.Snapshot) {
				sic := s.Services[0].Clusters["cluster2"]
				addPods(sic, 1, true)
				sic.Endpoints[1].Locality = "region2/zone-b"
			},
			texts: []string{"network2 gets 50 % of a network1 proxy's requests instead of 67 %", "istio#56355"},
			check: func(t *testing.T, ps, _ []model.Problem) {
				if got := find(ps, "skew"); len(got) != 0 {
					t.Errorf("duplicate gateway entries reported as skew too: %+v", got)
				}
			}},

		// Endpoints leaked, dropped, skewed.
		// Network2's gateway Service loses its network label: no gateway
		// for network2, and its pod IP leaks to network1.
		{name: "leak", seed: seed, in: noInputs, kind: model.ProblemLeak, sev: model.SeverityError, texts: []string{"no gateway is known for network2"}, check: hasErrors,
			edit: func(s *model.Snapshot) {
				s.Gateways = s.Gateways[:1]
				delete(s.Services[1].Clusters["cluster2"].Labels, model.LabelNetwork)
			}},
		// The cluster2 pod loses its tlsMode label: dropped from network1.
		{name: "drop", seed: seed, in: noInputs, kind: model.ProblemDrop, sev: model.SeverityError, texts: []string{"helloworld-v2"},
			edit: func(s *model.Snapshot) { s.Services[0].Clusters["cluster2"].Endpoints[0].TLSMode = "" }},
		{name: "drops grouped", kind: model.ProblemDrop, sev: model.SeverityError,
			edit: func(s *model.Snapshot) {
				sic := s.Services[0].Clusters["cluster2"]
				addPods(sic, 5, true)
				for i := range sic.Endpoints {
					sic.Endpoints[i].TLSMode = ""
				}
			},
			texts: []string{"6 endpoints in cluster2 are dropped for network1 proxies", "and 3 more", "lack security.istio.io/tlsMode=istio"},
			check: func(t *testing.T, _, got []model.Problem) {
				if got[0].Count != 6 || len(got[0].Examples) != 3 {
					t.Errorf("count %d examples %v", got[0].Count, got[0].Examples)
				}
			}},
		// One occurrence keeps its own sentence.
		{name: "one drop", kind: model.ProblemDrop, sev: model.SeverityError,
			edit:  func(s *model.Snapshot) { s.Services[0].Clusters["cluster2"].Endpoints[0].TLSMode = "" },
			texts: []string{"10.144.0.15:5000 (helloworld-v2 in cluster2, network2) is dropped for network1"},
			check: func(t *testing.T, _, got []model.Problem) {
				if got[0].Count != 0 {
					t.Errorf("single problem with count %d", got[0].Count)
				}
			}},
		// Three pods in cluster2 against one in cluster1: 75% crosses,
		// as the counts say — not a problem.
		{name: "skew that follows endpoint counts", kind: model.ProblemSkew,
			edit: func(s *model.Snapshot) { addPods(s.Services[0].Clusters["cluster2"], 2, true) }},
		{name: "skew that follows endpoint counts (lab)", seed: seed, in: noInputs, kind: model.ProblemSkew, check: noErrors,
			edit: func(s *model.Snapshot) {
				sic := s.Services[0].Clusters["cluster2"]
				for _, ip := range []string{"10.144.0.20", "10.144.0.21"} {
					e := sic.Endpoints[0]
					e.Address = ip
					sic.Endpoints = append(sic.Endpoints, e)
				}
			}},
		// The cluster2 pod is not ready: istiod still counts it in the
		// gateway's weight, so half of network1's traffic goes to a
		// network with no healthy endpoint.
		{name: "skew from an unhealthy endpoint", edit: helloV2NotReady, kind: model.ProblemSkew, sev: model.SeverityWarning,
			texts: []string{"a network1 proxy sends 50% of its traffic across networks, but its endpoint counts give 0%", "counts 1 unhealthy endpoint", "threshold ±10 points"}},
		{name: "skew within the threshold", edit: helloV2NotReady, kind: model.ProblemSkew,
			in: func(*model.Snapshot) Inputs { return Inputs{Now: testNow, SkewThreshold: 60} }},

		// ServiceEntries and mesh config (lab seed).
		{name: "WorkloadEntry without mTLS", seed: seed, in: noInputs, kind: model.ProblemDrop, sev: model.SeverityError, texts: []string{"give WorkloadEntry/vm-2 a serviceAccount"},
			edit: func(s *model.Snapshot) { withVM(s, "disabled") }},
		{name: "ServiceEntry selects nothing", seed: seed, edit: serviceEntriesBroken, in: noInputs, kind: model.ProblemServiceEntryNoWorkloads, sev: model.SeverityWarning,
			texts: []string{"ServiceEntry sample/vm selects no WorkloadEntry"}},
		{name: "mesh config does not parse", seed: seed, edit: serviceEntriesBroken, in: noInputs, kind: model.ProblemMeshConfig, sev: model.SeverityWarning, texts: []string{"bad yaml"}},
		{name: "ServiceEntry port name", seed: seed, edit: serviceEntriesBroken, in: noInputs, kind: model.ProblemServiceEntryPortName, sev: model.SeverityWarning,
			texts: []string{`named "web" but the Kubernetes Service`}},

		// What istiod sends, against the prediction.
		{name: "istiod sends the prediction", in: sending(sentSeed())},
		// The cluster2 pod is gone, but istiod cluster1 still sends it.
		{name: "stale endpoint", edit: helloV2Gone, kind: model.ProblemStaleEndpoint, sev: model.SeverityError,
			in: func(*model.Snapshot) Inputs {
				return Inputs{Now: testNow, Since: testNow.Add(-time.Minute), Sent: []Sent{sentSeed()}, Stale: &StaleTracker{}}
			},
			texts: []string{"istiod cluster1 still sends 10.144.0.15:5000 (workload helloworld-v2, cluster2)", "its pod of workload helloworld-v2 is gone",
				"stale for at least 1m0s (as long as meshscope has been watching)", "remote secret istio-system/istio-remote-secret-cluster2 in cluster1"}},
		{name: "not ready, sent healthy", edit: helloV2NotReady, in: sending(sentSeed()), kind: model.ProblemStaleEndpoint, sev: model.SeverityError,
			texts: []string{"pod helloworld-v2 in cluster2 is not ready, but istiod sends it HEALTHY"}},
		// An endpoint missing for another reason: xds-differs with its cause.
		{name: "xds differs", kind: model.ProblemXDSDiffers, sev: model.SeverityError,
			in: func(*model.Snapshot) Inputs {
				short := sentSeed()
				la := short.EDS[short.Clusters[0]]
				la.Endpoints = la.Endpoints[1:]
				short.EDS = map[string]xdsclient.LoadAssignment{short.Clusters[0]: la}
				return Inputs{Now: testNow, Sent: []Sent{short}}
			},
			texts: []string{"istiod cluster1 → cluster2/network2@cluster1 proxy, helloworld.sample port 5000: istiod does not send"}},
		{name: "nothing arrived", in: sending(Sent{ControlPlane: "cluster1", Viewpoint: vp2, Error: "no CDS"}), kind: model.ProblemIstiodUnreachable, sev: model.SeverityWarning,
			texts: []string{"no CDS"}},
	} {
		t.Run(c.name, c.run)
	}
}

// Explain for a control plane that does not read cluster1 predicts from
// cluster2 alone and says why; cluster1's reads both.
func TestExplainWithoutRemoteSecret(t *testing.T) {
	s := mpSeed()
	dropSecretForCluster1(s)
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

// Without cluster2's secrets (no context), its istiod's clusterz tells
// which clusters it reads; explain predicts from what clusterz lists.
func TestExplainFromClusterz(t *testing.T) {
	s := mpSeed()
	cluster2FromSecretOnly(s)
	if got := plane.NewSet(s, nil).Unknown(); len(got) != 1 || got[0] != "cluster2" {
		t.Errorf("unknown control planes %v, want cluster2", got)
	}
	cz := clusterzOfCluster2
	if got := plane.NewSet(s, []model.IstiodView{cz}).Unknown(); len(got) != 0 {
		t.Errorf("clusterz tells: %v", got)
	}
	v := ExplainWith(plane.NewSet(s, []model.IstiodView{cz}), hello, 5000, xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2"}, "cluster2", nil, Extra{})
	if len(v.Predicted) != 1 || len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "its /debug/clusterz does not list it") {
		t.Errorf("predicted %+v notes %q", v.Predicted, v.Notes)
	}
}

// A stale endpoint's age counts from when the tracker first saw it.
func TestDiagnoseStaleFor(t *testing.T) {
	gone := mpSeed()
	helloV2Gone(gone)
	in := Inputs{Now: testNow, Since: testNow.Add(-time.Minute), Sent: []Sent{sentSeed()}, Stale: &StaleTracker{}}
	want(t, Diagnose(gone, in), "stale-endpoint", model.SeverityError, "stale for at least 1m0s")
	in.Now = testNow.Add(30 * time.Second)
	want(t, Diagnose(gone, in), "stale-endpoint", model.SeverityError, "stale for 30s")
}

func sortServices(s *model.Snapshot) {
	for i := 1; i < len(s.Services); i++ {
		for j := i; j > 0 && s.Services[j].Hostname < s.Services[j-1].Hostname; j-- {
			s.Services[j], s.Services[j-1] = s.Services[j-1], s.Services[j]
		}
	}
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

// sentFor is what a control plane that sends exactly the prediction sends.
func sentFor(s *model.Snapshot, cp string, vp xdsclient.Viewpoint) Sent {
	p := horizon.Predict(s.ForControlPlane(cp), hello, 5000, horizon.ProxyOf(vp))
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
