package e2e

// The doctor's checks against the real lab: each test creates the
// condition through the real API servers (and the real istiods where they
// are involved), sees the problem with its sentence and severity, removes
// the condition and sees it gone. They restart istiods and an API server,
// so they run after the quieter tests (files run in name order) and before
// the collector's disruptive ones.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
)

// xdsAll and debugAll name both istiods, for --xds-address and
// --istiod-debug-address.
func xdsAll() string {
	var parts []string
	for _, is := range theLab.Istiods() {
		parts = append(parts, is.Cluster+"="+is.XDSAddress())
	}
	return strings.Join(parts, ",")
}

func debugAll() string {
	var parts []string
	for _, is := range theLab.Istiods() {
		parts = append(parts, is.Cluster+"="+strings.TrimPrefix(is.HTTPURL(), "http://"))
	}
	return strings.Join(parts, ",")
}

// runMeshscope runs the binary as a user would, against the lab's kubeconfig.
func runMeshscope(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append(args, "--kubeconfig", theLab.Kubeconfig, "--log-file", "-")
	cmd := exec.CommandContext(ctx, meshscopeBinary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("meshscope %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), code
}

// doctorJSON runs meshscope doctor -o json and returns its problems and exit code.
func doctorJSON(t *testing.T, args ...string) ([]model.Problem, int) {
	t.Helper()
	out, code := runMeshscope(t, append([]string{"doctor", "-o", "json"}, args...)...)
	var res struct {
		Problems []model.Problem `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("doctor -o json: %v\n%s", err, out)
	}
	return res.Problems, code
}

// problemOf returns "" when ps holds a problem of kind with severity sev and
// every text, else why not.
func problemOf(ps []model.Problem, kind string, sev model.Severity, texts ...string) (model.Problem, string) {
	var seen []string
	for _, p := range ps {
		if string(p.Kind) != kind {
			continue
		}
		seen = append(seen, string(p.Severity)+": "+p.Sentence)
		ok := p.Severity == sev
		for _, x := range texts {
			ok = ok && strings.Contains(p.Sentence, x)
		}
		if ok {
			return p, ""
		}
	}
	return model.Problem{}, fmt.Sprintf("no %s %s with %q; %s problems: %q (all: %d)", sev, kind, texts, kind, seen, len(ps))
}

func absent(ps []model.Problem, kind string) string {
	for _, p := range ps {
		if string(p.Kind) == kind {
			return fmt.Sprintf("still %s: %s", kind, p.Sentence)
		}
	}
	return ""
}

// diagnosis is the prediction-only diagnosis of the registry's snapshot.
func diagnosis(reg *collector.Registry, now time.Time) []model.Problem {
	return explain.Diagnose(reg.Snapshot(), explain.Inputs{Now: now})
}

// waitIstiodReads waits until the istiod of cluster cp lists (or no longer
// lists) cluster id in its /debug/clusterz, synced (or in any state, with
// anyState).
func waitIstiodReads(t *testing.T, cp, id string, reads bool, anyState ...bool) {
	t.Helper()
	for _, is := range theLab.Istiods() {
		if is.Cluster != cp {
			continue
		}
		eventually(t, 60*time.Second, func() string {
			v, err := is.View(context.Background())
			if err != nil {
				return err.Error()
			}
			listed := slices.ContainsFunc(v.Clusters, func(c istiod.Cluster) bool {
				return c.ID == id && (c.SyncStatus == "synced" || len(anyState) > 0)
			})
			if listed != reads {
				return fmt.Sprintf("istiod %s clusterz %+v: reads %s = %v, want %v", cp, v.Clusters, id, listed, reads)
			}
			return ""
		})
	}
}

// TestDoctorMissingRemoteSecret is the issue's headline case: multi-primary,
// cluster2's remote secret for cluster1 deleted. doctor names the missing
// secret and the affected services and exits 1; explain for that control
// plane predicts from the clusters it really reads and says why cluster1's
// endpoints are gone. Both compare with what the real istiods send.
func TestDoctorMissingRemoteSecret(t *testing.T) {
	args := []string{"--context", "cluster1,cluster2", "--xds-address", xdsAll(), "--istiod-debug-address", debugAll()}
	gatewayStandIns(context.Background(), t) // the gateways' proxies are connected, as in a real mesh
	waitDoctorClean(t, "on the healthy multi-primary lab", args...)
	restore := deleteRemoteSecret(t, "cluster2", "cluster1")

	eventually(t, 60*time.Second, func() string {
		ps, code := doctorJSON(t, args...)
		if code != 1 {
			return fmt.Sprintf("exit %d, want 1: %+v", code, ps)
		}
		p, why := problemOf(ps, "control-plane-missing-cluster", model.SeverityError,
			"istiod cluster2 does not read cluster cluster1", "istio-system/istio-remote-secret-cluster1",
			"its proxies (in network2) lose every endpoint of cluster1 (network1)", "2 service(s) with endpoints there (helloworld.sample, sleep.sample)")
		if why != "" {
			return why
		}
		if p.Cluster != "cluster2" {
			return "the problem concerns " + p.Cluster + ", want cluster2"
		}
		// What istiod cluster2 sends is what it can send from cluster2 alone.
		if why := absent(ps, "xds-differs"); why != "" {
			return why
		}
		return ""
	})

	// From cluster1's context alone, cluster2's clusterz tells the same;
	// without it doctor says what it could not check.
	ps, code := doctorJSON(t, "--context", "cluster1", "--xds-address", xdsAll(), "--istiod-debug-address", debugAll())
	if _, why := problemOf(ps, "control-plane-missing-cluster", model.SeverityError, "istiod cluster2 does not read cluster cluster1: its /debug/clusterz lists only cluster2"); why != "" || code != 1 {
		t.Errorf("from cluster1's context with clusterz (exit %d): %s", code, why)
	}
	if out, _ := runMeshscope(t, "doctor", "--context", "cluster1"); !strings.Contains(out, "Not checked: which clusters istiod cluster2 reads") {
		t.Errorf("doctor from cluster1's context alone should say what it cannot check:\n%s", out)
	}
	out, _ := runMeshscope(t, "explain", "helloworld", "--context", "cluster1", "--xds-address", xdsAll(), "--istiod-debug-address", debugAll())
	if !strings.Contains(out, "from cluster2/network2 (control plane cluster2): MATCH") || !strings.Contains(out, "note: istiod cluster2 does not read cluster cluster1: its /debug/clusterz does not list it") {
		t.Errorf("explain with cluster2's clusterz:\n%s", out)
	}

	out, code = runMeshscope(t, "explain", "helloworld", "--context", "cluster1,cluster2", "--xds-address", xdsAll())
	for _, want := range []string{
		"from cluster2/network2 (control plane cluster2): MATCH",
		"note: istiod cluster2 does not read cluster cluster1: cluster2 holds no remote secret for it, so the 1 endpoint(s) of helloworld.sample in cluster1 (network1) never reach this control plane's proxies",
		"from cluster1/network1 (control plane cluster1): MATCH",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q (exit %d):\n%s", want, code, out)
		}
	}
	if code != 0 {
		t.Errorf("explain exit %d: every view matches its control plane's prediction\n%s", code, out)
	}

	restore()
	waitDoctorClean(t, "after the secret is back", args...)
}

// deleteRemoteSecret deletes holder's remote secret for cluster remote and
// waits until holder's istiod no longer reads remote. The returned restore
// puts a secret back and waits until istiod reads remote again; it runs
// once, when called or at the end of the test.
func deleteRemoteSecret(t *testing.T, holder, remote string) (restore func()) {
	t.Helper()
	ctx := context.Background()
	if err := theLab.DeleteRemoteSecret(ctx, holder, lab.RemoteSecretName(remote)); err != nil {
		t.Fatal(err)
	}
	restore = sync.OnceFunc(func() {
		if err := theLab.RotateRemoteSecret(ctx, holder, remote); err != nil {
			t.Errorf("restore: %v", err)
		}
		waitIstiodReads(t, holder, remote, true)
	})
	t.Cleanup(restore)
	waitIstiodReads(t, holder, remote, false)
	return restore
}

// waitDoctorClean waits until doctor finds no problem at all and exits 0.
func waitDoctorClean(t *testing.T, when string, args ...string) {
	t.Helper()
	eventually(t, 90*time.Second, func() string {
		ps, code := doctorJSON(t, args...)
		if code != 0 || len(ps) != 0 {
			return fmt.Sprintf("%s: exit %d, %+v", when, code, ps)
		}
		return ""
	})
}

// TestDoctorRootCA: in multi-primary each istiod signs with its own root
// unless both get one plug-in root. cluster2's istiod goes back to a
// self-signed root: the clusters publish roots that share nothing; then a
// root that expires in ten days; then the shared root again.
func TestDoctorRootCA(t *testing.T) {
	ctx := context.Background()
	reg := startRegistryFrom(t, "cluster1", "cluster2")
	if why := absent(diagnosis(reg, time.Now()), "root-ca-mismatch"); why != "" {
		t.Fatalf("the lab's istiods share a plug-in root: %s", why)
	}
	defer func() {
		if err := theLab.SetIstiodCA(ctx, "cluster2", lab.CAShared); err != nil {
			t.Errorf("restore: %v", err)
		}
	}()
	if err := theLab.SetIstiodCA(ctx, "cluster2", lab.CAOwn); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() string {
		_, why := problemOf(diagnosis(reg, time.Now()), "root-ca-mismatch", model.SeverityError,
			`cluster cluster1 trusts root "CN=meshscope lab root CA,O=meshscope lab"`, `but cluster cluster2 trusts root "O=cluster.local"`,
			"share no root", "mTLS between them fails")
		return why
	})
	if err := theLab.SetIstiodCA(ctx, "cluster2", lab.CAExpiring); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() string {
		_, why := problemOf(diagnosis(reg, time.Now()), "root-ca-expiry", model.SeverityWarning,
			`root CA "CN=istiod cluster2 expiring root CA,O=meshscope lab"`, "published in cluster2", "(in 9 days)")
		return why
	})
	if err := theLab.SetIstiodCA(ctx, "cluster2", lab.CAShared); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() string {
		ps := diagnosis(reg, time.Now())
		if why := absent(ps, "root-ca-mismatch"); why != "" {
			return why
		}
		return absent(ps, "root-ca-expiry")
	})
}

// TestDoctorMissingService: helloworld's Service disappears from cluster2,
// where the sleep pod (with a sidecar) runs in namespace sample.
func TestDoctorMissingService(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	restore, err := theLab.DeleteService(ctx, "cluster2", lab.SampleNamespace, "helloworld")
	if err != nil {
		t.Fatal(err)
	}
	var restoreErr error
	undo := sync.OnceFunc(func() { restoreErr = restore(ctx) })
	defer undo()
	eventually(t, 20*time.Second, func() string {
		_, why := problemOf(diagnosis(reg, time.Now()), "missing-service", model.SeverityError,
			"helloworld.sample exists in cluster1 but not in cluster2, where pods with sidecars run in namespace sample", "their DNS lookups of helloworld.sample.svc.cluster.local fail there")
		return why
	})
	if undo(); restoreErr != nil {
		t.Fatal(restoreErr)
	}
	eventually(t, 20*time.Second, func() string { return absent(diagnosis(reg, time.Now()), "missing-service") })
}

// TestDoctorInconsistentService: cluster2's helloworld names its port
// differently and has one more.
func TestDoctorInconsistentService(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	api := theLab.Cluster("cluster2").Client().CoreV1().Services(lab.SampleNamespace)
	edit := func(f func(*corev1.Service)) {
		t.Helper()
		svc, err := api.Get(ctx, "helloworld", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f(svc)
		if _, err := api.Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	orig, err := api.Get(ctx, "helloworld", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer edit(func(s *corev1.Service) { s.Spec.Ports = orig.Spec.Ports })
	edit(func(s *corev1.Service) {
		s.Spec.Ports[0].Name = "tcp-web"
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090), Protocol: corev1.ProtocolTCP})
	})
	eventually(t, 20*time.Second, func() string {
		_, why := problemOf(diagnosis(reg, time.Now()), "inconsistent-service", model.SeverityWarning,
			"helloworld.sample differs between cluster1 and cluster2", `port 5000 is "http"/TCP in cluster1 but "tcp-web"/TCP in cluster2`, "port(s) 9090 only in cluster2")
		return why
	})
	edit(func(s *corev1.Service) { s.Spec.Ports = orig.Spec.Ports })
	eventually(t, 20*time.Second, func() string { return absent(diagnosis(reg, time.Now()), "inconsistent-service") })
}

// TestDoctorLocalityFailover: a DestinationRule with locality failover but
// no outlierDetection (failover silently off), then with it.
func TestDoctorLocalityFailover(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	dr := func(outlier string) string {
		return `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: helloworld-failover, namespace: sample}
spec:
  host: helloworld
  trafficPolicy:
    loadBalancer:
      localityLbSetting:
        enabled: true
        failover: [{from: region1, to: region2}]
` + outlier
	}
	without, with := dr(""), dr("    outlierDetection: {consecutive5xxErrors: 1, interval: 1s, baseEjectionTime: 1m}\n")
	if err := theLab.ApplyIstioConfig(ctx, "cluster1", without); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = theLab.DeleteIstioConfig(ctx, "cluster1", without) }()
	eventually(t, 20*time.Second, func() string {
		_, why := problemOf(diagnosis(reg, time.Now()), "locality-failover", model.SeverityWarning,
			"DestinationRule sample/helloworld-failover (config cluster cluster1) sets locality failover (region1→region2) for helloworld but no outlierDetection", "traffic never fails over")
		return why
	})
	if err := theLab.DeleteIstioConfig(ctx, "cluster1", without); err != nil {
		t.Fatal(err)
	}
	if err := theLab.ApplyIstioConfig(ctx, "cluster1", with); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() string {
		s := reg.Snapshot()
		if !slices.ContainsFunc(s.DestinationRules, func(d model.DestinationRule) bool { return d.OutlierDetection }) {
			return "the rule with outlierDetection is not read yet"
		}
		return absent(diagnosis(reg, time.Now()), "locality-failover")
	})
}

// TestDoctorConfigSkew: a DestinationRule only in cluster1's config: the
// two primaries treat helloworld differently until cluster2 has it too.
func TestDoctorConfigSkew(t *testing.T) {
	ctx := context.Background()
	reg := startRegistryFrom(t, "cluster1", "cluster2")
	dr := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: helloworld-skew, namespace: sample}
spec:
  host: helloworld
  trafficPolicy: {connectionPool: {tcp: {maxConnections: 100}}}
`
	if err := theLab.ApplyIstioConfig(ctx, "cluster1", dr); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = theLab.DeleteIstioConfig(ctx, "cluster1", dr)
		_ = theLab.DeleteIstioConfig(ctx, "cluster2", dr)
	}()
	eventually(t, 20*time.Second, func() string {
		_, why := problemOf(diagnosis(reg, time.Now()), "config-skew", model.SeverityWarning,
			"helloworld.sample: istiod cluster1 applies DestinationRule sample/helloworld-skew, istiod cluster2 has none", "treat it differently")
		return why
	})
	if err := theLab.ApplyIstioConfig(ctx, "cluster2", dr); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() string { return absent(diagnosis(reg, time.Now()), "config-skew") })
}

