package explain

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// localityProblems reports locality failover that is silently off
// (istio/istio#33024): istiod applies failover and failoverPriority only
// when the DestinationRule also sets outlierDetection (see
// model.DestinationRule.OutlierDetection), for a rule's own
// localityLbSetting and for the mesh-wide one alike.
func localityProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for _, d := range snap.DestinationRules {
		if !d.LocalityLb.FailsOver() || d.OutlierDetection {
			continue
		}
		ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemLocalityFailover, Cluster: d.Cluster, Service: model.FQDN(d.Host, d.Namespace),
			Objects: []model.ObjectRef{{Cluster: d.Cluster, Kind: "DestinationRule", Namespace: d.Namespace, Name: d.Name}},
			Sentence: fmt.Sprintf("DestinationRule %s/%s (config cluster %s) sets locality %s for %s but no outlierDetection: istiod turns failover off without it, so traffic never fails over to another locality — add trafficPolicy.outlierDetection",
				d.Namespace, d.Name, d.Cluster, failoverWhat(d.LocalityLb), d.Host)})
	}
	for _, mc := range snap.MeshConfigs {
		if !mc.LocalityLbSetting.FailsOver() {
			continue
		}
		for _, svc := range snap.Services {
			if IsGatewayService(svc) {
				continue
			}
			d := horizon.DestinationRuleFor(snap, mc.Cluster, svc.Hostname, svc.Namespace)
			if d != nil && (d.OutlierDetection || d.LocalityLb != nil) {
				continue // with outlier detection it works; a rule of its own is judged above
			}
			why := "has no DestinationRule"
			if d != nil {
				why = fmt.Sprintf("its DestinationRule %s/%s sets no outlierDetection", d.Namespace, d.Name)
			}
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemLocalityFailover, Cluster: mc.Cluster, Service: svc.Hostname,
				Sentence: fmt.Sprintf("the mesh config of istiod %s sets locality %s, but %s %s: istiod turns failover off without outlierDetection — add a DestinationRule with trafficPolicy.outlierDetection",
					mc.Cluster, failoverWhat(mc.LocalityLbSetting), model.ShortHost(svc.Hostname), why),
				Group: &model.ProblemGroup{Key: "mesh-failover|" + mc.Cluster, Subject: model.ShortHost(svc.Hostname),
					Format: fmt.Sprintf("the mesh config of istiod %s sets locality %s, but {n} services have no DestinationRule with outlierDetection ({examples}): istiod turns failover off for them — add trafficPolicy.outlierDetection", mc.Cluster, failoverWhat(mc.LocalityLbSetting))}})
		}
	}
	return ps
}

func failoverWhat(l *model.LocalityLbSetting) string {
	if len(l.FailoverPriority) > 0 {
		return "failoverPriority (" + strings.Join(l.FailoverPriority, ", ") + ")"
	}
	var parts []string
	for _, f := range l.Failover {
		parts = append(parts, f.From+"→"+f.To)
	}
	return "failover (" + strings.Join(parts, ", ") + ")"
}

// configSkewProblems compares, between every two primaries whose Istio
// config meshscope reads (multi-primary: each istiod reads its own config
// cluster; istio/istio#33253), the config that applies to each service —
// its DestinationRule, the PeerAuthentications of its namespace and the
// mesh-wide ones — and the mesh config. A difference means the two control
// planes' proxies treat the service differently.
func configSkewProblems(snap *model.Snapshot) []model.Problem {
	cps := plane.Primaries(snap)
	var ps []model.Problem
	for i, a := range cps {
		for _, b := range cps[i+1:] {
			ps = append(ps, meshConfigSkew(snap, a, b)...)
			ps = append(ps, serviceConfigSkew(snap, a, b)...)
		}
	}
	return ps
}

// meshConfigSkew compares the mesh settings that change what proxies get.
func meshConfigSkew(snap *model.Snapshot, a, b string) []model.Problem {
	ma, mb := snap.MeshConfigFor(a), snap.MeshConfigFor(b)
	fields := []struct {
		name string
		x, y any
	}{
		{"trustDomain", ma.TrustDomain, mb.TrustDomain},
		{"rootNamespace", ma.RootNamespace, mb.RootNamespace},
		{"serviceSettings", ma.ServiceSettings, mb.ServiceSettings},
		{"localityLbSetting", ma.LocalityLbSetting, mb.LocalityLbSetting},
		{"enableAutoMtls", ma.EnableAutoMTLS, mb.EnableAutoMTLS},
		{"defaultServiceExportTo", ma.DefaultServiceExportTo, mb.DefaultServiceExportTo},
		{"defaultDestinationRuleExportTo", ma.DefaultDestinationRuleExportTo, mb.DefaultDestinationRuleExportTo},
		{"serviceScopeConfigs", ma.ServiceScopeConfigs, mb.ServiceScopeConfigs},
		{"discoverySelectors", ma.DiscoverySelectors, mb.DiscoverySelectors},
		{"defaultConfig.proxyMetadata", ma.DefaultConfig.ProxyMetadata, mb.DefaultConfig.ProxyMetadata},
	}
	var ps []model.Problem
	for _, f := range fields {
		x, y := jsonText(f.x), jsonText(f.y)
		if x == y {
			continue
		}
		ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemConfigSkew, Cluster: b,
			Sentence: fmt.Sprintf("mesh setting %s differs between istiod %s (%s, %s) and istiod %s (%s, %s): the two primaries treat every service differently — give them the same mesh config",
				f.name, a, x, ma.Source, b, y, mb.Source)})
	}
	return ps
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return "unset"
	}
	return string(b)
}

