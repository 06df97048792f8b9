package fix

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/model"
)

// Fixes of services, namespaces and Istio config: a Service copied into
// the cluster that lacks it, a namespace's revision label, a
// DestinationRule's outlier detection, a ServiceEntry's port name.

// planMissingService: a service some clusters have and one where its
// callers run lacks. The Service is created there, copied from a cluster
// that has it (a context cluster first) without what that cluster's API
// server gave it.
func planMissingService(snap *model.Snapshot, p model.Problem) Plan {
	var edits []Edit
	for _, target := range p.Objects {
		svc := snap.Service(model.Hostname(target.Name, target.Namespace))
		if svc == nil {
			continue
		}
		from := ""
		for _, cid := range sortedKeys(svc.Clusters) {
			c := snap.ClusterByID(cid)
			if svc.Clusters[cid].NoService || c == nil || c.State != model.StateSynced {
				continue
			}
			if from == "" || (c.IsContext() && !snap.ClusterByID(from).IsContext()) {
				from = cid
			}
		}
		if from == "" {
			continue
		}
		src := model.ObjectRef{Cluster: from, Kind: "Service", Namespace: target.Namespace, Name: target.Name}
		edits = append(edits, Edit{Object: target, From: &src, What: fmt.Sprintf("created as a copy of %s, without its cluster IP and node ports", src)})
	}
	if len(edits) == 0 {
		return none("no synced cluster has the Service to copy")
	}
	return Plan{Proposals: []Proposal{{
		Title: fmt.Sprintf("create %s (a copy of the Service in %s)", joinRefs(p.Objects), edits[0].From.Cluster),
		Trade: fmt.Sprintf("its name resolves in %s; its selector picks %s's own pods of the namespace, if any, which istiod then merges in (turning on DNS proxying, ISTIO_META_DNS_CAPTURE, would do without the Service, for every proxy of the mesh config)", p.Cluster, p.Cluster),
		Edits: edits,
	}}}
}

// planNamespaceRevision: a namespace labelled for injection by a revision
// no istiod serves in its cluster. Labelled for each revision that runs
// there (the default one as istio-injection=enabled), or not at all.
func planNamespaceRevision(snap *model.Snapshot, p model.Problem) Plan {
	if len(p.Objects) == 0 {
		return Plan{}
	}
	ns := p.Objects[0]
	servers, _ := snap.RevisionServers(ns.Cluster)
	var revs []string
	for _, s := range servers {
		for _, r := range s.Revisions() {
			if s.RevisionReady(r) && !slices.Contains(revs, r) {
				revs = append(revs, r)
			}
		}
	}
	keys := []string{model.LabelInjection, model.LabelRev}
	restart := fmt.Sprintf("; restart its workloads to move the pods it has (kubectl rollout restart deployment -n %s --context %s)", ns.Name, orText(ContextOf(snap, ns.Cluster), ns.Cluster))
	var out Plan
	for _, r := range revs {
		values := map[string]*string{model.LabelInjection: nil, model.LabelRev: ptr(r)}
		label := model.LabelRev + "=" + r
		if r == model.RevisionDefault {
			values = map[string]*string{model.LabelInjection: ptr("enabled"), model.LabelRev: nil}
			label = model.LabelInjection + "=enabled"
		}
		out.Proposals = append(out.Proposals, Proposal{
			Title: fmt.Sprintf("label %s %s (revision %s runs there)", ns, label, r),
			Trade: fmt.Sprintf("new pods there get revision %s's sidecar%s", r, restart),
			Edits: []Edit{setLabelsOn(ns, false, keys, values)},
		})
	}
	out.Proposals = append(out.Proposals, Proposal{
		Title: fmt.Sprintf("remove the injection labels of %s", ns),
		Trade: "new pods there get no sidecar at all: they leave the mesh as they are re-made",
		Edits: []Edit{setLabelsOn(ns, false, keys, map[string]*string{})},
	})
	return out
}

// planLocalityFailover: a DestinationRule's locality failover without
// outlier detection, which istiod turns off. Istio's documented example
// thresholds added.
func planLocalityFailover(_ *model.Snapshot, p model.Problem) Plan {
	if len(p.Objects) == 0 {
		return Plan{} // the mesh config's failover: no object to edit
	}
	dr := p.Objects[0]
	return Plan{Proposals: []Proposal{{
		Title: fmt.Sprintf("add trafficPolicy.outlierDetection to %s (consecutive5xxErrors 5, interval 10s, baseEjectionTime 30s)", dr),
		Trade: "failover works: Envoy ejects an endpoint after 5 consecutive 5xx responses for 30 s, and moves to the next locality when the nearer ones are ejected — tune the thresholds to the service",
		Edits: []Edit{changeSpec(dr, "trafficPolicy.outlierDetection", func(m map[string]any) error {
			return unstructured.SetNestedMap(m, map[string]any{"consecutive5xxErrors": int64(5), "interval": "10s", "baseEjectionTime": "30s"}, "spec", "trafficPolicy", "outlierDetection")
		})},
	}}}
}