// TestDoctorEastWestGateway: cluster2's east-west gateway made unusable four
// ways, each undone: its port label names a port it does not expose (the
// real istiod drops the gateway), its pod is not ready, it takes network1's
// address (the real istiod lists both at one address), and a new gateway
// Service waits for its load balancer.
func TestDoctorEastWestGateway(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	istiod := theLab.Istiods()[0]
	networkz := func() string {
		v, err := istiod.View(ctx)
		if err != nil {
			return err.Error()
		}
		var gws []string
		for _, g := range v.Gateways {
			gws = append(gws, fmt.Sprintf("%s %s:%d", g.Network, g.Addr, g.Port))
		}
		slices.Sort(gws)
		return strings.Join(gws, ",")
	}
	str := func(s string) *string { return &s }
	gwPod := lab.GatewayService + "-7b9c5d6f8-k2x4p"

	t.Run("port", func(t *testing.T) {
		if err := theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.SystemNamespace, lab.GatewayService, model.LabelGatewayPort, str("15444")); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.SystemNamespace, lab.GatewayService, model.LabelGatewayPort, nil)
		}()
		eventually(t, 20*time.Second, func() string {
			if got := networkz(); strings.Contains(got, "network2") {
				return "istiod still has network2's gateway: " + got
			}
			_, why := problemOf(diagnosis(reg, time.Now()), "gateway-port", model.SeverityError,
				"gateway Service istio-system/istio-eastwestgateway in cluster2 is labelled topology.istio.io/network=network2 but exposes neither port 15444", "15443 tls")
			return why
		})
		if err := theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.SystemNamespace, lab.GatewayService, model.LabelGatewayPort, nil); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, func() string { return absent(diagnosis(reg, time.Now()), "gateway-port") })
	})
	t.Run("not ready", func(t *testing.T) {
		if err := theLab.SetPodReady(ctx, "cluster2", lab.SystemNamespace, gwPod, false); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = theLab.SetPodReady(ctx, "cluster2", lab.SystemNamespace, gwPod, true) }()
		eventually(t, 20*time.Second, func() string {
			_, why := problemOf(diagnosis(reg, time.Now()), "gateway-not-ready", model.SeverityError,
				"gateway Service istio-system/istio-eastwestgateway in cluster2 has no ready pod behind it", "network2's gateway")
			return why
		})
		if err := theLab.SetPodReady(ctx, "cluster2", lab.SystemNamespace, gwPod, true); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, func() string { return absent(diagnosis(reg, time.Now()), "gateway-not-ready") })
	})
	t.Run("shared address", func(t *testing.T) {
		if err := theLab.SetGatewayIngress(ctx, "cluster2", lab.SystemNamespace, lab.GatewayService, "192.168.60.113"); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = theLab.SetGatewayIngress(ctx, "cluster2", lab.SystemNamespace, lab.GatewayService, "192.168.60.9")
		}()
		eventually(t, 20*time.Second, func() string {
			if got := networkz(); got != "network1 192.168.60.113:15443,network2 192.168.60.113:15443" {
				return "istiod's networkz: " + got
			}
			_, why := problemOf(diagnosis(reg, time.Now()), "gateway-address-conflict", model.SeverityError,
				"gateways of 2 networks share address 192.168.60.113", "network1 (istio-system/istio-eastwestgateway in cluster1), network2 (istio-system/istio-eastwestgateway in cluster2)")
			return why
		})
		if err := theLab.SetGatewayIngress(ctx, "cluster2", lab.SystemNamespace, lab.GatewayService, "192.168.60.9"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, func() string { return absent(diagnosis(reg, time.Now()), "gateway-address-conflict") })
	})
	t.Run("load balancer pending", func(t *testing.T) {
		api := theLab.Cluster("cluster2").Client().CoreV1().Services(lab.SystemNamespace)
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "istio-eastwestgateway-new", Namespace: lab.SystemNamespace, Labels: map[string]string{lab.NetworkLabel: "network2"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"istio": "eastwestgateway"},
				Ports: []corev1.ServicePort{{Name: "tls", Port: 15443, TargetPort: intstr.FromInt32(15443)}}},
		}
		if _, err := api.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = api.Delete(ctx, svc.Name, metav1.DeleteOptions{}) }()
		eventually(t, 20*time.Second, func() string {
			ps := diagnosis(reg, time.Now())
			if _, why := problemOf(ps, "gateway-lb-pending", model.SeverityInfo, "gateway Service istio-system/istio-eastwestgateway-new in cluster2 (type LoadBalancer) is still waiting for its load balancer", "(error after 1m0s)"); why != "" {
				return why
			}
			// Past a minute it is an error.
			_, why := problemOf(diagnosis(reg, time.Now().Add(2*time.Minute)), "gateway-lb-pending", model.SeverityError, "has been waiting for its load balancer for 2m")
			return why
		})
		if err := api.Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, func() string { return absent(diagnosis(reg, time.Now()), "gateway-lb-pending") })
	})
}

