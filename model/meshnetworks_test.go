package model_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func TestParseMeshNetworks(t *testing.T) {
	mn, err := model.ParseMeshNetworks(meshtest.MeshNetworksYAML)
	if err != nil {
		t.Fatal(err)
	}
	if got := mn.Networks["network2"].Endpoints[0].FromCIDR; got != "10.144.0.0/16" {
		t.Fatalf("snake_case from_cidr not read: %q", got)
	}
	// found by FuzzMeshNetworks: keys that are not names made the YAML
	// converter print Go values
	for _, bad := range []string{"networks: {? [a]: b}", "&0000000:\n 00000000:\n    0000000000000000000000000: 0000000000\n 00000000000: [{00000000000000000000000000000000000000000000000000000000000000}] ", "networks: {null: {}}"} {
		if _, err := model.ParseMeshNetworks(bad); err == nil || strings.Contains(err.Error(), "interface") || strings.Contains(err.Error(), "%!") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := model.ParseMeshNetworks("networks: [oops"); err == nil {
		t.Fatal("garbage parsed")
	}
	if mn, err := model.ParseMeshNetworks("  "); err != nil || len(mn.Networks) != 0 {
		t.Fatal("empty meshNetworks should be empty")
	}
}

// NetworkFrom is a number in memory and the rule's name in JSON and text,
// both ways; no rule is omitted.
func TestNetworkFromText(t *testing.T) {
	for f := model.NetworkFromNone; f <= model.NetworkFromWorkloadEntry; f++ {
		b, err := json.Marshal(model.Endpoint{NetworkFrom: f})
		if err != nil {
			t.Fatal(err)
		}
		var back model.Endpoint
		if err := json.Unmarshal(b, &back); err != nil || back.NetworkFrom != f {
			t.Fatalf("%v: %s → %v, %v", f, b, back.NetworkFrom, err)
		}
		if f != model.NetworkFromNone && !strings.Contains(string(b), `"networkFrom":"`+f.String()+`"`) {
			t.Fatalf("%v: %s", f, b)
		}
	}
	if model.NetworkFromCIDR.String() != "meshNetworksFromCidr" || fmt.Sprint(model.NetworkFromPodLabel) != "podLabel" {
		t.Fatal("names changed")
	}
	var f model.NetworkFrom
	if err := f.UnmarshalText([]byte("dns")); err == nil {
		t.Fatal("unknown name accepted")
	}
}