// planServiceEntryPortName: a ServiceEntry names a port of a Kubernetes
// Service's host otherwise than the Service: renamed as the Service names
// it.
func planServiceEntryPortName(snap *model.Snapshot, p model.Problem) Plan {
	svc := snap.Service(p.Service)
	if svc == nil || len(p.Objects) == 0 {
		return Plan{}
	}
	se := p.Objects[0]
	rename := map[int64]string{}
	for _, h := range svc.ServiceEntries {
		if h.Cluster != se.Cluster || h.Namespace != se.Namespace || h.Name != se.Name {
			continue
		}
		for _, sp := range h.Ports {
			for _, kp := range svc.Ports {
				if kp.Port == sp.Port && kp.Name != sp.Name {
					rename[int64(sp.Port)] = kp.Name
				}
			}
		}
	}
	if len(rename) == 0 {
		return Plan{}
	}
	return Plan{Proposals: []Proposal{{
		Title: fmt.Sprintf("name the ports of %s as the Kubernetes Service %s names them", se, model.ShortHost(svc.Hostname)),
		Trade: "the ServiceEntry's workloads join the Service's endpoints on those ports",
		Edits: []Edit{changeSpec(se, "port names as the Service's", func(m map[string]any) error {
			ports, _, _ := unstructured.NestedSlice(m, "spec", "ports")
			for _, pt := range ports {
				pm, ok := pt.(map[string]any)
				if !ok {
					continue
				}
				if n, ok := pm["number"].(int64); ok && rename[n] != "" {
					pm["name"] = rename[n]
				}
			}
			return unstructured.SetNestedSlice(m, ports, "spec", "ports")
		})},
	}}}
}

// planAmbientScope: a service global in some clusters but not in others.
// Its Service there gets labels a GLOBAL entry of the mesh config's
// serviceScopeConfigs selects, where that entry's namespace selector
// selects the namespace.
func planAmbientScope(snap *model.Snapshot, p model.Problem) Plan {
	labels := globalLabels(snap, p.Objects)
	if len(labels) == 0 || len(p.Objects) == 0 {
		return Plan{}
	}
	keys := sortedKeys(labels)
	values := map[string]*string{}
	var what []string
	for _, k := range keys {
		values[k] = ptr(labels[k])
		what = append(what, k+"="+labels[k])
	}
	var edits []Edit
	for _, o := range p.Objects {
		edits = append(edits, setLabelsOn(o, false, keys, values))
	}
	return Plan{Proposals: []Proposal{{
		Title: fmt.Sprintf("label %s %s (global, as in the other clusters)", joinRefs(p.Objects), strings.Join(what, ",")),
		Trade: "the service is global everywhere: ztunnels of every network reach its pods in those clusters too, through the east-west gateways",
		Edits: edits,
	}}}
}

// globalLabels are labels that the services selector of the first GLOBAL
// service scope of a mesh config selects (its matchLabels, and for each
// expression In its first value, Exists "true"), where its namespace
// selector selects the objects' namespace in their clusters (nil when
// none can be made: NotIn or DoesNotExist alone).
func globalLabels(snap *model.Snapshot, objs []model.ObjectRef) map[string]string {
	for _, mc := range snap.MeshConfigs {
		for _, sc := range mc.ServiceScopeConfigs {
			sel := sc.ServicesSelector
			if !strings.EqualFold(sc.Scope, "GLOBAL") || sel == nil {
				continue
			}
			labels := map[string]string{}
			for k, v := range sel.MatchLabels {
				labels[k] = v
			}
			for _, e := range sel.MatchExpressions {
				switch {
				case e.Operator == "In" && len(e.Values) > 0:
					labels[e.Key] = e.Values[0]
				case e.Operator == "Exists":
					labels[e.Key] = "true"
				}
			}
			all := len(labels) > 0 && model.Selects(sel, labels)
			for _, o := range objs {
				all = all && model.Selects(sc.NamespaceSelector, snap.AmbientFor(o.Cluster).NamespaceLabels(o.Namespace))
			}
			if all {
				return labels
			}
		}
	}
	return nil
}