// TestDoctorStaleEndpoint: istiod cluster1 loses its watch of cluster2 (its
// remote secret's token is revoked and the API server restart ends the
// watches it still held), then cluster2's helloworld pod goes away. The
// real istiod keeps sending it; meshscope, reading cluster2 through its
// context, knows it is gone.
func TestDoctorStaleEndpoint(t *testing.T) {
	ctx := context.Background()
	args := []string{"--context", "cluster1,cluster2", "--xds-address", "cluster1=" + theLab.Istiods()[0].XDSAddress()}
	pod := lab.PodSpec{Namespace: lab.SampleNamespace, Name: lab.HelloworldPod("cluster2"), IP: "10.144.0.15", Labels: lab.AppLabels("helloworld", "v2", "network2")}
	if err := theLab.RevokeRemoteSecretToken(ctx, "cluster1", "cluster2"); err != nil {
		t.Fatal(err)
	}
	restore := sync.OnceFunc(func() {
		if err := theLab.AddPod(ctx, "cluster2", pod); err != nil {
			t.Errorf("restore pod: %v", err)
		}
		if err := theLab.RotateRemoteSecret(ctx, "cluster1", "cluster2"); err != nil {
			t.Errorf("restore secret: %v", err)
		}
	})
	defer restore()
	if err := theLab.StopAPIServer("cluster2"); err != nil {
		t.Fatal(err)
	}
	if err := theLab.StartAPIServer(ctx, "cluster2"); err != nil {
		t.Fatal(err)
	}
	if err := theLab.RemovePod(ctx, "cluster2", pod.Namespace, pod.Name); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, func() string {
		ps, code := doctorJSON(t, args...)
		if code != 1 {
			return fmt.Sprintf("exit %d: %+v", code, ps)
		}
		_, why := problemOf(ps, "stale-endpoint", model.SeverityError,
			"istiod cluster1 still sends 10.144.0.15:5000 (workload "+pod.Name+", cluster2) to a cluster2/network2@cluster1 proxy for helloworld.sample port 5000",
			"cluster2 has no such endpoint any more (its pod of workload "+pod.Name+" is gone)", "meshscope reads cluster2 through context cluster2",
			"has been stale for at least", "through remote secret istio-system/istio-remote-secret-cluster2 in cluster1")
		if why != "" {
			return why
		}
		// network1's proxy still gets the gateway that stood for the pod.
		_, why = problemOf(ps, "xds-differs", model.SeverityError, "istiod cluster1 → cluster1/network1@cluster1 proxy, helloworld.sample port 5000: istiod sends gateway 192.168.60.9:15443 for cluster cluster2, which meshscope does not predict", "still count endpoints meshscope no longer sees")
		return why
	})
	restore()
	waitDoctorClean(t, "after the token and the pod are back", args...)
}

