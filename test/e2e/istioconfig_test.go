package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/gatewayhop"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Istio config of the scenarios (in cluster1, the config cluster of the
// istiod the probes ask).
const (
	vmServiceEntry = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: vm, namespace: sample}
spec:
  hosts: [vm.mesh.internal]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 8080, name: http, protocol: HTTP}]
  workloadSelector: {labels: {app: vm}}
`
	dnsServiceEntry = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: sample}
spec:
  hosts: [api.example.com]
  resolution: DNS
  ports: [{number: 443, name: tls, protocol: TLS}]
`
	subsetRule = `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: helloworld-subsets, namespace: sample}
spec:
  host: helloworld
  subsets:
  - {name: v1, labels: {version: v1}}
  - {name: v2, labels: {version: v2}}
  - name: in-cluster2
    labels: {topology.istio.io/cluster: cluster2}
    trafficPolicy: {tls: {mode: DISABLE}}
`
	teamPeerAuthentication = `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: team-blue-plaintext, namespace: sample}
spec:
  selector: {matchLabels: {team: blue}}
  mtls: {mode: DISABLE}
`
	clusterLocalMesh = lab.MeshConfigText + `serviceSettings:
- settings: {clusterLocal: true}
  hosts: ["*.sample.svc.cluster.local"]
`
)

// vmKubeService is a Kubernetes Service that VMs join through
// WorkloadEntries with its selector's labels (no pods match it); its port
// targets the entries' port named web.
const vmKubeService = `apiVersion: v1
kind: Service
metadata: {name: vm-kube, namespace: sample}
spec:
  selector: {app: vm-kube}
  ports: [{name: http, port: 8080, targetPort: web}]
`

func vmKubeWorkloadEntry(name, ip, network string) string {
	return fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: %s, namespace: sample}
spec: {address: %s, network: %s, serviceAccount: vm, labels: {app: vm-kube}, ports: {web: 9080}}
`, name, ip, network)
}

// sidecarResource is a Sidecar resource with one egress listener (port 0:
// none) in namespace ns.
func sidecarResource(ns string, port int, hosts ...string) string {
	listener := ""
	if port != 0 {
		listener = fmt.Sprintf("port: {number: %d, protocol: HTTP, name: http-%d}, ", port, port)
	}
	return fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: narrow, namespace: %s}
spec:
  egress: [{%shosts: [%s]}]
`, ns, listener, `"`+strings.Join(hosts, `", "`)+`"`)
}

func vmWorkloadEntry(name, ip, network string) string {
	return fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: %s, namespace: sample}
