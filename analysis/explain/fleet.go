package explain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// DefaultStaleAfter is how long a proxy may leave istiod's last push
// unacknowledged before doctor reports it: a healthy proxy ACKs within
// milliseconds, and istiod's debounce alone can hold a push back 10 s.
const DefaultStaleAfter = 30 * time.Second

// fleetProblems reports the mesh's real proxies (Inputs.Fleet): pods with
// a proxy that no istiod lists, proxies that NACK or have not
// acknowledged istiod's last push for StaleAfter, proxies injected with a
// network or cluster the mesh no longer gives their pod, and versions
// outside the skew Istio supports. meshscope's own probes are left out.
func fleetProblems(f *fleet.Fleet, staleAfter time.Duration) []model.Problem {
	if f == nil {
		return nil
	}
	var ps []model.Problem
	for _, p := range f.Proxies {
		if p.Probe {
			continue
		}
		where := p.Namespace + "/" + p.Name
		pod := []model.ObjectRef{{Cluster: p.Cluster, Kind: "Pod", Namespace: p.Namespace, Name: p.Name}}
		switch {
		case p.State == fleet.Disconnected:
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemProxyDisconnected, Cluster: p.Cluster, Objects: pod,
				Sentence: fmt.Sprintf("%s %s in %s is connected to no istiod meshscope reads: it runs on the last config it got, and gets no endpoint change until it reconnects (in primary-remote, through the east-west gateway to its primary)", p.Kind, where, p.Cluster),
				Group: &model.ProblemGroup{Key: "proxy-disconnected|" + p.Cluster, Subject: where,
					Format: fmt.Sprintf("{n} proxies in %s are connected to no istiod meshscope reads ({examples}): they get no endpoint change until they reconnect", p.Cluster)}})
		case p.State == fleet.Rejected:
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemProxyStale, Cluster: p.Cluster, Objects: pod,
				Sentence: fmt.Sprintf("%s %s rejected (NACK) istiod %s's last push: %s — it keeps the config it had before", p.Kind, where, p.ControlPlane, nackError(p))})
		case p.State == fleet.Stale && p.StaleFor >= staleAfter:
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemProxyStale, Cluster: p.Cluster, Objects: pod,
				Sentence: fmt.Sprintf("%s %s has not acknowledged istiod %s's last push of %s for %s: it may not have applied it (overloaded, or stuck)", p.Kind, where, p.ControlPlane, staleTypes(p), p.StaleFor.Round(time.Second).String()),
				Group: &model.ProblemGroup{Key: "proxy-stale|" + p.ControlPlane, Subject: where,
					Format: fmt.Sprintf("{n} proxies have not acknowledged istiod %s's last push for %s or more ({examples})", p.ControlPlane, staleAfter.String())}})
		}
		for _, d := range p.Drift {
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemProxyIdentityDrift, Cluster: p.Cluster, Objects: pod,
				Sentence: driftSentence(p, d),
				Group: &model.ProblemGroup{Key: "drift|" + p.Cluster + "|" + d.Field + "|" + d.Injected + "|" + d.Derived, Subject: where,
					Format: fmt.Sprintf("{n} proxies in %s were injected with %s %s, but their pods are on %s %s now ({examples}): %s — restart their workloads", p.Cluster, d.Field, orText(d.Injected, "none"), d.Field, orText(d.Derived, "none"), driftCost(d))}})
		}
		if why := proxySkew(p.Version, p.IstiodVersion); why != "" && p.ControlPlane != "" {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemVersionSkew, Cluster: p.Cluster,
				Sentence: fmt.Sprintf("%s %s runs Istio %s against istiod %s %s: %s", p.Kind, where, p.Version, p.ControlPlane, p.IstiodVersion, why),
				Group: &model.ProblemGroup{Key: "skew|" + p.ControlPlane + "|" + minorOf(p.Version), Subject: where,
					Format: fmt.Sprintf("{n} proxies run Istio %s against istiod %s %s ({examples}): %s", minorOf(p.Version), p.ControlPlane, p.IstiodVersion, why)}})
		}
	}
	return ps
}

func nackError(p fleet.Proxy) string {
	for _, t := range p.Types {
		if t.Error != "" {
			return t.Type + ": " + t.Error
		}
	}
	return "no message"
}

func staleTypes(p fleet.Proxy) string {
	var l []string
	for _, t := range p.Types {
		if t.State == fleet.Stale {
			l = append(l, t.Type)
		}
	}
	return strings.Join(l, ", ")
}