// TestDoctorRemoteSecretProblems: cluster1 gets a second remote secret for
// cluster2's API server, under the ID "cluster2-alias", whose user may not
// read nodes. The real istiod cluster1 registers it as a cluster of its
// own; doctor sees the API server read twice, the ID that differs from
// cluster2's istiod CLUSTER_ID, and the missing permission.
func TestDoctorRemoteSecretProblems(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	ro := []string{"get", "list", "watch"}
	tok, err := theLab.IssueLimitedToken(ctx, "cluster2", "no-nodes", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "services", "namespaces", "configmaps"}, Verbs: ro},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: ro},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = theLab.DeleteLimitedUser(ctx, "cluster2", "no-nodes") }()
	kc, err := theLab.RemoteKubeconfig("cluster2", tok)
	if err != nil {
		t.Fatal(err)
	}
	// The kubeconfig names its cluster after the ID; the data key decides.
	const name = "istio-remote-secret-cluster2-alias"
	if err := theLab.WriteRemoteSecret(ctx, "cluster1", name, map[string][]byte{"cluster2-alias": kc}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = theLab.DeleteRemoteSecret(ctx, "cluster1", name) }() // not an error when gone
	// Without nodes its sync times out, but it is registered.
	waitIstiodReads(t, "cluster1", "cluster2-alias", true, true)
	eventually(t, 30*time.Second, func() string {
		ps := diagnosis(reg, time.Now())
		for _, w := range []struct {
			kind  string
			texts []string
		}{
			{"remote-secret-duplicate", []string{"istiod cluster1 reads the API server " + theLab.Cluster("cluster2").URL + " twice, as clusters cluster2 and cluster2-alias"}},
			{"remote-secret-cluster-id", []string{"remote secret istio-system/" + name + " in cluster1 calls the API server", `"cluster2-alias"`, "(pod istiod-local-cluster2) has CLUSTER_ID \"cluster2\""}},
			{"remote-secret-rbac", []string{"the user of remote secret istio-system/" + name + " in cluster1 (for cluster2-alias), service account istio-system/meshscope-lab-no-nodes may not: ", "nodes (get, list, watch)", "istiod cluster1 never syncs cluster2-alias"}},
		} {
			if _, why := problemOf(ps, w.kind, model.SeverityError, w.texts...); why != "" {
				return why
			}
		}
		return ""
	})
	if err := theLab.DeleteRemoteSecret(ctx, "cluster1", name); err != nil {
		t.Fatal(err)
	}
	waitIstiodReads(t, "cluster1", "cluster2-alias", false, true)
	eventually(t, 30*time.Second, func() string {
		ps := diagnosis(reg, time.Now())
		for _, k := range []string{"remote-secret-duplicate", "remote-secret-cluster-id", "remote-secret-rbac"} {
			if why := absent(ps, k); why != "" {
				return why
			}
		}
		return ""
	})
}

