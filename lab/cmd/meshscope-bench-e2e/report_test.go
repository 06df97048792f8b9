package main

import (
	"strings"
	"testing"
)

// TestIstiodCostAgainstSpread: istiod's cost of the UI passes when it is
// at most the sidecar runs' mean plus their spread (issue 21: 1.02× and
// 1.04× of one sidecar figure failed while two sidecar runs differed by
// 13 %), each row says the runs and the spread, and fewer than three
// sidecar runs judge nothing.
func TestIstiodCostAgainstSpread(t *testing.T) {
	connect := func(cpu ...float64) []sidecarPhase {
		var ps []sidecarPhase
		for _, c := range cpu {
			ps = append(ps, sidecarPhase{Connect: istiodCost{CPUSeconds: c, HeapMiB: 2}, Churn: churnFigures{CPUPerPushMS: 1.5}})
		}
		return ps
	}
	row := func(r *result) check {
		r.UI.HeapPerEndpoint = 1
		r.judge()
		for _, c := range r.Checks {
			if strings.HasPrefix(c.What, "istiod CPU at connect") {
				return c
			}
		}
		t.Fatal("no istiod CPU at connect row")
		return check{}
	}
	for _, c := range []struct {
		name     string
		sidecars []sidecarPhase
		ui       float64
		pass     bool
	}{
		{"inside the runs", connect(4.00, 4.53, 4.20), 4.30, true},
		{"above the mean, within the spread", connect(4.00, 4.53, 4.20), 4.70, true},
		{"beyond mean + spread", connect(4.00, 4.53, 4.20), 4.80, false},
		{"two runs are no spread", connect(4.00, 4.53), 4.10, false},
	} {
		r := &result{Sidecars: c.sidecars, IstiodUIConnect: istiodCost{CPUSeconds: c.ui}}
		got := row(r)
		if got.Pass != c.pass {
			t.Errorf("%s: %+v, want pass %v", c.name, got, c.pass)
		}
		if len(c.sidecars) == 3 && (!strings.Contains(got.Figure, "sidecar runs 4.00, 4.53, 4.20 s") || !strings.Contains(got.Figure, "spread 0.53 s")) {
			t.Errorf("%s: figure %q does not give the runs and the spread", c.name, got.Figure)
		}
	}
}
