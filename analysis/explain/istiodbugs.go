package explain

import (
	"strconv"
	"strings"
)

// secretBug is a known istiod bug that a remote secret written while
// istiod runs (a rotation, a fix of a bad secret) runs into. Each entry
// cites its issue and holds only what was checked in istio's issues and
// release notes; first and last are the versions known to have it
// (inclusive), and a version outside is not flagged. Fixed names the
// release notes that say it is fixed, or says that the fixed version could
// not be confirmed.
type secretBug struct {
	issue       int
	what        string
	first, last string
	fixed       string
}

// secretBugs is the table (checked with istio's GitHub issues and the
// istio.io release notes, 2026-11).
var secretBugs = []secretBug{
	{issue: 58047, what: "an updated remote secret is missed: istiod keeps the cluster it built from the first version (e.g. a wrong server) until it restarts",
		first: "1.27.1", last: "1.27.1",
		fixed: "reported on 1.27.1 and closed with a fix; the first release with it is not confirmed"},
	{issue: 60520, what: "the secret controller panics (close of closed channel) when a remote secret is updated twice in quick succession",
		first: "1.29.0", last: "1.29.4",
		fixed: "fixed in 1.29.5 (its release notes); the first version with the bug is not confirmed"},
	{issue: 60612, what: "istiod does not pick up an updated remote secret until it restarts (the new cluster registry can deadlock waiting for sync), leaving that cluster's registry stale",
		first: "1.30.0", last: "1.30.2",
		fixed: "fixed in 1.30.3 (its release notes); other minor versions not confirmed"},
	{issue: 61043, what: "rotating a remote secret wipes that cluster's endpoint shards until istiod restarts (the superseded registry's Close removes the shard the new one filled)",
		first: "1.30.0", last: "1.30.3",
		fixed: "reported on 1.30.1 and 1.30.3; the fix (istio#61044) was merged to release-1.30 and release-1.31 on 2026-08-06 (#61159, #61160), the first patch releases with it are not confirmed"},
}

// has says whether version v is within the bug's known range.
func (b secretBug) has(v string) bool {
	pv, ok := patchVersion(v)
	if !ok {
		return false
	}
	first, _ := patchVersion(b.first)
	last, _ := patchVersion(b.last)
	return !less(pv, first) && !less(last, pv)
}

// patchVersion reads MAJOR.MINOR.PATCH from a version or image tag
// ("1.30.2", "1.30.2-distroless", "v1.30.2"); a pre-release counts as
// its patch.
func patchVersion(v string) ([3]int, bool) {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+_"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return [3]int{}, false
	}
	var out [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return [3]int{}, false
		}
		out[i] = n
	}
	return out, true
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
