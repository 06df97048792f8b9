package ambient

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/xdsclient"
)

// Verdict says whether istiod sends what meshscope predicts.
type Verdict string

const (
	Match    Verdict = "match"
	Mismatch Verdict = "mismatch"
)

// diffKind is what a Difference is about (JSON: kind).
type diffKind string

// The kinds of difference between the WDS sent and the prediction.
const (
	// diffService: the Service resource (sent or not, VIPs, ports,
	// waypoint, SANs).
	diffService diffKind = "service"
	// diffMissing: a workload predicted, not sent.
	diffMissing diffKind = "missing"
	// diffUnexpected: a workload sent, not predicted.
	diffUnexpected diffKind = "unexpected"
	// diffDiffers: a workload sent and predicted, with other fields.
	diffDiffers diffKind = "differs"
)

// Difference is one way the actual WDS differs from the prediction.
type Difference struct {
	Kind diffKind `json:"kind"`
	// UID names the workload ("" for the Service resource).
	UID string `json:"uid,omitempty"`
	Why string `json:"why"`
}

// comparison is the verdict for one service and one control plane.
type comparison struct {
	Verdict     Verdict      `json:"verdict"`
	Differences []Difference `json:"differences,omitempty"`
}

// Compare holds what istiod sent a ztunnel about a service against the
// prediction: the Service resource (sent or not, VIPs, ports, SANs) and
// every workload by UID (addresses, network, status, tunnel protocol, and
// for a split-horizon workload its gateway and capacity). A split-horizon
// workload behind any of its network's gateways matches (istiod picks one).
// Application protocols, names and telemetry fields are not compared.
func Compare(p Prediction, actual xdsclient.WDSServiceView) comparison {
	var d []Difference
	add := func(kind diffKind, uid, format string, a ...any) {
		d = append(d, Difference{Kind: kind, UID: uid, Why: fmt.Sprintf(format, a...)})
	}
	switch s := actual.Service; {
	case s == nil && p.Sent:
		add(diffService, "", "istiod sent no Service %s; predicted one (from %s, %s)", p.Service, p.From, p.Scope)
	case s != nil && !p.Sent:
		add(diffService, "", "istiod sent Service %s; predicted none", p.Service)
	case s != nil:
		var vips []string
		for _, a := range s.Addresses {
			vips = append(vips, a.Network+"/"+a.Address)
		}
		slices.Sort(vips)
		if !slices.Equal(vips, p.VIPs) {
			add(diffService, "", "Service %s has VIPs %s; predicted %s", p.Service, list(vips), list(p.VIPs))
		}
		var ports []port
		for _, pt := range s.Ports {
			ports = append(ports, port{ServicePort: pt.ServicePort, TargetPort: pt.TargetPort})
		}
		if !slices.Equal(ports, p.Ports) {
			add(diffService, "", "Service %s has ports %v; predicted %v", p.Service, ports, p.Ports)
		}
		if got, want := s.Waypoint.String(), p.Waypoint.AddressString(); got != want {
			add(diffService, "", "Service %s has waypoint %s; predicted %s", p.Service, orText(got, "none"), orText(want, "none"))
		}
		if !slices.Equal(s.SubjectAltNames, p.SubjectAltNames) {
			add(diffService, "", "Service %s has subject alt names %s; predicted %s", p.Service, list(s.SubjectAltNames), list(p.SubjectAltNames))
		}
	}
	byUID := map[string]xdsclient.WDSWorkload{}
	for _, w := range actual.Workloads {
		byUID[w.UID] = w
	}
	for _, pw := range p.Workloads {
		uids := pw.Candidates
		if len(uids) == 0 {
			uids = []string{pw.UID}
		}
		var aw xdsclient.WDSWorkload
		found := false
		for _, u := range uids {
			if w, ok := byUID[u]; ok && !found {
				aw, found = w, true
				delete(byUID, u)
			}
		}
		if !found {
			add(diffMissing, pw.UID, "istiod did not send %s (%s)", pw.UID, pw.Why)
			continue
		}
		if why := workloadDiff(pw, aw); why != "" {
			add(diffDiffers, aw.UID, "%s: %s", aw.UID, why)
		}
	}
	for _, w := range actual.Workloads {
		if _, left := byUID[w.UID]; left {
			add(diffUnexpected, w.UID, "istiod sent %s (network %s, %s), not predicted", w.UID, orNone(w.Network), strings.Join(w.Addresses, ","))
		}
	}
	if len(d) == 0 {
		return comparison{Verdict: Match}
	}
	return comparison{Verdict: Mismatch, Differences: d}
}

// workloadDiff names what differs between a predicted and an actual
// workload ("" when nothing that is compared does).
func workloadDiff(p Workload, a xdsclient.WDSWorkload) string {
	var out []string
	diff := func(what string, got, want any) {
		out = append(out, fmt.Sprintf("%s %v, predicted %v", what, got, want))
	}
	addrs, want := slices.Clone(a.Addresses), slices.Clone(p.Addresses)
	slices.Sort(addrs)
	slices.Sort(want)
	if !slices.Equal(addrs, want) {
		diff("addresses", list(addrs), list(want))
	}
	if a.Hostname != p.Hostname {
		diff("hostname", orText(a.Hostname, "none"), orText(p.Hostname, "none"))
	}
	if a.Network != p.Network {
		diff("network", orNone(a.Network), orNone(p.Network))
	}
	if a.Status != p.Status {
		diff("status", a.Status, p.Status)
	}
	if a.TunnelProtocol != p.TunnelProtocol {
		diff("tunnel protocol", a.TunnelProtocol, p.TunnelProtocol)
	}
	if p.Kind == KindSplitHorizon {
		// With several candidate gateways, the one in the UID istiod
		// chose is the one to hold against.
		if g := a.NetworkGateway.String(); g != p.Gateway && len(p.Candidates) == 0 {
			diff("gateway", orNone(g), p.Gateway)
		}
		if c := a.EffectiveCapacity(); c != p.Capacity {
			diff("capacity", c, p.Capacity)
		}
	}
	return strings.Join(out, "; ")
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func list(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ",")
}
