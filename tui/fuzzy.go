package tui

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sahilm/fuzzy"
)

// fuzzyFilter is a fuzzy search over the names of n rows (by row id),
// ranked the way sahilm/fuzzy ranks: best match first. While the query
// grows, it searches only the rows the previous query matched: a row that
// does not match "hel" cannot match "hell".
type fuzzyFilter struct {
	query string
	n     int
	// matched are the row ids that match query, best match first (ties in
	// the order the rows were given).
	matched []int32
	// slot[id] is 1 + the position of row id in matched, 0 when it does
	// not match.
	slot []int32
	// score[id] is the score of a matching row (scratch space of set).
	score []int32
}

// active reports whether a query filters the rows.
func (f *fuzzyFilter) active() bool { return f.query != "" }

// set runs query over the rows: order lists every row id in the order to
// keep among equal matches. reuse says whether the previous matches still
// describe the same rows (false after the data changed).
func (f *fuzzyFilter) set(query string, order []int32, name func(i int) string, reuse bool) {
	n := len(order)
	if query == "" {
		*f = fuzzyFilter{n: n}
		return
	}
	narrow := reuse && f.query != "" && f.n == n && strings.HasPrefix(query, f.query)
	if len(f.slot) != n {
		f.slot, f.score = make([]int32, n), make([]int32, n)
	} else if narrow {
		for _, id := range f.matched {
			f.slot[id] = 0
		}
	} else {
		clear(f.slot)
	}
	pattern := newFuzzyPattern(query)
	members := 0
	try := func(id int32) {
		if s, ok := pattern.score(name(int(id))); ok {
			f.slot[id], f.score[id] = 1, int32(s)
			members++
		}
	}
	if narrow {
		for _, id := range f.matched {
			try(id)
		}
	} else {
		for id := range int32(n) {
			try(id)
		}
	}
	// The members in the given order, then by score; the position breaks
	// ties, as sahilm/fuzzy's stable sort does.
	matched := make([]int32, 0, members)
	for _, id := range order {
		if f.slot[id] != 0 {
			matched = append(matched, id)
		}
	}
	slices.SortStableFunc(matched, func(a, b int32) int { return cmp.Compare(f.score[b], f.score[a]) })
	for i, id := range matched {
		f.slot[id] = int32(i + 1)
	}
	f.query, f.n, f.matched = query, n, matched
}

// match reports whether row id matches.
func (f *fuzzyFilter) match(id int) bool {
	if f.query == "" {
		return true
	}
	return id >= 0 && id < len(f.slot) && f.slot[id] != 0
}

// matchedBytes are the byte offsets of s that sahilm/fuzzy matches to
// query (nil when it does not match): the library runs only for the rows
// on screen, to highlight them.
func matchedBytes(query, s string) []int {
	if query == "" {
		return nil
	}
	ms := fuzzy.Find(query, []string{s})
	if len(ms) == 0 {
		return nil
	}
	return ms[0].MatchedIndexes
}

// sahilm/fuzzy's scoring rules.
const (
	firstCharMatchBonus            = 10
	matchFollowingSeparatorBonus   = 20
	camelCaseMatchBonus            = 20
	adjacentMatchBonus             = 5
	unmatchedLeadingCharPenalty    = -5
	maxUnmatchedLeadingCharPenalty = -15
)

// fuzzyPattern is a query ready to score names with.
type fuzzyPattern struct {
	runes []rune
	// lower is the query in lower case when it is ASCII (nil otherwise).
	lower []byte
}

func newFuzzyPattern(q string) fuzzyPattern {
	p := fuzzyPattern{runes: []rune(q)}
	if len(p.runes) == len(q) { // ASCII
		p.lower = []byte(strings.ToLower(q))
	}
	return p
}

// score is fuzzyScore, on a fast path for ASCII (hostnames are).
func (p fuzzyPattern) score(s string) (int, bool) {
	if p.lower != nil {
		if sc, ok, ascii := fuzzyScoreASCII(p.lower, s); ascii {
			return sc, ok
		}
	}
	return fuzzyScore(p.runes, s)
}

// lowerASCII is c in lower case; for ASCII, sahilm/fuzzy's equalFold(a, b)
// is lowerASCII(a) == lowerASCII(b).
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// fuzzyScoreASCII is fuzzyScore for an ASCII pattern (in lower case) and
// an ASCII s, byte by byte; ascii is false (and the rest meaningless) when
// s is not ASCII.
func fuzzyScoreASCII(pattern []byte, s string) (score int, ok, ascii bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // the library stops at the first NUL
	}
	st := fuzzyState{best: -1, at: -1}
	var last, lc byte // the byte before, and this one in lower case
	if len(s) > 0 {
		lc = lowerASCII(s[0])
	}
	for j := 0; j < len(s); j++ {
		c := s[j]
		if c >= utf8.RuneSelf {
			return 0, false, false
		}
		if lc == pattern[st.pi] {
			st.candidate(j, j-1, rune(last), rune(c))
		}
		var nextp, nextc byte
		if st.pi < len(pattern)-1 {
			nextp = pattern[st.pi+1]
		}
		if j+1 < len(s) {
			nextc = lowerASCII(s[j+1])
		}
		st.take(nextp == nextc || nextc == 0)
		last, lc = c, nextc
	}
	score, ok = st.result(len(s), len(pattern))
	return score, ok, true
}

