package fix

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/model"
)

// Fixes of an mTLS drop: a cross-network endpoint istiod leaves out
// because the gateway routes by SNI, which needs mTLS. The cause decides
// the object: the DestinationRule that turns TLS off, the
// PeerAuthentication that disables mTLS, or the workload without the mTLS
// label (its pod template, its WorkloadEntry).

func planDrop(snap *model.Snapshot, p model.Problem) Plan {
	var pods, others []model.ObjectRef
	for _, o := range p.Objects {
		switch o.Kind {
		case "DestinationRule":
			return planDestinationRuleTLS(o)
		case "PeerAuthentication":
			return planPeerAuthentication(o)
		case "Pod":
			pods = append(pods, o)
		default:
			others = append(others, o)
		}
	}
	var out Plan
	if len(pods) > 0 {
		out.Proposals = podMTLSProposals(snap, pods)
	}
	for _, o := range others {
		if o.Kind != "WorkloadEntry" {
			return none(fmt.Sprintf("%s is an inline endpoint of a ServiceEntry: give it the label %s=istio there, once its workload accepts mTLS", o, model.LabelTLSMode))
		}
		out.Proposals = append(out.Proposals, Proposal{
			Title: fmt.Sprintf("label %s %s=istio", o, model.LabelTLSMode),
			Trade: "right when the workload runs a proxy that accepts Istio mTLS (istio-proxy with the mesh's certificates): other networks reach it through the gateway",
			Edits: []Edit{setLabel(o, false, model.LabelTLSMode, ptr("istio"))},
		})
	}
	if len(out.Proposals) == 0 {
		return none("the dropped endpoints' workloads are not known")
	}
	return out
}

// podMTLSProposals: the mTLS label on the pods' templates (proven by
// what-if, which re-makes the pods), and the sidecar injected (which
// what-if cannot prove: meshscope does not run the injector). When the
// pods run no sidecar the label alone would be wrong, so injection comes
// first.
func podMTLSProposals(snap *model.Snapshot, pods []model.ObjectRef) []Proposal {
	sidecars := 0
	for _, r := range pods {
		if runsSidecar(snap, r) {
			sidecars++
		}
	}
	label := Proposal{
		Title: fmt.Sprintf("label the pod templates of the workloads of %s %s=istio", podsText(pods), model.LabelTLSMode),
		Trade: "says what their sidecars do — accept Istio mTLS: other networks reach them through the gateway once their pods are re-made (a rollout)",
		Edits: setLabels(pods, true, model.LabelTLSMode, ptr("istio")),
	}
	if sidecars < len(pods) {
		label.Trade = fmt.Sprintf("%d of these %d pods run no sidecar (no istio-proxy container): the label makes other networks send them Istio mTLS through the gateway, which they cannot read unless something in them terminates it — inject the sidecar instead unless it does", len(pods)-sidecars, len(pods))
	}
	var nsEdits []Edit
	var seen []model.ObjectRef
	for _, r := range pods {
		ns := model.ObjectRef{Cluster: r.Cluster, Kind: "Namespace", Name: r.Namespace}
		if !slices.Contains(seen, ns) {
			seen = append(seen, ns)
			nsEdits = append(nsEdits, setLabel(ns, false, model.LabelInjection, ptr("enabled")))
		}
	}
	inject := Proposal{
		Title:    fmt.Sprintf("inject the sidecar: label %s %s=enabled and restart the workloads of %s", joinRefs(seen), model.LabelInjection, podsText(pods)),
		Trade:    "every new pod of the namespace gets a sidecar (and the mTLS label with it); the restart replaces the pods",
		Edits:    nsEdits,
		Restart:  pods,
		Unproven: "meshscope does not run the sidecar injector: what-if cannot make the pods' sidecars",
	}
	if sidecars < len(pods) {
		return []Proposal{inject, label}
	}
	return []Proposal{label, inject}
}

// runsSidecar: the pod runs an injected istio-proxy.
func runsSidecar(snap *model.Snapshot, r model.ObjectRef) bool {
	for _, p := range snap.Proxies {
		if p.Cluster == r.Cluster && p.Namespace == r.Namespace && p.Name == r.Name {
			return p.Kind == model.ProxySidecar
		}
	}
	return false
}

func podsText(pods []model.ObjectRef) string {
	if len(pods) == 1 {
		return fmt.Sprintf("pod %s in %s", short(pods[0]), pods[0].Cluster)
	}
	return fmt.Sprintf("%d pods (%s in %s, …)", len(pods), short(pods[0]), pods[0].Cluster)
}

