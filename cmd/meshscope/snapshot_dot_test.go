package main

import (
	"strings"
	"testing"
)

// snapshot -o dot draws the demo's map: its three networks as boxes, the
// demo's istiod reading cluster2 (through a token that expires within the
// week: a warning on the arrow) and cluster3, and cluster4 (whose remote
// secret's CA does not match) as a broken arrow with its problems, and the
// gateways with the demo's broken second hop (vm.mesh.internal, outside
// the hosts cross-network-gateway exposes) on them.
func TestSnapshotDotDemo(t *testing.T) {
	out, err := runCLI(t, "snapshot", "--demo", "-o", "dot")
	if err != nil {
		t.Fatalf("snapshot -o dot: %v\n%s", err, out)
	}
	for _, want := range []string{
		"digraph mesh {", `label="network network1";`, `label="network network2";`,
		`"istiod:cluster1" -> "cluster:cluster2" [label="warning remote-secret-expiry"];`,
		`"istiod:cluster1" -> "cluster:cluster3" [];`,
		`"istiod:cluster1" -> "cluster:cluster4" [style=dashed, color=red, arrowhead=tee, label="✗ secret fails: error\nerror remote-secret\nerror remote-secret-tls"];`,
		`"gateway:network2:0" [label="gateway 192.168.60.9:15443\nsecond-hop-no-sni\nerror second-hop-no-sni", shape=cds, color=red];`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("snapshot -o dot lacks %s:\n%s", want, out)
		}
	}
}