func driftSentence(p fleet.Proxy, d fleet.Drift) string {
	return fmt.Sprintf("%s %s/%s in %s was injected with %s %s, but its pod is on %s %s now: %s — restart the pods of its workload",
		p.Kind, p.Namespace, p.Name, p.Cluster, d.Field, orText(d.Injected, "none"), d.Field, orText(d.Derived, "none"), driftCost(d))
}

// driftCost says what a stale identity does to the proxy's EDS.
func driftCost(d fleet.Drift) string {
	switch {
	case d.Field == "cluster":
		return fmt.Sprintf("istiod takes it for a proxy of cluster %s (cluster-local services, locality and its own pod's endpoints follow that)", d.Injected)
	case d.Injected == "":
		return "it sends no NETWORK, so istiod routes every endpoint of a network with a gateway through that gateway, its own network's too"
	}
	return fmt.Sprintf("istiod sends it the split horizon of %s: %s's endpoints through their gateway and %s's directly", d.Injected, orText(d.Derived, "none"), d.Injected)
}

// proxySkew says why a proxy's version is outside what its istiod
// supports: Istio supports proxies up to two minor versions older than
// istiod, none newer. "" when within, or when either is unknown.
func proxySkew(proxy, istiod string) string {
	pm, ok1 := minor(proxy)
	im, ok2 := minor(istiod)
	switch {
	case !ok1 || !ok2:
		return ""
	case pm[0] != im[0] || pm[1] > im[1]:
		return "a proxy newer than its istiod is not supported"
	case im[1]-pm[1] > 2:
		return fmt.Sprintf("%d minor versions older; istiod supports proxies up to 2 minor versions older — upgrade the proxy (restart its pods)", im[1]-pm[1])
	}
	return ""
}

// minor reads the major and minor of a version ("1.28.0", "1.28", "1.28.0-meshscope").
func minor(v string) ([2]int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return [2]int{}, false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	return [2]int{a, b}, err1 == nil && err2 == nil
}

func minorOf(v string) string {
	if m, ok := minor(v); ok {
		return fmt.Sprintf("%d.%d", m[0], m[1])
	}
	return v
}

// primarySkew reports primaries whose istiods run different minor versions
// (an upgrade in progress, or one forgotten).
func primarySkew(versions map[string]string) []model.Problem {
	byMinor := map[string][]string{}
	for cp, v := range versions {
		if _, ok := minor(v); ok {
			byMinor[minorOf(v)] = append(byMinor[minorOf(v)], cp+" "+v)
		}
	}
	if len(byMinor) < 2 {
		return nil
	}
	var all []string
	for _, l := range byMinor {
		all = append(all, l...)
	}
	slices.Sort(all)
	return []model.Problem{{Severity: model.SeverityWarning, Kind: model.ProblemVersionSkew,
		Sentence: fmt.Sprintf("the primaries' istiods run different minor versions (%s): finish the upgrade, a mesh is supported on one minor version (or two during a canary)", strings.Join(all, ", "))}}
}

// DriftNote is, for a viewpoint that copies a real pod whose proxy was
// injected with a network other than the one the mesh gives the pod today,
// what istiod would send it once restarted (the prediction for its derived
// identity), next to what it really gets as injected. "" for any other
// viewpoint, or a pod without drift.
func DriftNote(planes *plane.Set, host string, port int32, vp xdsclient.Viewpoint, controlPlane, subset string) string {
	if vp.Pod == nil {
		return ""
	}
	snap := planes.Snapshot()
	var pp *model.ProxyPod
	for i := range snap.Proxies {
		p := &snap.Proxies[i]
		if p.Namespace == vp.Pod.Namespace && p.Name == vp.Pod.Name && (vp.Pod.Cluster == "" || p.Cluster == vp.Pod.Cluster) {
			pp = p
			break
		}
	}
	injected := vp.Network
	if pp == nil || injected == pp.Network {
		return ""
	}
	derived := vp
	derived.Network, derived.NoNetwork = pp.Network, pp.Network == ""
	d := ExplainWith(planes, host, port, derived, controlPlane, nil, Extra{Subset: subset})
	var eps []string
	for _, e := range d.Predicted {
		eps = append(eps, fmt.Sprintf("%s:%d w=%d", e.Address, e.Port, e.Weight))
	}
	sent := strings.Join(eps, ", ")
	if sent == "" {
		sent = "no endpoints"
	}
	return fmt.Sprintf("this pod's proxy was injected with NETWORK %s, but the mesh gives its pod %s today: istiod sends it the %s side of the split horizon above; restarted (re-injected), it would get %s",
		orText(injected, "none"), orText(pp.Network, "none"), orText(injected, "forced-gateway"), sent)
}
