package horizon

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// DestinationRules as istiod's push context indexes them (setDestinationRules,
// mergeDestinationRule) and a proxy finds them (PushContext.destinationRule,
// SidecarScope.DestinationRule).

// mergedRule is one ConsolidatedDestRule: the DestinationRules of one host
// in one namespace index merged into one (the oldest's traffic policy, the
// subsets of all, the first subset of a name winning).
type mergedRule struct {
	rule model.DestinationRule
	from []string // namespace/name of every rule merged in
	// policyFrom is the rule whose traffic policy the merged one has
	// (the oldest with one); subsetFrom the rule each subset came from:
	// the object a fix of its TLS mode edits.
	policyFrom model.ObjectRef
	subsetFrom map[string]model.ObjectRef
	exportTo   []string // normalised (sorted, deduplicated)
	selector   map[string]string
}

// drIndex holds the merged rules of one namespace index by resolved host.
type drIndex map[string][]*mergedRule

// drIndexes are the three indexes of istiod's destinationRuleIndex.
type drIndexes struct {
	namespaceLocal     map[string]drIndex
	exportedByNS       map[string]drIndex
	rootNamespaceLocal drIndex
	root               string
}

// indexDestinationRules mirrors setDestinationRules for the rules an istiod
// reads (its config cluster, discovered namespaces).
func indexDestinationRules(drs []model.DestinationRule, mc model.MeshConfig) drIndexes {
	ix := drIndexes{namespaceLocal: map[string]drIndex{}, exportedByNS: map[string]drIndex{}, rootNamespaceLocal: drIndex{}, root: mc.RootNamespace}
	if len(drs) == 0 {
		return ix
	}
	sorted := slices.Clone(drs)
	// sortConfigBySelectorAndCreationTime: rules with a selector first,
	// then oldest first, then by name and namespace.
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if (a.WorkloadSelector != nil) != (b.WorkloadSelector != nil) {
			return a.WorkloadSelector != nil
		}
		if !a.Created.Equal(b.Created) {
			return a.Created.Before(b.Created)
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Namespace < b.Namespace
	})
	privateDefault := slices.Contains(mc.DefaultDestinationRuleExportTo, ".")
	for _, d := range sorted {
		d.Host = model.FQDN(d.Host, d.Namespace)
		exportTo := normalise(d.ExportTo)
		if d.WorkloadSelector != nil {
			// Rules with a workloadSelector are never exported.
			exportTo = []string{"."}
		}
		has := func(v string) bool { return slices.Contains(exportTo, v) }
		if len(exportTo) == 0 || has("*") || has(".") || has(d.Namespace) {
			addRule(ix.namespaceLocal, d.Namespace, d, exportTo)
		}
		privateOnly := (len(exportTo) == 0 && privateDefault) || (len(exportTo) == 1 && (has(".") || has(d.Namespace)))
		switch {
		case !privateOnly:
			addRule(ix.exportedByNS, d.Namespace, d, exportTo)
		case d.Namespace == ix.root:
			ix.rootNamespaceLocal.merge(d, exportTo)
		}
	}
	return ix
}

func addRule(m map[string]drIndex, ns string, d model.DestinationRule, exportTo []string) {
	if m[ns] == nil {
		m[ns] = drIndex{}
	}
	m[ns].merge(d, exportTo)
}

// merge mirrors mergeDestinationRule with ENABLE_ENHANCED_DESTINATIONRULE_MERGE
// (istiod's default): rules with equal exportTo (or a wider one) and both
// without a selector, or with equal selectors, merge; others stay apart.
func (ix drIndex) merge(d model.DestinationRule, exportTo []string) {
	list := ix[d.Host]
	appendSeparately := true
	for _, m := range list {
		switch {
		case slices.Equal(exportTo, m.exportTo):
			appendSeparately = false
		case len(m.exportTo) > 0 && supersetOf(exportTo, m.exportTo):
			appendSeparately = true
		default:
			appendSeparately = true
			continue
		}
		bothWithout := d.WorkloadSelector == nil && m.selector == nil
		bothWith := d.WorkloadSelector != nil && m.selector != nil
		match := maps.Equal(d.WorkloadSelector, m.selector)
		if bothWith && !match {
			appendSeparately = true
			continue
		}
		if bothWithout || (bothWith && match) {
			appendSeparately = false
		}
		merged := m.rule
		merged.Subsets = slices.Clone(merged.Subsets)
		for _, ss := range d.Subsets {
			if !slices.ContainsFunc(merged.Subsets, func(e model.Subset) bool { return e.Name == ss.Name }) {
				merged.Subsets = append(merged.Subsets, ss)
				m.subsetFrom = maps.Clone(m.subsetFrom)
				m.subsetFrom[ss.Name] = ruleRef(d)
			}
		}
		if !merged.TrafficPolicy && d.TrafficPolicy {
			merged.TrafficPolicy, merged.TLSMode, merged.PortTLS = true, d.TLSMode, d.PortTLS
			merged.LB, merged.LocalityLb, merged.OutlierDetection = d.LB, d.LocalityLb, d.OutlierDetection
			m.policyFrom = ruleRef(d)
		}
		m.rule = merged
		m.from = append(m.from, d.Namespace+"/"+d.Name)
	}
	if appendSeparately {
		m := &mergedRule{rule: d, from: []string{d.Namespace + "/" + d.Name}, exportTo: exportTo, selector: d.WorkloadSelector,
			policyFrom: ruleRef(d), subsetFrom: map[string]model.ObjectRef{}}
		for _, ss := range d.Subsets {
			m.subsetFrom[ss.Name] = ruleRef(d)
		}
		ix[d.Host] = append(list, m)
	}
}