// planDestinationRuleTLS: the rule turns TLS off (or to non-Istio TLS)
// for the host. Its tls settings removed (istiod's auto mTLS then picks
// Istio mTLS for sidecars, plaintext for the others), or set to
// ISTIO_MUTUAL.
func planDestinationRuleTLS(dr model.ObjectRef) Plan {
	return Plan{Proposals: []Proposal{
		{
			Title: fmt.Sprintf("remove the tls settings that are not ISTIO_MUTUAL from %s", dr),
			Trade: "istiod's auto mTLS decides per endpoint: Istio mTLS to pods with a sidecar (so through the gateway), plaintext to the others",
			Edits: []Edit{changeSpec(dr, "no tls setting other than ISTIO_MUTUAL", func(m map[string]any) error {
				return eachTLS(m, func(policy map[string]any) { delete(policy, "tls") })
			})},
		},
		{
			Title: fmt.Sprintf("set every tls mode of %s to ISTIO_MUTUAL", dr),
			Trade: "every client of the host uses Istio mTLS, to endpoints without a sidecar too (which refuse it)",
			Edits: []Edit{changeSpec(dr, "tls mode ISTIO_MUTUAL wherever it is set", func(m map[string]any) error {
				return eachTLS(m, func(policy map[string]any) { policy["tls"] = map[string]any{"mode": "ISTIO_MUTUAL"} })
			})},
		},
	}}
}

// eachTLS calls f on every traffic policy of a DestinationRule (the
// rule's, its port-level settings', its subsets' and theirs) whose tls
// mode is not ISTIO_MUTUAL (a tls without a mode is DISABLE).
func eachTLS(m map[string]any, f func(policy map[string]any)) error {
	visit := func(policy map[string]any) {
		if tls, ok := policy["tls"].(map[string]any); ok && tls["mode"] != "ISTIO_MUTUAL" {
			f(policy)
		}
		if pls, ok := policy["portLevelSettings"].([]any); ok {
			for _, pl := range pls {
				if plm, ok := pl.(map[string]any); ok {
					if tls, ok := plm["tls"].(map[string]any); ok && tls["mode"] != "ISTIO_MUTUAL" {
						f(plm)
					}
				}
			}
		}
	}
	if tp, ok, _ := unstructured.NestedMap(m, "spec", "trafficPolicy"); ok {
		visit(tp)
		if err := unstructured.SetNestedMap(m, tp, "spec", "trafficPolicy"); err != nil {
			return err
		}
	}
	subsets, _, _ := unstructured.NestedSlice(m, "spec", "subsets")
	for _, s := range subsets {
		if sm, ok := s.(map[string]any); ok {
			if tp, ok := sm["trafficPolicy"].(map[string]any); ok {
				visit(tp)
			}
		}
	}
	if len(subsets) > 0 {
		return unstructured.SetNestedSlice(m, subsets, "spec", "subsets")
	}
	return nil
}

// planPeerAuthentication: the policy disables mTLS for the workload.
// PERMISSIVE instead keeps plaintext working where it was used.
func planPeerAuthentication(pa model.ObjectRef) Plan {
	return Plan{Proposals: []Proposal{{
		Title: fmt.Sprintf("set the mTLS mode DISABLE of %s to PERMISSIVE", pa),
		Trade: "the workloads accept Istio mTLS and plaintext: other networks reach them through the gateway, and plaintext from inside stays allowed",
		Edits: []Edit{changeSpec(pa, "mtls mode PERMISSIVE where it was DISABLE", func(m map[string]any) error {
			if mode, _, _ := unstructured.NestedString(m, "spec", "mtls", "mode"); mode == "DISABLE" {
				if err := unstructured.SetNestedField(m, "PERMISSIVE", "spec", "mtls", "mode"); err != nil {
					return err
				}
			}
			ports, ok, _ := unstructured.NestedMap(m, "spec", "portLevelMtls")
			if !ok {
				return nil
			}
			for k, v := range ports {
				if pm, ok := v.(map[string]any); ok && pm["mode"] == "DISABLE" {
					pm["mode"] = "PERMISSIVE"
					ports[k] = pm
				}
			}
			return unstructured.SetNestedMap(m, ports, "spec", "portLevelMtls")
		})},
	}}}
}