spec: {address: %s, network: %s, serviceAccount: vm, labels: {app: vm}}
`, name, ip, network)
}

// TestIstioConfigScenarios: services from Istio config, the mesh
// config, DestinationRule subsets, PeerAuthentication selectors on any
// label and exportTo, each seen from a network1 sidecar, a network2
// sidecar and a proxy without NETWORK against the real istiod: what istiod
// sends equals the expected EDS and meshscope's prediction (explain
// verdict match).
func TestIstioConfigScenarios(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	str := func(s string) *string { return &s }
	// each applies op to every document, in cluster1.
	// each applies op to every document in cluster (cluster1: the config
	// cluster of the istiod the probes ask; cluster2: a remote cluster).
	each := func(cluster string, op func(context.Context, string, string) error, docs ...string) func() error {
		return func() error {
			for _, d := range docs {
				if err := op(ctx, cluster, d); err != nil {
					return err
				}
			}
			return nil
		}
	}
	apply := func(docs ...string) func() error { return each("cluster1", theLab.ApplyIstioConfig, docs...) }
	remove := func(docs ...string) func() error { return each("cluster1", theLab.DeleteIstioConfig, docs...) }
	kubeVMDocs := []string{vmKubeService, vmKubeWorkloadEntry("vmk-net1", "10.44.0.90", "network1"), vmKubeWorkloadEntry("vmk-net2", "10.144.0.90", "network2")}
	remoteVMDocs := []string{vmKubeService, vmKubeWorkloadEntry("vmk-remote", "10.144.0.91", "network2")}
	vmDocs := []string{vmServiceEntry, vmWorkloadEntry("vm-net1", "10.44.0.80", "network1"), vmWorkloadEntry("vm-net2", "10.144.0.80", "network2")}
	noneDocs := []string{strings.NewReplacer("name: vm,", "name: vm-none,", "STATIC", "NONE", "vm.mesh.internal", "vm-none.mesh.internal").Replace(vmServiceEntry),
		vmWorkloadEntry("vm-net1", "10.44.0.80", "network1"), vmWorkloadEntry("vm-net2", "10.144.0.80", "network2")}
	noNetworkDocs := []string{vmServiceEntry, vmWorkloadEntry("vm-anywhere", "10.99.0.1", "")}
	vmPod := lab.PodSpec{Namespace: lab.SampleNamespace, Name: "vm-like-pod", IP: "10.144.0.81", Labels: map[string]string{"app": "vm", lab.TLSModeLabel: "istio", lab.NetworkLabel: "network2"}}
	pod2 := lab.HelloworldPod("cluster2")
	exportTo := func(v *string) func() error {
		return func() error {
			for _, c := range []string{"cluster1", "cluster2"} {
				if err := theLab.SetAnnotation(ctx, c, lab.KindService, lab.SampleNamespace, "helloworld", "networking.istio.io/exportTo", v); err != nil {
					return err
				}
			}
			return nil
		}
	}
	const hello = "helloworld.sample.svc.cluster.local"
	ownNSOnly := sidecarResource("default", 0, "./*", "istio-system/*")
	rootOnly := sidecarResource("istio-system", 0, "./*")
	byName := sidecarResource("default", 0, "sample/"+hello)
	otherPort := sidecarResource("default", 9999, "*/*")
	excluding := sidecarResource("default", 0, "*/*", "~sample/"+hello)
	// A VirtualService the Sidecar selects imports its destinations.
	vsRoute := func(ns, match string) string {
		return fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: to-helloworld, namespace: %s}
spec:
  hosts: [%s]
  http: [{%sroute: [{destination: {host: %s}}]}]
`, ns, hello, match, hello)
	}
	viaVS := []string{ownNSOnly, vsRoute("default", "")}
	viaVSOtherSource := []string{ownNSOnly, vsRoute("default", "match: [{sourceNamespace: other}], ")}
	viaVSOtherNS := []string{ownNSOnly, vsRoute("sample", "")}
	type scenario struct {
		name        string
		apply, undo func() error
		host        string
		port        int32
		subset      string
		namespace   string    // the probes' namespace ("": default)
		want        [3]string // network1, network2, no NETWORK: "address:port w=N", sorted, comma-joined
		// broken, per viewpoint, is text the second hop of a gateway
		// endpoint must say where it breaks (the verdict is then broken;
		// "": match). Only cluster1's gateway is checked: the registry
		// reads cluster2's objects, not its istiod's Istio config.
		broken [3]string
		// noEndpoints, if set, is text the prediction's NoEndpoints must hold.
		noEndpoints string
		// ready, if set, says when meshscope has seen the change (for a
		// want that equals the fixture's).
		ready func(*model.Snapshot) bool
		// scoped: the change moves the service in or out of the proxy's
		// scope, which istiod tells a connected proxy through CDS only (an
		// Envoy then subscribes to the new cluster's EDS; the probe is
		// subscribed already and would keep a stale answer): a probe whose
		// answer differs reconnects, as a new proxy gets istiod's current
		// answer.
		scoped bool
	}
	scenarios := []scenario{
		{
			name: "VM service on two networks (ServiceEntry + WorkloadEntries)", apply: apply(vmDocs...), undo: remove(vmDocs...),
			host: "vm.mesh.internal", port: 8080,
			want:   [3]string{"10.44.0.80:8080 w=1,192.168.60.9:15443 w=1", "10.144.0.80:8080 w=1,192.168.60.113:15443 w=1", "192.168.60.113:15443 w=1,192.168.60.9:15443 w=1"},
			broken: [3]string{"", vmOutsideHosts, vmOutsideHosts},
		},
		{
			name: "VM service with a pod of cluster2 picked by its workloadSelector",
			apply: func() error {
				if err := apply(vmDocs...)(); err != nil {
					return err
				}
				return theLab.AddPod(ctx, "cluster2", vmPod)
			},
			undo: func() error {
				if err := theLab.RemovePod(ctx, "cluster2", vmPod.Namespace, vmPod.Name); err != nil {
					return err
				}
				return remove(vmDocs...)()
			},
			host: "vm.mesh.internal", port: 8080,
			want:   [3]string{"10.44.0.80:8080 w=1,192.168.60.9:15443 w=2", "10.144.0.80:8080 w=1,10.144.0.81:8080 w=1,192.168.60.113:15443 w=1", "192.168.60.113:15443 w=1,192.168.60.9:15443 w=2"},
			broken: [3]string{"", vmOutsideHosts, vmOutsideHosts},
		},
		{
			name: "ServiceEntry with resolution NONE: istiod still answers EDS with its workloads", apply: apply(noneDocs...), undo: remove(noneDocs...),
			host: "vm-none.mesh.internal", port: 8080,
			want:   [3]string{"10.44.0.80:8080 w=1,192.168.60.9:15443 w=1", "10.144.0.80:8080 w=1,192.168.60.113:15443 w=1", "192.168.60.113:15443 w=1,192.168.60.9:15443 w=1"},
			broken: [3]string{"", "(*.local) do not match vm-none.mesh.internal", "(*.local) do not match vm-none.mesh.internal"},
		},
		{
			name: "WorkloadEntry without network: reached directly from everywhere", apply: apply(noNetworkDocs...), undo: remove(noNetworkDocs...),
			host: "vm.mesh.internal", port: 8080,
			want: [3]string{"10.99.0.1:8080 w=1", "10.99.0.1:8080 w=1", "10.99.0.1:8080 w=1"},
		},
		{
			name: "Kubernetes Service selecting WorkloadEntries on two networks (named targetPort)", apply: apply(kubeVMDocs...), undo: remove(kubeVMDocs...),
			host: "vm-kube.sample.svc.cluster.local", port: 8080,
			want: [3]string{"10.44.0.90:9080 w=1,192.168.60.9:15443 w=1", "10.144.0.90:9080 w=1,192.168.60.113:15443 w=1", "192.168.60.113:15443 w=1,192.168.60.9:15443 w=1"},
		},
		{
			name: "Kubernetes Service of a remote cluster selecting that cluster's WorkloadEntry", apply: each("cluster2", theLab.ApplyIstioConfig, remoteVMDocs...), undo: each("cluster2", theLab.DeleteIstioConfig, remoteVMDocs...),
			host: "vm-kube.sample.svc.cluster.local", port: 8080,
			want: [3]string{"192.168.60.9:15443 w=1", "10.144.0.91:9080 w=1", "192.168.60.9:15443 w=1"},
		},
		{
			name: "Sidecar of the proxy's namespace importing its own namespace only", apply: apply(ownNSOnly), undo: remove(ownNSOnly), scoped: true,
			host: hello, port: 5000, noEndpoints: "does not import helloworld.sample.svc.cluster.local",
		},
		{
			name: "root namespace Sidecar importing its own namespace only", apply: apply(rootOnly), undo: remove(rootOnly), scoped: true,
			host: hello, port: 5000, noEndpoints: "Sidecar istio-system/narrow",
		},
		{
			name: "Sidecar importing the service by name", apply: apply(byName), undo: remove(byName), scoped: true,
			host: hello, port: 5000,
			want:  [3]string{seedEDSNetwork1, seedEDSNetwork2, "192.168.60.113:15443 w=1,192.168.60.9:15443 w=1"},
			ready: func(s *model.Snapshot) bool { return len(s.Sidecars) == 1 },
		},
		{
			name: "Sidecar listener on another port", apply: apply(otherPort), undo: remove(otherPort), scoped: true,
			host: hello, port: 5000, noEndpoints: "for port 5000",
		},
		{
			name: "Sidecar importing only its namespace, and a VirtualService there routing to the service", apply: apply(viaVS...), undo: remove(viaVS...), scoped: true,
			host: hello, port: 5000,
			want:  [3]string{seedEDSNetwork1, seedEDSNetwork2, "192.168.60.113:15443 w=1,192.168.60.9:15443 w=1"},
			ready: func(s *model.Snapshot) bool { return len(s.Sidecars) == 1 && len(s.VirtualServices) == 1 },
		},
		{
			name: "the same VirtualService route for another source namespace", apply: apply(viaVSOtherSource...), undo: remove(viaVSOtherSource...), scoped: true,
			host: hello, port: 5000, noEndpoints: "does not import",
			ready: func(s *model.Snapshot) bool { return len(s.VirtualServices) == 1 },
		},
		{
			name: "a VirtualService in a namespace the Sidecar does not import", apply: apply(viaVSOtherNS...), undo: remove(viaVSOtherNS...), scoped: true,
			host: hello, port: 5000, noEndpoints: "does not import",
			ready: func(s *model.Snapshot) bool { return len(s.VirtualServices) == 1 },
		},
		{
			name: "Sidecar excluding the service", apply: apply(excluding), undo: remove(excluding), scoped: true,
			host: hello, port: 5000, noEndpoints: "~sample/helloworld",
		},
		{
			name: "DNS ServiceEntry: no EDS", apply: apply(dnsServiceEntry), undo: remove(dnsServiceEntry),
			host: "api.example.com", port: 443, noEndpoints: "resolution DNS",
		},
		{
			name:  "cluster-local hosts from meshConfig serviceSettings (wildcard)",
			apply: func() error { return theLab.SetMeshConfig(ctx, "cluster1", clusterLocalMesh) },
			undo:  func() error { return theLab.SetMeshConfig(ctx, "cluster1", lab.MeshConfigText) },
			host:  hello, port: 5000,
			want: [3]string{"10.44.0.13:5000 w=1", "10.144.0.15:5000 w=1", "192.168.60.113:15443 w=1"},
		},
		{
			name: "DestinationRule subset v2", apply: apply(subsetRule), undo: remove(subsetRule),
			host: hello, port: 5000, subset: "v2",
			want: [3]string{"192.168.60.9:15443 w=1", "10.144.0.15:5000 w=1", "192.168.60.9:15443 w=1"},
		},
		{
			name: "DestinationRule subset on istiod's cluster label, with its own TLS off", apply: apply(subsetRule), undo: remove(subsetRule),
			host: hello, port: 5000, subset: "in-cluster2",
			want: [3]string{"", "10.144.0.15:5000 w=1", ""},
		},
		{
			name: "PeerAuthentication selecting a label of the team's own",
			apply: func() error {
				if err := theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, "team", str("blue")); err != nil {
					return err
				}
				return apply(teamPeerAuthentication)()
			},
			undo: func() error {
				if err := remove(teamPeerAuthentication)(); err != nil {
					return err
				}
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, "team", nil)
			},
			host: hello, port: 5000,
			want: [3]string{"10.44.0.13:5000 w=1", seedEDSNetwork2, "192.168.60.113:15443 w=1"},
		},
		{
			name: "exportTo . seen from namespace default", apply: exportTo(str(".")), undo: exportTo(nil),
			host: hello, port: 5000, noEndpoints: "exported to . only",
		},
		{
			name: "exportTo . seen from namespace sample", apply: exportTo(str(".")), undo: exportTo(nil),
			host: hello, port: 5000, namespace: lab.SampleNamespace,
			want: [3]string{seedEDSNetwork1, seedEDSNetwork2, "192.168.60.113:15443 w=1,192.168.60.9:15443 w=1"},
			// The gateway (istio-system) does not see the service either:
			// a sidecar of sample sends the SNI, the gateway has no chain.
			broken: [3]string{"", hiddenFromGateway, hiddenFromGateway},
			ready: func(s *model.Snapshot) bool {
				svc := s.Service(hello)
				return svc != nil && len(svc.Clusters["cluster1"].ExportTo) == 1 && len(svc.Clusters["cluster2"].ExportTo) == 1
			},
		},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			withChange(t, sc.apply, sc.undo)
			eds := horizon.SubsetClusterName(sc.host, sc.subset, sc.port)
			vps := []xdsclient.Viewpoint{
				{Cluster: "cluster1", Network: "network1", Namespace: sc.namespace},
				{Cluster: "cluster2", Network: "network2", Namespace: sc.namespace},
				{Cluster: "cluster1", NoNetwork: true, Namespace: sc.namespace},
			}
			probes := make([]*probe, len(vps))
			for i, vp := range vps {
				probes[i] = startProbe(t, vp, xdsclient.ModeDelta, eds)
			}
			restarted := time.Now()
			eventually(t, 30*time.Second, func() string {
				snap := reg.Snapshot()
				if sc.ready != nil && !sc.ready(snap) {
					return "meshscope has not seen the change yet"
				}
				for i, vp := range vps {
					la, ok := probes[i].c.LoadAssignment(eds)
					if !ok {
						return vp.String() + ": no EDS yet"
					}
					got := strings.Join(probes[i].eds(eds), ",")
					// A change that takes the service out of the proxy's
					// scope (a Sidecar resource) reaches a connected proxy
					// as the cluster's removal from CDS, with no new EDS: a
					// real Envoy drops the cluster and its endpoints.
					if cds := probes[i].c.Clusters(); len(cds) > 0 && !slices.ContainsFunc(cds, func(c xdsclient.Cluster) bool { return c.Name == eds }) {
						la, got = xdsclient.LoadAssignment{Cluster: eds}, ""
					}
					if got != sc.want[i] {
						if sc.scoped && time.Since(restarted) > time.Second {
							probes[i], restarted = startProbe(t, vp, xdsclient.ModeDelta, eds), time.Now()
						}
						return fmt.Sprintf("%s: istiod sends %q, want %q", vp, got, sc.want[i])
					}
					v := explain.ExplainWith(plane.NewSet(snap, nil), sc.host, sc.port, vp, "cluster1", &la, explain.Extra{Subset: sc.subset})
					if want := verdictWanted(sc.broken[i]); v.Verdict != want || !hopSays(v, sc.broken[i]) {
						return fmt.Sprintf("%s: meshscope predicts %v (dropped %v), verdict %s (want %s, second hop %q): %+v %+v", vp, v.Predicted, v.Dropped, v.Verdict, want, sc.broken[i], v.Differences, v.SecondHop)
					}
					if !strings.Contains(v.NoEndpoints, sc.noEndpoints) {
						return fmt.Sprintf("%s: no-endpoints sentence %q lacks %q", vp, v.NoEndpoints, sc.noEndpoints)
					}
				}
				return ""
			})
		})
	}
}

