package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
)

func info(mainVersion string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/meshscope/meshscope", Version: mainVersion}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

// TestReadBuild: what `meshscope version` prints for each way meshscope
// gets built, from synthetic build infos.
func TestReadBuild(t *testing.T) {
	const rev = "52cf10b3c0ffee5a11ce0000deadbeef12345678"
	vcs := []string{"vcs", "git", "vcs.revision", rev, "vcs.time", "2026-08-27T12:45:20Z", "vcs.modified", "false"}
	dirty := []string{"vcs", "git", "vcs.revision", rev, "vcs.time", "2026-08-27T12:45:20Z", "vcs.modified", "true"}
	cases := []struct {
		name       string
		info       *debug.BuildInfo
		ld         [3]string
		v, c, date string
	}{
		{"go install @tag (no VCS stamp from the module proxy)", info("v0.3.0"), [3]string{}, "v0.3.0", "unknown", "unknown"},
		{"go install @pseudo-version", info("v0.0.0-20260827124520-eed52ebb66ad"), [3]string{},
			"v0.0.0-20260827124520-eed52ebb66ad", "eed52ebb66ad", "2026-08-27T12:45:20Z"},
		{"pseudo-version after a tag", info("v0.3.1-0.20260827124520-eed52ebb66ad"), [3]string{},
			"v0.3.1-0.20260827124520-eed52ebb66ad", "eed52ebb66ad", "2026-08-27T12:45:20Z"},
		{"pre-release pseudo-version", info("v0.4.0-rc.1.0.20260827124520-eed52ebb66ad"), [3]string{},
			"v0.4.0-rc.1.0.20260827124520-eed52ebb66ad", "eed52ebb66ad", "2026-08-27T12:45:20Z"},
		{"checkout build (Go ≥ 1.24 stamps a version)", info("v0.0.0-20260827124520-52cf10b3c0ff", vcs...), [3]string{},
			"v0.0.0-20260827124520-52cf10b3c0ff", rev, "2026-08-27T12:45:20Z"},
		{"dirty checkout build", info("v0.0.0-20260827124520-52cf10b3c0ff+dirty", dirty...), [3]string{},
			"v0.0.0-20260827124520-52cf10b3c0ff+dirty", rev + " (modified)", "2026-08-27T12:45:20Z"},
		{"checkout build with an old Go: (devel) and VCS", info("(devel)", vcs...), [3]string{},
			"devel", rev, "2026-08-27T12:45:20Z"},
		{"-buildvcs=false: nothing known", info("(devel)"), [3]string{}, "devel", "unknown", "unknown"},
		{"no build info at all", nil, [3]string{}, "devel", "unknown", "unknown"},
		{"ldflags win over everything", info("v0.0.0-20260827124520-52cf10b3c0ff", dirty...),
			[3]string{"v0.3.0", "52cf10b", "2026-09-01T00:00:00Z"}, "v0.3.0", "52cf10b", "2026-09-01T00:00:00Z"},
		{"ldflags version only: commit from VCS", info("(devel)", vcs...), [3]string{"v0.3.0", "", ""},
			"v0.3.0", rev, "2026-08-27T12:45:20Z"},
	}
	for _, tc := range cases {
		got := readBuild(tc.info, tc.ld[0], tc.ld[1], tc.ld[2])
		if got != (build{tc.v, tc.c, tc.date}) {
			t.Errorf("%s:\n got %+v\nwant {Version:%s Commit:%s Date:%s}", tc.name, got, tc.v, tc.c, tc.date)
		}
	}
}

func TestPseudoVersion(t *testing.T) {
	for _, v := range []string{"", "v0.3.0", "v0.3.0+dirty", "v1.0.0-rc.1", "v0.0.0-2026082712452-eed52ebb66ad",
		"v0.0.0-20261327124520-eed52ebb66ad", "v0.0.0-20260827124520-EED52EBB66AD", "v0.0.0-20260827124520-eed52ebb66", "-20260827124520-eed52ebb66ad"} {
		if rev, at := pseudoVersion(v); rev != "" || at != "" {
			t.Errorf("pseudoVersion(%q) = %q, %q; want nothing (not a pseudo-version)", v, rev, at)
		}
	}
}

// TestVersionCommand: the command prints the four lines; in a test binary
// the ldflags variables are empty, so the values come from the build info.
func TestVersionCommand(t *testing.T) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"version", "--log-file", "-"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "meshscope ") || !strings.HasPrefix(lines[1], "commit: ") ||
		!strings.HasPrefix(lines[2], "date: ") || !strings.HasPrefix(lines[3], "go: go") {
		t.Fatalf("version output:\n%s", out.String())
	}
}
