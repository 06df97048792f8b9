package main

import (
	"math"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

func TestFit(t *testing.T) {
	// y = 2 + 0.5x exactly: slope 0.5, no error.
	xs := []float64{0, 1, 2, 3, 4}
	ys := []float64{2, 2.5, 3, 3.5, 4}
	slope, se, mean := fit(xs, ys)
	if math.Abs(slope-0.5) > 1e-12 || se > 1e-12 || math.Abs(mean-3) > 1e-12 {
		t.Fatalf("fit = %v, %v, %v; want 0.5, 0, 3", slope, se, mean)
	}
	// Known noisy case: xs 1..5, ys 1,3,2,5,4 -> slope 0.8, SE sqrt(3.6/3/10).
	slope, se, _ = fit([]float64{1, 2, 3, 4, 5}, []float64{1, 3, 2, 5, 4})
	if math.Abs(slope-0.8) > 1e-12 || math.Abs(se-math.Sqrt(0.12)) > 1e-12 {
		t.Fatalf("fit = %v ± %v; want 0.8 ± %v", slope, se, math.Sqrt(0.12))
	}
}

// series samples f every 5 s for d, with Gaussian noise of sd.
func series(d time.Duration, sd float64, f func(x float64) float64) (xs, ys []float64) {
	rnd := rand.New(rand.NewSource(1))
	for x := 5.0; x <= d.Seconds(); x += 5 {
		xs = append(xs, x)
		ys = append(ys, f(x)+rnd.NormFloat64()*sd)
	}
	return xs, ys
}

func TestRule(t *testing.T) {
	r := rule{warmup: time.Minute, maxPerHour: 0.10, minT: 3, minRiseFrac: 0.05, block: 30 * time.Second}
	heap := trend{name: "heap", floor: 1, lows: true}
	goroutines := trend{name: "goroutines", floor: 5}
	for _, tc := range []struct {
		name    string
		tr      trend
		d       time.Duration
		sd      float64
		f       func(x float64) float64
		growing bool
	}{
		{"flat heap with noise", heap, 30 * time.Minute, 2, func(float64) float64 { return 30 }, false},
		{"heap leaking 50%/h", heap, 30 * time.Minute, 2, func(x float64) float64 { return 30 + 15*x/3600 }, true},
		{"heap filling caches in the first half, then flat", heap, 30 * time.Minute, 1,
			func(x float64) float64 { return 20 + 20*math.Min(x, 800)/800 }, false},
		{"heap drifting 5%/h: too slow to matter", heap, 30 * time.Minute, 0.2, func(x float64) float64 { return 30 + 1.5*x/3600 }, false},
		{"one goroutine more half way through the window", goroutines, 30 * time.Minute, 0,
			func(x float64) float64 { return 100 + b2f(x > 1350) }, false},
		{"a goroutine per minute", goroutines, 30 * time.Minute, 0, func(x float64) float64 { return 100 + math.Floor(x/60) }, true},
		{"short run: a goroutine every 10 s", goroutines, 3 * time.Minute, 0, func(x float64) float64 { return 100 + math.Floor(x/10) }, true},
		{"short run: flat noisy heap", heap, 3 * time.Minute, 2, func(float64) float64 { return 30 }, false},
		{"flat heap with spikes (a frame or a derivation in flight when sampled)", heap, 30 * time.Minute, 0.5,
			func(x float64) float64 { return 30 + 25*b2f(int(x)%45 == 0 && x > 1300) }, false},
		{"heap leaking 50%/h under spikes", heap, 30 * time.Minute, 0.5,
			func(x float64) float64 { return 30 + 15*x/3600 + 25*b2f(int(x)%45 == 0) }, true},
	} {
		xs, ys := series(tc.d, tc.sd, tc.f)
		got := r.judge(tc.tr, xs, ys)
		if got.insufficient || got.growing != tc.growing {
			t.Errorf("%s: growing %v (insufficient %v), want %v: slope %+.3g/h (%+.1f%% of %.1f), t %.1f, rise %.2f over %s",
				tc.name, got.growing, got.insufficient, tc.growing, got.perHour, got.relPerHour*100, got.level, got.tval(), got.rise, got.window)
		}
	}
}

func TestLows(t *testing.T) {
	bx, by := lows([]float64{5, 10, 15, 20, 25, 30, 35}, []float64{3, 1, 2, 9, 8, 7, 4}, 15)
	if !reflect.DeepEqual(bx, []float64{10, 25, 35}) || !reflect.DeepEqual(by, []float64{1, 7, 4}) {
		t.Fatalf("lows = %v, %v", bx, by)
	}
}

func TestRuleNeedsSamples(t *testing.T) {
	r := rule{warmup: time.Minute, maxPerHour: 0.10, minT: 3, minRiseFrac: 0.05}
	xs, ys := series(70*time.Second, 0, func(x float64) float64 { return x })
	if got := r.judge(trend{floor: 1}, xs, ys); !got.insufficient {
		t.Fatalf("a run shorter than the warm-up and five samples was judged: %+v", got)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