// TestServiceEntryInSnapshot: the collector shows the VM service as a
// ServiceEntry host with its WorkloadEntries (istiod's tlsMode rule:
// serviceAccount means mTLS), and doctor reports a ServiceEntry whose
// selector finds nothing.
func TestServiceEntryInSnapshot(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	// The VMs' host is outside the hosts cross-network-gateway exposes
	// (*.local): a second AUTO_PASSTHROUGH server exposes *.mesh.internal,
	// as an operator with VMs would, and istiod merges both on 15443.
	docs := []string{vmServiceEntry, vmWorkloadEntry("vm-net1", "10.44.0.80", "network1"), vmGateway}
	for _, d := range docs {
		withChange(t, func() error { return theLab.ApplyIstioConfig(ctx, "cluster1", d) }, func() error { return theLab.DeleteIstioConfig(ctx, "cluster1", d) })
	}
	eventually(t, 15*time.Second, func() string {
		svc := reg.Snapshot().Service("vm.mesh.internal")
		if svc == nil || svc.Source != model.SourceServiceEntry || len(svc.ServiceEntries) != 1 || len(svc.ServiceEntries[0].Endpoints) != 1 {
			return fmt.Sprintf("vm.mesh.internal = %+v", svc)
		}
		e := svc.ServiceEntries[0].Endpoints[0]
		if e.Workload != "WorkloadEntry/vm-net1" || e.TLSMode != "istio" || e.Network != "network1" || e.Cluster != "cluster1" {
			return fmt.Sprintf("endpoint %+v", e)
		}
		return ""
	})
	// The commands: snapshot shows the ServiceEntry host; explain of the
	// host (port-forwarded to istiod) matches istiod from every network.
	out, err := exec.CommandContext(ctx, meshscopeBinary(t), "snapshot", "-o", "table", "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1", "--log-file", "-").CombinedOutput()
	if err != nil || !regexp.MustCompile(`vm\.mesh\.internal\s+ServiceEntry\s+8080\s+ServiceEntry sample/vm: 10\.44\.0\.80 network1`).Match(out) {
		t.Errorf("snapshot table (%v):\n%s", err, out)
	}
	out, err = exec.CommandContext(ctx, meshscopeBinary(t), "explain", "vm.mesh.internal", "--all-views", "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1", "--log-file", "-").CombinedOutput()
	if err != nil || strings.Count(string(out), ": MATCH") != 3 || !strings.Contains(string(out), "WorkloadEntry/vm-net1") || !strings.Contains(string(out), "(ServiceEntry in sample)") {
		t.Errorf("explain vm.mesh.internal (%v):\n%s", err, out)
	}
	t.Logf("meshscope explain vm.mesh.internal --all-views:\n%s", out)
	if err := theLab.DeleteIstioConfig(ctx, "cluster1", docs[1]); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, func() string {
		for _, p := range explain.Diagnose(reg.Snapshot(), explain.Inputs{}) {
			if p.Kind == "serviceentry-no-workloads" && strings.Contains(p.Sentence, "sample/vm") {
				return ""
			}
		}
		return "doctor does not report the ServiceEntry without workloads"
	})
}

