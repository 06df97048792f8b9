package explain

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

// SortProblems orders problems errors first, then by kind and subject.
func SortProblems(ps []model.Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Severity.Rank() != ps[j].Severity.Rank() {
			return ps[i].Severity.Rank() < ps[j].Severity.Rank()
		}
		if ps[i].Kind != ps[j].Kind {
			return ps[i].Kind < ps[j].Kind
		}
		return ps[i].Service+ps[i].Cluster < ps[j].Service+ps[j].Cluster
	})
}

// HasErrors reports whether any problem is an error (doctor's exit code).
func HasErrors(ps []model.Problem) bool {
	for _, p := range ps {
		if p.Severity == model.SeverityError {
			return true
		}
	}
	return false
}

func clusterProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for _, c := range snap.Clusters {
		via := ""
		if c.Source.Kind == model.SourceSecret {
			via = fmt.Sprintf(" (remote secret %s)", c.Source.Name)
		}
		switch c.State {
		case model.StateSynced:
		case model.StateError:
			kind := model.ProblemClusterState
			if c.Source.Kind == model.SourceSecret {
				kind = model.ProblemRemoteSecret
			}
			var objs []model.ObjectRef
			if c.Source.Kind == model.SourceSecret {
				objs = []model.ObjectRef{secretRef(c.Source)}
			}
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: kind, Cluster: c.ID, Objects: objs,
				Sentence: fmt.Sprintf("cluster %s%s: %s", c.ID, via, orText(c.Reason, "error"))})
		case model.StateRemoved:
		default:
			sev := model.SeverityWarning
			if c.State == model.StateTimeout {
				sev = model.SeverityError
			}
			ps = append(ps, model.Problem{Severity: sev, Kind: model.ProblemClusterState, Cluster: c.ID,
				Sentence: fmt.Sprintf("cluster %s%s is %s%s: its services and endpoints may be incomplete", c.ID, via, c.State, withReason(c.Reason))})
		}
		for _, w := range c.Warnings {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemClusterWarning, Cluster: c.ID, Sentence: fmt.Sprintf("cluster %s: %s", c.ID, w)})
		}
	}
	return ps
}

// gatewayFound: the gateway Service ns/name of cluster gives a gateway.
func gatewayFound(snap *model.Snapshot, name, cluster string) bool {
	for _, g := range snap.Gateways {
		if g.Service == name && g.Cluster == cluster {
			return true
		}
	}
	return false
}

func readyEndpoints(sic *model.ServiceInCluster) int {
	n := 0
	for _, e := range sic.Endpoints {
		if e.Ready {
			n++
		}
	}
	return n
}

func labelProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	seen := map[string]bool{}
	for _, svc := range snap.Services {
		for cid, sic := range svc.Clusters {
			c := snap.ClusterByID(cid)
			if c == nil || c.Network == "" {
				continue
			}
			for _, e := range sic.Endpoints {
				if e.NetworkFrom != model.NetworkFromPodLabel || e.Network == c.Network || e.Pod == "" {
					continue
				}
				k := cid + "/" + e.Pod
				if seen[k] {
					continue
				}
				seen[k] = true
				ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemNetworkLabel, Cluster: cid, Service: svc.Hostname,
					Objects:  workloadRefs(cid, svc.Namespace, e.Pod, ""),
					Sentence: fmt.Sprintf("pod %s in %s is labelled %s=%s, but its cluster's network (label on the system namespace) is %s: the pod label wins — check which is right", e.Pod, cid, model.LabelNetwork, e.Network, c.Network)})
			}
		}
	}
	return ps
}

