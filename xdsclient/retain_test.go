package xdsclient

import (
	"testing"
	"unsafe"
)

// within says whether s points into buf's bytes.
func within(s, buf string) bool {
	if len(s) == 0 || len(buf) == 0 {
		return false
	}
	p, b := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(buf)))
	return p >= b && p < b+uintptr(len(buf))
}

// TestChangesDoNotPinThePush: the fast decoder's strings are slices of the
// response's bytes; what a diff records (kept in the UI's timeline for
// hours) must be copies, or every event kept would keep its whole push
// alive — a soak of the demo mesh grew by tens of MiB an hour that way.
func TestChangesDoNotPinThePush(t *testing.T) {
	b := mustMarshal(t, cla(helloEDS,
		ep{"10.44.0.13", 5000, 1, "helloworld-v1-abc;sample;helloworld;v1;cluster1"},
		ep{"192.168.60.9", 15443, 3, ";;;;cluster2"}))
	la, err := decodeCLAFast(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !within(la.Endpoints[0].Address, la.raw) {
		t.Fatal("the decoder no longer slices the response: this test checks nothing")
	}
	var d resourceDiff
	d.update(la.Cluster, nil, false, la)
	d.remove(la.Cluster, la)
	for _, n := range append(d.added, d.removed...) {
		if within(n, la.raw) {
			t.Errorf("resource name %q points into the response", n)
		}
	}
	if len(d.endpoints) != 4 {
		t.Fatalf("%d changes, want 2 added and 2 removed", len(d.endpoints))
	}
	for _, c := range d.endpoints {
		for field, s := range map[string]string{"cluster": c.Cluster, "address": c.Address, "tlsMode": c.TLSMode, "workload cluster": c.WorkloadCluster, "workload": c.Workload} {
			if within(s, la.raw) {
				t.Errorf("%s %q of a %s change points into the response", field, s, c.Change)
			}
		}
	}
}