// vmGateway exposes the VMs' hosts on the east-west gateways' 15443 beside
// cross-network-gateway's *.local.
const vmGateway = `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: cross-network-vms, namespace: istio-system}
spec:
  selector: {istio: eastwestgateway}
  servers:
  - port: {number: 15443, name: tls-vms, protocol: TLS}
    tls: {mode: AUTO_PASSTHROUGH}
    hosts: ["*.mesh.internal"]
`

// The second hops the scenarios break: a ServiceEntry host outside the
// hosts cross-network-gateway exposes (*.local), a service exported to its
// own namespace only (istiod builds the gateway's SNI chains from the
// gateway's own scope, istio-system).
const (
	vmOutsideHosts    = "(*.local) do not match vm.mesh.internal"
	hiddenFromGateway = "is not visible from the gateway's namespace istio-system"
)

// verdictWanted is match, or broken when the scenario names where the
// second hop breaks.
func verdictWanted(broken string) explain.Verdict {
	if broken != "" {
		return explain.Broken
	}
	return explain.Match
}

// hopSays reports whether a gateway endpoint's second hop breaks saying
// broken (always true for "").
func hopSays(v explain.View, broken string) bool {
	if broken == "" {
		return true
	}
	for _, h := range v.SecondHop {
		if h.State == gatewayhop.Breaks && strings.Contains(h.Why, broken) {
			return true
		}
	}
	return false
}
