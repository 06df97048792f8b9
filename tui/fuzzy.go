package tui

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sahilm/fuzzy"
)

// fuzzyFilter is a fuzzy search over the names of n rows (by row id). While
// the query grows, it searches only the rows the previous query matched: a
// row that does not match "hel" cannot match "hell".
type fuzzyFilter struct {
	query string
	n     int
	// matched are the row ids that match query, in row order.
	matched []int32
	// slot[id] is 1 + the position of row id in matched, 0 when it does
	// not match.
	slot []int32
}

// findIDs returns the candidate rows (nil: all n rows), in row order,
// whose name sahilm/fuzzy matches. sahilm/fuzzy matches a string exactly
// when the pattern is a case-folded subsequence of it (it only chooses
// *which* characters score best), so membership is decided by that cheap
// test; the library runs only for the rows on screen, to get the matched
// characters (matchedBytes).
func findIDs(query string, candidates []int32, n int, name func(i int) string) []int32 {
	pattern := []rune(query)
	var ids []int32
	if candidates == nil {
		for i := 0; i < n; i++ {
			if subsequenceFold(pattern, name(i)) {
				ids = append(ids, int32(i))
			}
		}
		return ids
	}
	for _, id := range candidates {
		if subsequenceFold(pattern, name(int(id))) {
			ids = append(ids, id)
		}
	}
	return ids
}

// matchedBytes are the byte offsets of s that sahilm/fuzzy matches to
// query (nil when it does not match).
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

// subsequenceFold reports whether pattern occurs in s in order, ignoring
// case the way sahilm/fuzzy does (simple case folding).
func subsequenceFold(pattern []rune, s string) bool {
	if len(pattern) == 0 {
		return true
	}
	pi := 0
	for i := 0; i < len(s); {
		var r rune
		if c := s[i]; c < utf8.RuneSelf {
			r = rune(c)
			i++
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			i += size
		}
		if r == 0 {
			return false // sahilm/fuzzy stops at the first NUL
		}
		if equalFold(r, pattern[pi]) {
			pi++
			if pi == len(pattern) {
				return true
			}
		}
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

// active reports whether a query filters the rows.
func (f *fuzzyFilter) active() bool { return f.query != "" }

// set runs query over the rows. reuse says whether the previous matches
// still describe the same rows (false after the data changed).
func (f *fuzzyFilter) set(query string, n int, name func(i int) string, reuse bool) {
	if query == "" {
		*f = fuzzyFilter{n: n}
		return
	}
	narrow := reuse && f.query != "" && f.n == n && strings.HasPrefix(query, f.query)
	var candidates []int32
	if narrow {
		candidates = f.matched
	}
	matched := findIDs(query, candidates, n, name)
	if len(f.slot) != n || !narrow {
		f.slot = make([]int32, n)
	} else {
		for _, id := range f.matched {
			f.slot[id] = 0
		}
	}
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
