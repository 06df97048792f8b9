package main

import (
	"fmt"
	"math"
	"time"
)

// The rule that calls a metric unbounded. A soak of minutes cannot see
// "forever"; what it can see is a steady rise after the start-up has
// settled that is real (not noise), large against the metric's level and
// large in absolute terms. Each part guards against a different false
// alarm: the warm-up and the second half skip caches and buffers filling
// up to their caps; the t-test skips noise; the per-hour limit skips a
// slow drift a long session would not notice; the floor skips small steps
// (one more goroutine, a mesh that happens to be larger at the end).

// rule holds the thresholds of the verdict.
type rule struct {
	warmup time.Duration
	// maxPerHour is the largest growth per hour, as a fraction of the
	// level, that is still called bounded.
	maxPerHour float64
	// minT is how many standard errors the slope must be above zero.
	minT float64
	// minRiseFrac is the smallest fitted rise over the window, as a
	// fraction of the level, that counts (the metric's own floor applies
	// too).
	minRiseFrac float64
	// block is how long a stretch a "lows" metric is judged by its lowest
	// sample in (at most a tenth of the window).
	block time.Duration
}

func (r rule) String() string {
	heap := fmt.Sprintf("the heap is judged by its lowest sample in each %s (what is kept, not what a frame or a derivation in flight holds for a moment)", r.block)
	if r.block <= 0 {
		heap = "the heap is judged by every sample"
	}
	return fmt.Sprintf("a metric grows without bound when, over the window from max(warm-up %s, half the run) to the end, the least-squares slope b "+
		"is above zero by more than %.0f standard errors, its growth per hour exceeds %.0f%% of the metric's mean level in the window, "+
		"and the fitted rise over the window (b × window) exceeds both %.0f%% of that level and the metric's floor; %s",
		r.warmup, r.minT, r.maxPerHour*100, r.minRiseFrac*100, heap)
}

// trend is one metric's fit over the window.
type trend struct {
	name  string
	unit  string
	floor float64 // the smallest rise that counts, in the metric's unit
	// info metrics are reported, never judged (e.g. the mesh's size).
	info bool
	// lows: judged by the lowest sample of each rule.block.
	lows bool

	first, last  float64 // the first and last sample of the whole run
	min, max     float64 // over the whole run
	level        float64 // mean over the window
	slope        float64 // per second, over the window
	se           float64 // standard error of slope
	window       time.Duration
	n            int
	rise         float64 // slope × window
	perHour      float64 // slope × 3600
	relPerHour   float64 // perHour / level
	growing      bool
	insufficient bool // too few samples in the window to judge
}

// tval is the slope in standard errors (+Inf when the fit is exact and
// rises).
func (t *trend) tval() float64 {
	switch {
	case t.se > 0:
		return t.slope / t.se
	case t.slope > 0:
		return math.Inf(1)
	case t.slope < 0:
		return math.Inf(-1)
	}
	return 0
}

// judge fits the samples (x in seconds since the start, y the metric) and
// applies the rule. The run's length is the last x.
func (r rule) judge(t trend, xs, ys []float64) trend {
	if len(xs) == 0 {
		t.insufficient = true
		return t
	}
	t.first, t.last = ys[0], ys[len(ys)-1]
	t.min, t.max = ys[0], ys[0]
	for _, y := range ys {
		t.min, t.max = math.Min(t.min, y), math.Max(t.max, y)
	}
	end := xs[len(xs)-1]
	from := math.Max(r.warmup.Seconds(), end/2)
	var wx, wy []float64
	for i, x := range xs {
		if x >= from {
			wx, wy = append(wx, x), append(wy, ys[i])
		}
	}
	if len(wx) > 0 {
		t.window = time.Duration((wx[len(wx)-1] - wx[0]) * float64(time.Second))
	}
	if t.lows {
		wx, wy = lows(wx, wy, min(r.block.Seconds(), t.window.Seconds()/10))
	}
	t.n = len(wx)
	if t.n < 5 {
		t.insufficient = true
		return t
	}
	t.slope, t.se, t.level = fit(wx, wy)
	t.rise = t.slope * t.window.Seconds()
	t.perHour = t.slope * 3600
	if t.level != 0 {
		t.relPerHour = t.perHour / math.Abs(t.level)
	}
	if t.info {
		return t
	}
	t.growing = t.slope > 0 && t.tval() > r.minT &&
		t.relPerHour > r.maxPerHour &&
		t.rise > math.Max(t.floor, r.minRiseFrac*math.Abs(t.level))
	return t
}

// lows is the lowest sample of each stretch of block seconds, at the
// stretch's mean time.
func lows(xs, ys []float64, block float64) (bx, by []float64) {
	if block <= 0 {
		return xs, ys
	}
	for i := 0; i < len(xs); {
		j, lo, sum := i, ys[i], 0.0
		for ; j < len(xs) && xs[j] < xs[i]+block; j++ {
			lo, sum = math.Min(lo, ys[j]), sum+xs[j]
		}
		bx, by = append(bx, sum/float64(j-i)), append(by, lo)
		i = j
	}
	return bx, by
}

// fit is the ordinary least-squares line through (xs, ys): its slope, the
// slope's standard error and the mean of ys.
func fit(xs, ys []float64) (slope, se, mean float64) {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for i := range xs {
		dx := xs[i] - mx
		sxx += dx * dx
		sxy += dx * (ys[i] - my)
	}
	if sxx == 0 {
		return 0, 0, my
	}
	slope = sxy / sxx
	intercept := my - slope*mx
	var sse float64
	for i := range xs {
		e := ys[i] - (intercept + slope*xs[i])
		sse += e * e
	}
	if n > 2 {
		se = math.Sqrt(sse / (n - 2) / sxx)
	}
	return slope, se, my
}
