package explain

import (
	"fmt"
	"strings"

	"github.com/meshscope/meshscope/analysis/horizon"
)

// The words both readers of a View (explain's table and the terminal UI's
// service view) use for localities and shares, so they say the same thing.

// LocalityText is an endpoint's locality as Envoy receives it
// (region/zone/subzone, "-" for none), with " pN" when its priority is
// not 0.
func LocalityText(l string, prio uint32) string {
	if l == "" {
		l = "-"
	}
	if prio > 0 {
		l += fmt.Sprintf(" p%d", prio)
	}
	return l
}

// ShareText is the share of requests Envoy sends an endpoint; in
// parentheses what istiod's weights mean when that differs; "dup" when
// Envoy drops the entry for an earlier one with the same address.
func ShareText(e horizon.Effect) string {
	s := Percent(e.Share)
	if Percent(e.Intended) != s {
		s += " (" + Percent(e.Intended) + ")"
	}
	if e.Shadowed {
		s += " dup"
	}
	return s
}

// Percent is a share (0–1) in percent: whole percents, one decimal below 1 %.
func Percent(f float64) string {
	p := 100 * f
	if p > 0 && p < 1 {
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

// SplitLine says how the proxy's requests split over networks and what
// decides it (the cluster's load balancing): "split: network1 50% (istiod's
// weights mean 20%), network2 50% … — LEAST_REQUEST, locality weights
// ignored, panic threshold 0% (cds)". "" when the view has no split.
func SplitLine(v View) string {
	if len(v.Split) == 0 {
		return ""
	}
	var parts []string
	for _, n := range v.Split {
		sh := n.Share
		if v.Verdict == Pending {
			sh = n.Predicted
		}
		p := fmt.Sprintf("%s %s", orNoNetwork(n.Network), Percent(sh))
		if v.Verdict != Pending && Percent(n.Intended) != Percent(sh) {
			p += fmt.Sprintf(" (istiod's weights mean %s)", Percent(n.Intended))
		}
		parts = append(parts, p)
	}
	lw := "ignored"
	if v.LB.LocalityWeighted {
		lw = "used"
	}
	return fmt.Sprintf("split: %s — %s, locality weights %s, panic threshold %g%% (%s)", strings.Join(parts, ", "), orText(v.LB.Policy, "-"), lw, v.LB.PanicThreshold, v.LBFrom)
}

// WorkloadName names an endpoint: its pod, else its WorkloadEntry or
// ServiceEntry endpoint (WorkloadEntry/NAME, ServiceEntry/NAME[i]).
func WorkloadName(pod, workload string) string {
	if pod != "" {
		return pod
	}
	return workload
}