// ruleRef names a DestinationRule as an object of its config cluster.
func ruleRef(d model.DestinationRule) model.ObjectRef {
	return model.ObjectRef{Cluster: d.Cluster, Kind: "DestinationRule", Namespace: d.Namespace, Name: d.Name}
}

// tlsFrom is the rule that sets the TLS mode tlsModeFor gives: the
// subset's own rule when the subset sets one for the port, else the rule
// whose traffic policy was merged in.
func (m *mergedRule) tlsFrom(subset string, port uint32) model.ObjectRef {
	for _, ss := range m.rule.Subsets {
		if ss.Name == subset {
			if _, ok := portMode(ss.TLSMode, ss.PortTLS, port); ok {
				return m.subsetFrom[ss.Name]
			}
		}
	}
	return m.policyFrom
}

// lookup mirrors PushContext.destinationRule: the proxy's namespace first
// (for a proxy in the root namespace, the root namespace's private rules),
// then rules the service's namespace exports to the proxy, then those the
// root namespace exports. nil when none applies.
func (ix drIndexes) lookup(host, svcNS, proxyNS string) []*mergedRule {
	if proxyNS != ix.root {
		if rules := ix.namespaceLocal[proxyNS].match(host); rules != nil {
			return rules
		}
	} else if rules := ix.rootNamespaceLocal.match(host); rules != nil {
		return rules
	}
	for _, ns := range [...]string{svcNS, ix.root} {
		var out []*mergedRule
		for _, m := range ix.exportedByNS[ns].match(host) {
			if len(m.exportTo) == 0 || slices.Contains(m.exportTo, "*") || slices.Contains(m.exportTo, proxyNS) {
				out = append(out, m)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// forProxy mirrors SidecarScope.DestinationRule: a rule whose
// workloadSelector matches the proxy's labels (in the proxy's namespace),
// else the last rule without a selector.
func forProxy(rules []*mergedRule, proxyNS string, labels map[string]string) *mergedRule {
	var catchAll *mergedRule
	for _, m := range rules {
		if m.selector == nil {
			catchAll = m
			continue
		}
		if m.rule.Namespace == proxyNS && subsetOf(m.selector, labels) {
			return m
		}
	}
	return catchAll
}

// match mirrors MostSpecificHostMatch: the exact host, else the most
// specific wildcard that matches.
func (ix drIndex) match(host string) []*mergedRule {
	if ix == nil {
		return nil
	}
	if r, ok := ix[host]; ok {
		return r
	}
	needle := strings.TrimPrefix(host, "*")
	best := ""
	for h := range ix {
		if !strings.HasPrefix(h, "*") || !strings.HasSuffix(needle, h[1:]) {
			continue
		}
		// host.MoreSpecific: longer first, then alphabetical.
		if best == "" || len(h) > len(best) || (len(h) == len(best) && h < best) {
			best = h
		}
	}
	if best == "" {
		return nil
	}
	return ix[best]
}

// tlsModeFor mirrors tlsModeForDestinationRule: for no subset the rule's
// mode for the port; for a subset its own mode for the port, else the
// rule's; for a subset the rule lacks, none.
func (m *mergedRule) tlsModeFor(subset string, port uint32) (string, bool) {
	if m == nil {
		return "", false
	}
	if subset == "" {
		return portMode(m.rule.TLSMode, m.rule.PortTLS, port)
	}
	for _, ss := range m.rule.Subsets {
		if ss.Name != subset {
			continue
		}
		if mode, ok := portMode(ss.TLSMode, ss.PortTLS, port); ok {
			return mode, true
		}
		return portMode(m.rule.TLSMode, m.rule.PortTLS, port)
	}
	return "", false
}

// subsetLabels mirrors getSubSetLabels: the subset's labels; none (every
// endpoint) for no subset, a subset without labels, or one the rule lacks.
func (m *mergedRule) subsetLabels(subset string) (labels map[string]string, found bool) {
	if m == nil || subset == "" {
		return nil, false
	}
	for _, ss := range m.rule.Subsets {
		if ss.Name == subset {
			return ss.Labels, true
		}
	}
	return nil, false
}

// portMode mirrors trafficPolicyTLSModeForPort: the port-level mode when
// that port has one, else the policy's.
func portMode(mode string, ports map[uint32]string, port uint32) (string, bool) {
	if m, ok := ports[port]; ok {
		return m, true
	}
	return mode, mode != ""
}

func normalise(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	out := slices.Clone(l)
	sort.Strings(out)
	return slices.Compact(out)
}

func supersetOf(a, b []string) bool {
	for _, v := range b {
		if !slices.Contains(a, v) {
			return false
		}
	}
	return true
}

func subsetOf(sel, labels map[string]string) bool {
	for k, v := range sel {
		if l, ok := labels[k]; !ok || l != v {
			return false
		}
	}
	return true
}
