package watch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/model"
)

// parseTrafficPolicy reads the load-balancing part of a DestinationRule
// that decides locality failover. istiod fails over between localities only
// when the rule's traffic policy (merged with the port's) sets
// outlierDetection (pilot/pkg/xds/endpoints endpoint_builder.go
// getOutlierDetectionAndLoadBalancerSettings): without it Envoy never sees
// an endpoint as failed and never drops to a lower priority.
func parseTrafficPolicy(d *model.DestinationRule, u *unstructured.Unstructured) {
	if lb, ok, _ := unstructured.NestedMap(u.Object, "spec", "trafficPolicy", "loadBalancer", "localityLbSetting"); ok {
		d.LocalityLb = decodeInto[model.LocalityLbSetting](lb)
	}
	if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "trafficPolicy", "outlierDetection"); ok {
		d.OutlierDetection = true
	}
	pls, _, _ := unstructured.NestedSlice(u.Object, "spec", "trafficPolicy", "portLevelSettings")
	for _, p := range pls {
		if m, ok := p.(map[string]any); ok {
			if _, ok := m["outlierDetection"].(map[string]any); ok {
				d.OutlierDetection = true
			}
		}
	}
	d.Fingerprint = specFingerprint(u)
}

// trafficPolicyLB reads a trafficPolicy (nil: none).
func trafficPolicyLB(tp map[string]any) *model.TrafficLB {
	if tp == nil {
		return nil
	}
	t := &model.TrafficLB{LBPolicy: lbPolicyOf(tp)}
	eachPortLevel(tp, func(num uint32, m map[string]any) {
		if t.Ports == nil {
			t.Ports = map[uint32]model.LBPolicy{}
		}
		if _, dup := t.Ports[num]; !dup { // istiod takes the first
			t.Ports[num] = lbPolicyOf(m)
		}
	})
	return t
}

// eachPortLevel calls f with each portLevelSettings entry of a traffic
// policy that names a port number.
func eachPortLevel(tp map[string]any, f func(port uint32, settings map[string]any)) {
	pls, _ := tp["portLevelSettings"].([]any)
	for _, p := range pls {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		port, _ := m["port"].(map[string]any)
		if num := toUint32(port["number"]); num != 0 {
			f(num, m)
		}
	}
}

func lbPolicyOf(m map[string]any) model.LBPolicy {
	var p model.LBPolicy
	var od map[string]any
	od, p.OutlierDetection = m["outlierDetection"].(map[string]any)
	p.MinHealthPercent = int32(min(toUint32(od["minHealthPercent"]), 100))
	lb, ok := m["loadBalancer"].(map[string]any)
	if !ok {
		return p
	}
	p.LoadBalancer = true
	p.LocalityLb = decodeInto[model.LocalityLbSetting](lb["localityLbSetting"])
	p.ZoneAware = decodeInto[model.ZoneAwareLbSetting](lb["zoneAwareLbSetting"])
	return p
}

// decodeInto reads an object of the unstructured spec into T (nil when it
// is not an object or does not decode).
func decodeInto[T any](v any) *T {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out T
	b, err := json.Marshal(m)
	if err != nil || json.Unmarshal(b, &out) != nil {
		return nil
	}
	return &out
}

// specFingerprint is a short hash of an object's spec (encoding/json sorts
// map keys, so equal specs hash alike whatever their field order).
func specFingerprint(u *unstructured.Unstructured) string {
	b, err := json.Marshal(u.Object["spec"])
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