// fuzzyScore is the score sahilm/fuzzy gives s for pattern, and whether it
// matches at all (pattern is a case-folded subsequence of s). It is the
// library's FindFromIterNoSort for one string, step by step, without the
// matched positions it allocates: ranking every hostname of a big mesh on
// each keystroke must not allocate per row. TestFuzzyScoreIsSahilm holds
// the two equal.
func fuzzyScore(pattern []rune, s string) (int, bool) {
	if len(pattern) == 0 {
		return 0, false
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // the library stops at the first NUL
	}
	st := fuzzyState{best: -1, at: -1}
	var last rune
	lastIndex := 0
	nextc, nextSize := utf8.DecodeRuneInString(s)
	for j, size := 0, 0; j < len(s); j += size {
		var c rune
		c, size = nextc, nextSize
		if equalFold(c, pattern[st.pi]) {
			st.candidate(j, lastIndex, last, c)
		}
		var nextp rune
		if st.pi < len(pattern)-1 {
			nextp = pattern[st.pi+1]
		}
		switch {
		case j+size >= len(s):
			nextc, nextSize = 0, 0
		case s[j+size] < utf8.RuneSelf:
			nextc, nextSize = rune(s[j+size]), 1
		default:
			nextc, nextSize = utf8.DecodeRuneInString(s[j+size:])
		}
		st.take(equalFold(nextp, nextc) || nextc == 0)
		lastIndex = j
		last = c
	}
	return st.result(len(s), len(pattern))
}

// fuzzyState is sahilm/fuzzy's scoring of one string, between two runes.
type fuzzyState struct {
	total    int
	matched  int // pattern runes taken
	last     int // byte offset of the last one taken
	pi       int // the pattern rune looked for
	best, at int // the best candidate for it so far (score, offset), -1: none
	adjacent int // the adjacency bonus so far
}

// candidate scores the rune c at byte offset j, equal to the pattern rune
// looked for; the rune before it is prev (at byte offset prevAt).
func (st *fuzzyState) candidate(j, prevAt int, prev, c rune) {
	score := 0
	if j == 0 {
		score += firstCharMatchBonus
	}
	if unicode.IsLower(prev) && unicode.IsUpper(c) {
		score += camelCaseMatchBonus
	}
	if j != 0 && isSeparator(prev) {
		score += matchFollowingSeparatorBonus
	}
	if st.matched > 0 && prevAt == st.last {
		// Adjacent matches grow: each doubles the bonus so far.
		bonus := st.adjacent*2 + adjacentMatchBonus
		score += bonus
		st.adjacent += bonus
	}
	if score > st.best {
		st.best, st.at = score, j
	}
}

// take takes the best candidate for the pattern rune when due: when the
// next rune of s is the next pattern rune, or s ends (the library looks for
// the best match, not the first). As in the library, the offset of the
// candidate taken before stays a candidate.
func (st *fuzzyState) take(due bool) {
	if !due || st.at < 0 {
		return
	}
	if st.matched == 0 {
		st.best += max(st.at*unmatchedLeadingCharPenalty, maxUnmatchedLeadingCharPenalty)
	}
	st.total += st.best
	st.matched++
	st.last = st.at
	st.best = -1
	st.pi++
}

// result is the score of a string of n bytes (a point off per byte not
// matched), and whether every rune of the pattern (runes of them) was
// taken.
func (st *fuzzyState) result(n, runes int) (int, bool) {
	return st.total + st.matched - n, st.matched == runes
}

func isSeparator(r rune) bool {
	switch r {
	case '/', '-', '_', ' ', '.', '\\':
		return true
	}
	return false
}

// equalFold is sahilm/fuzzy's (and strings.EqualFold's) rune comparison.
func equalFold(tr, sr rune) bool {
	if tr == sr {
		return true
	}
	if tr < sr {
		tr, sr = sr, tr
	}
	if tr < utf8.RuneSelf {
		return 'A' <= sr && sr <= 'Z' && tr == sr+'a'-'A'
	}
	r := unicode.SimpleFold(sr)
	for r != sr && r < tr {
		r = unicode.SimpleFold(r)
	}
	return r == tr
}