// serviceConfigSkew compares the DestinationRule and PeerAuthentications
// that apply to each service as istiod a and istiod b read them; one
// differing object over many services is one row.
func serviceConfigSkew(snap *model.Snapshot, a, b string) []model.Problem {
	var ps []model.Problem
	for _, svc := range snap.Services {
		if IsGatewayService(svc) {
			continue
		}
		var diffs []string
		da := horizon.DestinationRuleFor(snap, a, svc.Hostname, svc.Namespace)
		db := horizon.DestinationRuleFor(snap, b, svc.Hostname, svc.Namespace)
		if d := objectDiff("DestinationRule", a, b, drRef(da), drRef(db)); d != "" {
			diffs = append(diffs, d)
		}
		pa := paRefs(horizon.PeerAuthenticationsFor(snap, a, svc.Namespace))
		pb := paRefs(horizon.PeerAuthenticationsFor(snap, b, svc.Namespace))
		for _, name := range unionKeys(pa, pb) {
			if d := objectDiff("PeerAuthentication", a, b, pa[name], pb[name]); d != "" {
				diffs = append(diffs, d)
			}
		}
		sa, sb := seRefs(svc, a), seRefs(svc, b)
		for _, name := range unionKeys(sa, sb) {
			if d := objectDiff("ServiceEntry", a, b, sa[name], sb[name]); d != "" {
				diffs = append(diffs, d)
			}
		}
		for _, d := range diffs {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemConfigSkew, Cluster: b, Service: svc.Hostname,
				Sentence: fmt.Sprintf("%s: %s, so proxies of the two primaries treat it differently — apply the same Istio config in every primary's config cluster", model.ShortHost(svc.Hostname), d),
				Group: &model.ProblemGroup{Key: "skew|" + a + "|" + b + "|" + d, Subject: model.ShortHost(svc.Hostname),
					Format: fmt.Sprintf("%s for {n} services ({examples}), so proxies of the two primaries treat them differently — apply the same Istio config in every primary's config cluster", d)}})
		}
	}
	return ps
}

// objRef names one Istio object and its spec's fingerprint ("" when absent).
type objRef struct{ name, fingerprint string }

func drRef(d *model.DestinationRule) objRef {
	if d == nil {
		return objRef{}
	}
	return objRef{d.Namespace + "/" + d.Name, d.Fingerprint}
}

// seRefs names the ServiceEntries that declare svc's hostname in the
// config cluster cp, each with a fingerprint of what decides its endpoints
// (hosts, ports, resolution, location, exportTo, selector).
func seRefs(svc *model.Service, cp string) map[string]objRef {
	m := map[string]objRef{}
	for _, h := range svc.ServiceEntries {
		if h.Cluster != cp {
			continue
		}
		n := h.Namespace + "/" + h.Name
		spec := struct {
			Resolution, Location string
			Ports                []model.ServicePort
			ExportTo             []string
			Selector             map[string]string
		}{h.Resolution, h.Location, h.Ports, h.ExportTo, h.WorkloadSelector}
		m[n] = objRef{n, jsonText(spec)}
	}
	return m
}

func paRefs(pas []model.PeerAuthentication) map[string]objRef {
	m := map[string]objRef{}
	for _, p := range pas {
		n := p.Namespace + "/" + p.Name
		m[n] = objRef{n, p.Fingerprint}
	}
	return m
}

func unionKeys(a, b map[string]objRef) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// objectDiff says how one object differs between control planes a and b.
func objectDiff(kind, a, b string, x, y objRef) string {
	switch {
	case x == y:
		return ""
	case x.name == "":
		return fmt.Sprintf("istiod %s applies %s %s, istiod %s has none", b, kind, y.name, a)
	case y.name == "":
		return fmt.Sprintf("istiod %s applies %s %s, istiod %s has none", a, kind, x.name, b)
	case x.name != y.name:
		return fmt.Sprintf("istiod %s applies %s %s, istiod %s applies %s", a, kind, x.name, b, y.name)
	}
	return fmt.Sprintf("%s %s differs between istiod %s and istiod %s", kind, x.name, a, b)
}
