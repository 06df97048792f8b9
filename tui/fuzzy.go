package tui

import (
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
}

// findIDs returns the candidate rows (nil: all n rows), in their order,
// whose name sahilm/fuzzy matches. sahilm/fuzzy matches a string exactly
// when the pattern is a case-folded subsequence of it (it only chooses
// *which* characters score best), so membership is decided by that cheap
// test; the library then runs only on the members (to rank them) and on
// the rows on screen (to get the matched characters, matchedBytes).
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
	var candidates []int32
	if narrow {
		candidates = f.matched
	}
	members := findIDs(query, candidates, n, name)
	if len(f.slot) != n || !narrow {
		f.slot = make([]int32, n)
	} else {
		for _, id := range f.matched {
			f.slot[id] = 0
		}
	}
	for _, id := range members {
		f.slot[id] = 1
	}
	// The members in the given order, then ranked by sahilm/fuzzy (whose
	// sort is stable: equal scores keep that order).
	inOrder := make(idNames, 0, len(members))
	for _, id := range order {
		if f.slot[id] != 0 {
			inOrder = append(inOrder, idName{id, name(int(id))})
		}
	}
	ranked := fuzzy.FindFrom(query, inOrder)
	matched := make([]int32, len(ranked))
	for _, id := range members {
		f.slot[id] = 0
	}
	for i, r := range ranked {
		id := inOrder[r.Index].id
		matched[i] = id
		f.slot[id] = int32(i + 1)
	}
	f.query, f.n, f.matched = query, n, matched
}

// idNames adapts row ids and their names to fuzzy.Source.
type idNames []idName

type idName struct {
	id   int32
	name string
}

func (s idNames) String(i int) string { return s[i].name }
func (s idNames) Len() int            { return len(s) }

// match reports whether row id matches.
func (f *fuzzyFilter) match(id int) bool {
	if f.query == "" {
		return true
	}
	return id >= 0 && id < len(f.slot) && f.slot[id] != 0
}
