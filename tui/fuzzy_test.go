package tui

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/sahilm/fuzzy"
)

func TestRunePositions(t *testing.T) {
	s := "straße.münchen.svc"
	ms := fuzzy.Find("ßmh", []string{s})
	if len(ms) != 1 {
		t.Fatalf("no match")
	}
	got := runePositions(s, ms[0].MatchedIndexes)
	r := []rune(s)
	var picked string
	for _, p := range got {
		picked += string(r[p])
	}
	if picked != "ßmh" {
		t.Fatalf("rune positions %v pick %q from byte offsets %v", got, picked, ms[0].MatchedIndexes)
	}
}

// The fuzzy highlight marks exactly the matched characters of a
// non-ASCII hostname, after converting byte offsets to runes.
func TestFuzzyHighlightNonASCII(t *testing.T) {
	m := goldenModel(t, "mono", 120, 40)
	m.push(viewServices)
	press(m, "/")
	typeText(m, "ßmü")
	if n := len(m.services.list.rows); n != 1 {
		t.Fatalf("%d rows match ßmü", n)
	}
	out := m.View().Content
	hl := m.st.Match.Inherit(m.st.Selection)
	for _, want := range []string{hl.Render("ß"), hl.Render("m"), hl.Render("ü")} {
		if !strings.Contains(out, want) {
			t.Errorf("highlighted %q not in the frame", ansi.Strip(want))
		}
	}
	// Unit check of highlight(): rune 1 (ü) highlighted, width exact.
	base, mark := lipgloss.NewStyle(), lipgloss.NewStyle().Bold(true)
	got := highlight("müller", 10, []int{1}, base, mark)
	if ansi.Strip(got) != "müller    " || !strings.Contains(got, mark.Render("ü")) {
		t.Errorf("highlight = %q", got)
	}
	// Truncated with an ellipsis, still exact width.
	got = highlight("straße.münchen.svc.cluster.local", 12, []int{4, 8}, base, mark)
	if w := ansi.StringWidth(got); w != 12 || !strings.HasSuffix(ansi.Strip(got), "…") {
		t.Errorf("truncated highlight %q (width %d)", ansi.Strip(got), w)
	}
}

func TestFuzzyNarrowsFromPreviousMatches(t *testing.T) {
	names := []string{"alpha", "beta", "gamma", "helloworld", "hello-v2", "shell"}
	var f fuzzyFilter
	name := func(i int) string { return names[i] }
	order := identity(nil, len(names))
	f.set("he", order, name, true)
	if len(f.matched) != 3 {
		t.Fatalf("he matched %v", f.matched)
	}
	f.set("hell", order, name, true)
	if len(f.matched) != 3 {
		t.Fatalf("hell matched %v", f.matched)
	}
	f.set("hellow", order, name, true)
	if len(f.matched) != 1 || names[f.matched[0]] != "helloworld" {
		t.Fatalf("hellow matched %v", f.matched)
	}
	if f.match(4) {
		t.Fatal("hello-v2 still matches hellow")
	}
	f.set("h", order, name, true) // shorter: searched afresh
	if len(f.matched) != 4 {
		t.Fatalf("h matched %v", f.matched)
	}
}

// The matches come best first, in sahilm/fuzzy's own order (ties in the
// order given), however the query was narrowed.
func TestFuzzyBestMatchFirst(t *testing.T) {
	names := []string{"a-world.sample", "hello.sample", "the-hello.sample", "xhxexlxlxo", "zz-hello"}
	name := func(i int) string { return names[i] }
	order := identity(nil, len(names))
	var f fuzzyFilter
	for _, q := range []string{"h", "he", "hel", "hello"} {
		f.set(q, order, name, true)
		var got []string
		for _, id := range f.matched {
			got = append(got, names[id])
		}
		var want []string
		for _, m := range fuzzy.Find(q, names) {
			want = append(want, m.Str)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q: matched %v, sahilm/fuzzy ranks %v", q, got, want)
		}
	}
	if names[f.matched[0]] != "hello.sample" {
		t.Errorf("best match for hello is %q", names[f.matched[0]])
	}
}

// In the services view, a filter lists the best match first; no filter
// lists by hostname.
func TestServicesFilterBestMatchFirst(t *testing.T) {
	snap := testSnapshot()
	for _, name := range []string{"cart-mesh-lookup", "mesh"} {
		snap.Services = append(snap.Services, svc("shop", name, httpPort, nil))
	}
	sortServices(snap.Services)
	m := newTestModel(t, "default", 120, 40, snap, nil)
	m.push(viewServices)
	hosts := func() []string {
		var out []string
		for _, id := range m.services.list.rows {
			out = append(out, m.services.ix.services[id].hostname)
		}
		return out
	}
	press(m, "/")
	typeText(m, "mesh")
	got := hosts()
	if len(got) != 2 || got[0] != "mesh.shop.svc.cluster.local" || selectedHost(m) != got[0] {
		t.Fatalf("/mesh lists %v, cursor on %q; want mesh.shop first and selected", got, selectedHost(m))
	}
	press(m, "enter", "esc")
	got = hosts()
	for i := 1; i < len(got); i++ {
		if got[i-1] > got[i] {
			t.Fatalf("without a filter the rows are not in hostname order: %v", got)
		}
	}
	if selectedHost(m) != "mesh.shop.svc.cluster.local" {
		t.Fatalf("clearing the filter moved the cursor to %q", selectedHost(m))
	}
}

// fuzzyScore gives exactly sahilm/fuzzy's score and membership, on chosen
// edge cases (case folding, NUL, separators, camel case, repeated runes)
// and on random strings over a small alphabet (where the library's
// look-ahead for the best match is exercised most).
func TestFuzzyScoreIsSahilm(t *testing.T) {
	words := []string{"helloworld.sample", "HELLO", "straße.münchen", "ΣίσυφοςΣ", "a\x00b", "aba", "abxc", "the black knight", "", "ǅemal",
		"axc", "abbc", "aXbC", "x-y_z/w.v\\u", "fooBarBaz", "a.a.a.a"}
	pats := []string{"h", "hw", "HeL", "ßm", "σς", "ab", "b", "abc", "tk", "aa", "ǆ", "x", "dž", "abbc", "aaa", "fbb", "xyz", "ac"}
	check := func(p, w string) {
		t.Helper()
		ms := fuzzy.Find(p, []string{w})
		got, ok := newFuzzyPattern(p).score(w)
		if g, k := fuzzyScore([]rune(p), w); g != got || k != ok {
			t.Errorf("%q in %q: the ASCII path scores %d (%v), the general one %d (%v)", p, w, got, ok, g, k)
		}
		if ok != (len(ms) == 1) || (ok && got != ms[0].Score) {
			lib := "no match"
			if len(ms) == 1 {
				lib = fmt.Sprint(ms[0].Score)
			}
			t.Errorf("%q in %q: score %d (match %v), sahilm/fuzzy %s", p, w, got, ok, lib)
		}
	}
	for _, w := range words {
		for _, p := range pats {
			check(p, w)
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abAB.-c"[rnd.IntN(7)]
		}
		return string(b)
	}
	for range 20000 {
		check(word(1+rnd.IntN(3)), word(rnd.IntN(12)))
	}
}
