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
		d.LocalityLb = decodeInto[LocalityLbSetting](lb)
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

// LBPolicy is what one traffic policy (or one of its portLevelSettings)
// says about locality load balancing: whether it sets outlierDetection,
// and its loadBalancer's localityLbSetting or zoneAwareLbSetting
// (LoadBalancer: a loadBalancer is set at all, which replaces the whole of
// an outer one).
type LBPolicy struct {
	OutlierDetection bool `json:"outlierDetection,omitempty"`
	// MinHealthPercent is outlierDetection.minHealthPercent (0: unset).
	MinHealthPercent int32               `json:"minHealthPercent,omitempty"`
	LoadBalancer     bool                `json:"loadBalancer,omitempty"`
	LocalityLb       *LocalityLbSetting  `json:"localityLbSetting,omitempty"`
	ZoneAware        *ZoneAwareLbSetting `json:"zoneAwareLbSetting,omitempty"`
}

// TrafficLB is a traffic policy's LBPolicy and its port-level ones.
type TrafficLB struct {
	LBPolicy
	Ports map[uint32]LBPolicy `json:"ports,omitempty"`
}

// trafficPolicyLB reads a trafficPolicy (nil: none).
func trafficPolicyLB(tp map[string]any) *TrafficLB {
	if tp == nil {
		return nil
	}
	t := &TrafficLB{LBPolicy: lbPolicyOf(tp)}
	eachPortLevel(tp, func(num uint32, m map[string]any) {
		if t.Ports == nil {
			t.Ports = map[uint32]LBPolicy{}
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

func lbPolicyOf(m map[string]any) LBPolicy {
	var p LBPolicy
	var od map[string]any
	od, p.OutlierDetection = m["outlierDetection"].(map[string]any)
	p.MinHealthPercent = int32(min(toUint32(od["minHealthPercent"]), 100))
	lb, ok := m["loadBalancer"].(map[string]any)
	if !ok {
		return p
	}
	p.LoadBalancer = true
	p.LocalityLb = decodeInto[LocalityLbSetting](lb["localityLbSetting"])
	p.ZoneAware = decodeInto[ZoneAwareLbSetting](lb["zoneAwareLbSetting"])
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

// forPort is the policy for one port: its portLevelSettings entry, which
// replaces the whole policy (hasPortLevel), else the policy itself.
func (t *TrafficLB) forPort(port uint32) (p LBPolicy, hasPortLevel bool) {
	if t == nil {
		return LBPolicy{}, false
	}
	if pp, ok := t.Ports[port]; ok {
		return pp, true
	}
	return t.LBPolicy, false
}

// LBFor mirrors getOutlierDetectionAndLoadBalancerSettings: the rule's
// policy for the port, overridden by the subset's (for the port) field by
// field — every field when the subset has port-level settings for it
// (MergeSubsetTrafficPolicy, MergeTrafficPolicy). A nil rule has none.
func (d *DestinationRule) LBFor(port uint32, subset string) LBPolicy {
	if d == nil {
		return LBPolicy{}
	}
	orig, _ := d.LB.forPort(port)
	var sub *TrafficLB
	for i := range d.Subsets {
		if d.Subsets[i].Name == subset {
			sub = d.Subsets[i].LB
			break
		}
	}
	if subset == "" || sub == nil {
		return orig
	}
	sp, hasPortLevel := sub.forPort(port)
	if d.LB == nil {
		return sp
	}
	if sp.OutlierDetection || hasPortLevel {
		orig.OutlierDetection, orig.MinHealthPercent = sp.OutlierDetection, sp.MinHealthPercent
	}
	if sp.LoadBalancer || hasPortLevel {
		orig.LoadBalancer, orig.LocalityLb, orig.ZoneAware = sp.LoadBalancer, sp.LocalityLb, sp.ZoneAware
	}
	return orig
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
