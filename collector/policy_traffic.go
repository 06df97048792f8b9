package collector

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// parseTrafficPolicy reads the load-balancing part of a DestinationRule
// that decides locality failover. istiod fails over between localities only
// when the rule's traffic policy (merged with the port's) sets
// outlierDetection (pilot/pkg/xds/endpoints endpoint_builder.go
// getOutlierDetectionAndLoadBalancerSettings): without it Envoy never sees
// an endpoint as failed and never drops to a lower priority.
func parseTrafficPolicy(d *DestinationRule, u *unstructured.Unstructured) {
	if lb, ok, _ := unstructured.NestedMap(u.Object, "spec", "trafficPolicy", "loadBalancer", "localityLbSetting"); ok {
		var s LocalityLbSetting
		if b, err := json.Marshal(lb); err == nil && json.Unmarshal(b, &s) == nil {
			d.LocalityLb = &s
		}
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

// FailsOver reports whether a locality setting asks for failover: explicit
// failover or failoverPriority, not turned off, and not a weighted
// distribution (which istiod applies instead of failover).
func (l *LocalityLbSetting) FailsOver() bool {
	if l == nil || (l.Enabled != nil && !*l.Enabled) || len(l.Distribute) > 0 {
		return false
	}
	return len(l.Failover) > 0 || len(l.FailoverPriority) > 0
}