// leakDropProblems reports the leaked and the mTLS-dropped endpoints of one
// prediction; each can be grouped with the same cause elsewhere (Group).
// A pod dropped for want of a sidecar because it runs in ambient mode is
// only information: in an ambient mesh its callers are ztunnels, which reach
// it over HBONE (a sidecar of another network cannot: istiod leaves it out
// of the sidecar's EDS, as for any pod without tlsMode=istio).
func leakDropProblems(snap *model.Snapshot, host string, v horizon.Proxy, p horizon.Prediction) []model.Problem {
	var ps []model.Problem
	ns := ""
	if svc := snap.Service(host); svc != nil {
		ns = svc.Namespace
	}
	for _, e := range p.Endpoints {
		if e.Kind != horizon.Leaked {
			continue
		}
		fix := fmt.Sprintf("no gateway is known for %s — label the east-west gateway Service %s=%s and give it an external IP", e.Network, model.LabelNetwork, e.Network)
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemLeak, Cluster: e.Cluster, Service: host,
			Objects:  workloadRefs(e.Cluster, ns, e.Pod, e.Workload),
			Sentence: fmt.Sprintf("%s: %s:%d%s goes to %s directly: %s", host, e.Address, e.Port, describe(orText(e.Pod, e.Workload), e.Cluster, e.Network), v.Network, fix),
			Group: &model.ProblemGroup{Key: "leak|" + e.Network + "|" + v.Network, Subject: model.ShortHost(host) + " " + e.Address,
				Format: fmt.Sprintf("{n} endpoints of %s are sent to %s proxies with their pod IPs ({examples}): %s", e.Network, v.Network, fix)}})
	}
	for _, d := range p.Dropped {
		if d.Reason != horizon.DropNoMTLS {
			continue
		}
		fix := fmt.Sprintf("inject the sidecar (or label the pod) in %s", d.Cluster)
		if d.Workload != "" {
			fix = fmt.Sprintf("give %s a serviceAccount, or the label %s=istio once its proxy accepts mTLS", d.Workload, model.LabelTLSMode)
		}
		switch d.Cause {
		case horizon.CausePeerAuthentication:
			fix = "let that PeerAuthentication allow mTLS (PERMISSIVE or STRICT) for cross-network traffic"
		case horizon.CauseDestinationRule:
			fix = "use tls mode ISTIO_MUTUAL in that DestinationRule (or drop its tls setting)"
		}
		if d.Cause == horizon.CausePodLabel && d.Pod != "" && ambientPod(snap, host, d.Cluster, d.Pod) {
			ps = append(ps, ambientSidecarDrop(host, ns, v, d))
			continue
		}
		why := strings.TrimPrefix(d.Why, "cross-network endpoint without mTLS: ")
		key := "drop|" + d.Cause + "|" + d.Cluster + "|" + v.Network
		groupWhy := fmt.Sprintf("their pods lack %s=istio (no sidecar)", model.LabelTLSMode)
		if d.Cause != horizon.CausePodLabel {
			key += "|" + why
			// The group's sentence says why SNI needs mTLS itself.
			groupWhy = strings.TrimSuffix(why, "; the gateway routes by SNI, which needs mTLS")
		}
		objs := workloadRefs(d.Cluster, ns, d.Pod, d.Workload)
		if d.Config != nil {
			objs = []model.ObjectRef{*d.Config}
		}
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemDrop, Cluster: d.Cluster, Service: host, Objects: objs,
			Sentence: fmt.Sprintf("%s: %s:%d%s is dropped for %s: %s — %s",
				host, d.Address, d.Port, describe(orText(d.Pod, d.Workload), d.Cluster, d.Network), v.Network, why, fix),
			Group: &model.ProblemGroup{Key: key, Subject: model.ShortHost(host) + " " + orText(orText(d.Pod, d.Workload), d.Address),
				Format: fmt.Sprintf("{n} endpoints in %s are dropped for %s proxies ({examples}): %s; the gateway routes by SNI, which needs mTLS — %s", d.Cluster, v.Network, groupWhy, fix)}})
	}
	return ps
}

// workloadRefs names the object behind an endpoint of a service of
// namespace ns: its pod, its WorkloadEntry, or the ServiceEntry of an
// inline endpoint ("ServiceEntry/NAME[INDEX]").
func workloadRefs(cluster, ns, pod, workload string) []model.ObjectRef {
	if pod != "" {
		return []model.ObjectRef{{Cluster: cluster, Kind: "Pod", Namespace: ns, Name: pod}}
	}
	kind, name, ok := strings.Cut(workload, "/")
	if !ok {
		return nil
	}
	name, _, _ = strings.Cut(name, "[")
	return []model.ObjectRef{{Cluster: cluster, Kind: kind, Namespace: ns, Name: name}}
}

// ambientPod reports whether istio-cni redirects the pod of a service's
// endpoint to ztunnel (the pod is in the service's namespace).
func ambientPod(snap *model.Snapshot, host, cluster, pod string) bool {
	svc := snap.Service(host)
	return svc != nil && snap.AmbientFor(cluster).Pod(svc.Namespace, pod).Redirected
}

// ambientSidecarDrop is the information that an ambient pod is not sent to
// another network's sidecars.
func ambientSidecarDrop(host, ns string, v horizon.Proxy, d horizon.Dropped) model.Problem {
	why := fmt.Sprintf("their pods run in ambient mode (istio-cni redirects them to ztunnel; no sidecar) and a sidecar reaches another network only through the mTLS gateway, so istiod leaves them out of its EDS — ztunnels reach them over HBONE (meshscope explain %s --from ztunnel)", model.ShortHost(host))
	return model.Problem{Severity: model.SeverityInfo, Kind: model.ProblemAmbientSidecarDrop, Cluster: d.Cluster, Service: host,
		Objects:  workloadRefs(d.Cluster, ns, d.Pod, ""),
		Sentence: fmt.Sprintf("%s: %s:%d%s is not sent to %s sidecars: %s", host, d.Address, d.Port, describe(d.Pod, d.Cluster, d.Network), v.Network, why),
		Group: &model.ProblemGroup{Key: "ambient-sidecar-drop|" + d.Cluster + "|" + v.Network, Subject: model.ShortHost(host) + " " + d.Pod,
			Format: fmt.Sprintf("{n} endpoints in %s are not sent to %s sidecars ({examples}): %s", d.Cluster, v.Network, why)}}
}

// IsGatewayService reports whether a service is a network gateway (labelled
// with a network in some cluster).
func IsGatewayService(svc *model.Service) bool {
	for _, sic := range svc.Clusters {
		if sic.Labels[model.LabelNetwork] != "" {
			return true
		}
	}
	return false
}

func dedupe(ps []model.Problem) []model.Problem {
	seen := map[string]bool{}
	out := ps[:0]
	for _, p := range ps {
		k := string(p.Kind) + "\x00" + p.Sentence
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return out
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func withReason(r string) string {
	if r == "" {
		return ""
	}
	return " (" + strings.TrimSpace(r) + ")"
}
