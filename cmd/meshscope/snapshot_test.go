package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/meshscope/meshscope/model"
)

func sampleSnapshot() *model.Snapshot {
	return &model.Snapshot{
		Version: 7,
		Time:    time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC),
		Clusters: []model.Cluster{
			{ID: "cluster1", Source: model.SourceRef{Kind: model.SourceContext, Name: "cluster1"}, Server: "https://127.0.0.1:6443", Network: "network1", State: model.StateSynced},
			{ID: "cluster2", Source: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster2", In: "cluster1", Key: "cluster2"},
				State: model.StateError, ErrorKind: model.ErrUnreachable, Reason: "unreachable: connection refused", Warnings: []string{"cannot read nodes (no localities): forbidden"}},
		},
		Networks: []model.Network{{Name: "network1", Clusters: []string{"cluster1"}, Gateways: 1}, {Name: "network2", Clusters: []string{"cluster2"}}},
		Gateways: []model.Gateway{{Network: "network1", Cluster: "cluster1", Address: "192.168.60.113", Port: 15443, From: model.GatewayFromService, Service: "istio-system/istio-eastwestgateway"}},
		Services: []*model.Service{{Hostname: "helloworld.sample.svc.cluster.local", Namespace: "sample", Name: "helloworld",
			Ports: []model.ServicePort{{Name: "http", Port: 5000}},
			Clusters: map[string]*model.ServiceInCluster{
				"cluster1": {Cluster: "cluster1", Endpoints: []model.Endpoint{{Cluster: "cluster1", Network: "network1", Address: "10.44.0.13", Ready: true}}},
			}}},
	}
}

func TestWriteSnapshotFormats(t *testing.T) {
	s := sampleSnapshot()
	var b bytes.Buffer
	if err := writeSnapshot(&b, s, "json"); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "time", "clusters", "networks", "gateways", "services", "incomplete"} {
		if _, ok := m[k]; !ok {
			t.Errorf("json lacks %q", k)
		}
	}
	c2 := m["clusters"].([]any)[1].(map[string]any)
	if c2["state"] != "error" || c2["errorKind"] != "unreachable" || c2["source"].(map[string]any)["kind"] != "secret" {
		t.Fatalf("cluster2 json: %v", c2)
	}
	if inc := m["incomplete"].([]any); len(inc) != 1 || inc[0].(map[string]any)["cluster"] != "cluster2" || inc[0].(map[string]any)["what"] != "cluster" ||
		inc[0].(map[string]any)["why"] != "unreachable: connection refused" {
		t.Errorf("incomplete: %v", m["incomplete"])
	}
	if _, ok := c2["syncedAt"]; ok {
		t.Fatal("zero syncedAt not omitted")
	}

	b.Reset()
	if err := writeSnapshot(&b, s, "yaml"); err != nil {
		t.Fatal(err)
	}
	var y map[string]any
	if err := yaml.Unmarshal(b.Bytes(), &y); err != nil || y["version"] == nil {
		t.Fatalf("yaml: %v %v", err, y)
	}

	b.Reset()
	if err := writeSnapshot(&b, s, "table"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"unreachable: connection refused", "warning: cluster2: cannot read nodes", "192.168.60.113:15443", "network2", "(none)",
		"helloworld.sample.svc.cluster.local", "cluster1: 10.44.0.13 network1"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestParseClusterIDs(t *testing.T) {
	m, err := parseClusterIDs([]string{"kind-one=cluster1", " kind-two = cluster2 "})
	if err != nil || m["kind-one"] != "cluster1" || m["kind-two"] != "cluster2" {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range []string{"nope", "=x", "x=", "a=b"} {
		vals := []string{bad}
		if bad == "a=b" {
			vals = []string{"a=b", "a=c"}
		}
		if _, err := parseClusterIDs(vals); err == nil {
			t.Errorf("%v accepted", vals)
		}
	}
}

func TestSnapshotCommandErrors(t *testing.T) {
	run := func(args ...string) error {
		root := newRootCmd()
		root.SetArgs(append(args, "--log-file", "-"))
		root.SetOut(&bytes.Buffer{})
		return root.Execute()
	}
	if code, msg := exitOf(run("snapshot", "-o", "xml")); code != exitBadInput || !strings.Contains(msg, "want json, yaml, table or dot") {
		t.Fatalf("bad output: exit %d %q", code, msg)
	}
	code, msg := exitOf(run("snapshot", "--kubeconfig", "/nonexistent/kubeconfig"))
	if code != exitBadInput || !strings.Contains(msg, "no kubeconfig: /nonexistent/kubeconfig (--kubeconfig) does not exist") || !strings.Contains(msg, "meshscope demo") {
		t.Fatalf("missing kubeconfig: exit %d %q", code, msg)
	}
}

// TestSnapshotDemoJSON: the demo shows 3 clusters synced on 2
// networks, with gateways and helloworld.
func TestSnapshotDemoJSON(t *testing.T) {
	root := newRootCmd()
	out := &bytes.Buffer{}
	root.SetArgs([]string{"snapshot", "--demo", "-o", "json", "--log-file", "-"})
	root.SetOut(out)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var snap model.Snapshot
	if err := json.Unmarshal(out.Bytes(), &snap); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	synced, nets := 0, map[string]bool{}
	for _, c := range snap.Clusters {
		if c.State == model.StateSynced {
			synced++
			nets[c.Network] = true
		}
	}
	if synced != 3 || len(nets) != 2 {
		t.Errorf("%d clusters synced on %d networks, want 3 on 2: %+v", synced, len(nets), snap.Clusters)
	}
	if len(snap.Gateways) != 2 || snap.Service("helloworld.sample.svc.cluster.local") == nil {
		t.Errorf("gateways %+v, helloworld present: %v", snap.Gateways, snap.Service("helloworld.sample.svc.cluster.local") != nil)
	}
	if strings.Contains(out.String(), "demo-token") {
		t.Error("the snapshot contains a token")
	}
}
