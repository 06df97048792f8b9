package e2e

import "strconv"

func itoa(i int) string { return strconv.Itoa(i) }

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
