package live

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
)

// BenchmarkDoctorFix: doctor --fix at bench scale (3 clusters, 2,000
// services, 30,000 endpoints) with the ten problems of plantTen: the plain
// doctor's diagnosis (prediction only) and the same followed by every
// problem's fix, built from the fake API servers' objects and proven by
// what-if, timed in the same run (issue 33: under 5 s).
func BenchmarkDoctorFix(b *testing.B) {
	r := benchMeshWith(b, 2000, plantTen(b))
	snap := r.Snapshot()
	var plain, withFix []time.Duration
	problems, proven := 0, 0
	for i := 0; i < b.N; i++ {
		start := time.Now()
		d := explain.Run(snap, explain.Inputs{Now: snap.Time})
		plain = append(plain, time.Since(start))
		fixes := Fixes(context.Background(), r, snap, d.Problems)
		withFix = append(withFix, time.Since(start))
		problems, proven = len(d.Problems), 0
		for j := range fixes {
			if fixes[j].Best() != nil {
				proven++
			}
		}
	}
	b.StopTimer()
	if problems != 10 || proven != problems {
		b.Fatalf("%d problems, %d with a proven fix", problems, proven)
	}
	med := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	b.ReportMetric(float64(med(plain).Milliseconds()), "ms/doctor")
	b.ReportMetric(float64(med(withFix).Milliseconds()), "ms/doctor-fix")
	b.ReportMetric(float64(proven), "fixes-proven")
}