// TestDoctorGroupsRepeatedCauses: three helloworld pods without a sidecar
// in cluster2 are one drop row with a count, and the real istiod (asked
// through the port-forward) sends what meshscope predicts for them.
func TestDoctorGroupsRepeatedCauses(t *testing.T) {
	ctx := context.Background()
	names := []string{"helloworld-nosidecar-1", "helloworld-nosidecar-2", "helloworld-nosidecar-3"}
	var pods []lab.PodSpec
	for i, n := range names {
		l := lab.AppLabels("helloworld", "v3", "network2")
		delete(l, lab.TLSModeLabel)
		pods = append(pods, lab.PodSpec{Namespace: lab.SampleNamespace, Name: n, IP: fmt.Sprintf("10.144.0.%d", 60+i), Labels: l})
	}
	if err := theLab.AddPods(ctx, "cluster2", pods...); err != nil {
		t.Fatal(err)
	}
	remove := sync.OnceFunc(func() {
		for _, n := range names {
			if err := theLab.RemovePod(ctx, "cluster2", lab.SampleNamespace, n); err != nil {
				t.Errorf("remove %s: %v", n, err)
			}
		}
	})
	defer remove()
	eventually(t, 60*time.Second, func() string {
		ps, _ := doctorJSON(t, "--context", "cluster1")
		p, why := problemOf(ps, "drop", model.SeverityError, "3 endpoints in cluster2 are dropped for network1 proxies", "helloworld-nosidecar-1", "lack security.istio.io/tlsMode=istio")
		if why != "" {
			return why
		}
		if p.Count != 3 || len(find(ps, "drop")) != 1 {
			return fmt.Sprintf("want one drop row with count 3: %+v", find(ps, "drop"))
		}
		return absent(ps, "xds-differs")
	})
	remove()
	waitDoctorClean(t, "after the pods are gone", "--context", "cluster1")
}

func find(ps []model.Problem, kind string) []model.Problem {
	var out []model.Problem
	for _, p := range ps {
		if string(p.Kind) == kind {
			out = append(out, p)
		}
	}
	return out
}
