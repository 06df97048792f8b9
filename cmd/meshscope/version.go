package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// version, commit and date are set by `make build` / `make release` through
// -ldflags "-X main.version=... -X main.commit=... -X main.date=...". When
// they are not (go install, go run), they come from the build info the Go
// toolchain records: the module version for `go install ...@vX`, the VCS
// stamp for a build in a git checkout.
var (
	version = ""
	commit  = ""
	date    = ""
)

func init() { subcommands = append(subcommands, newVersionCmd) }

func newVersionCmd(*globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print meshscope's version, commit, build date and Go version",
		Long: `Print meshscope's version, the commit it was built from (with "(modified)"
when the checkout had uncommitted changes), the commit's date, and the Go
version and platform it was built with.

Release builds carry these from the release; "go install ...@vX" records the
module version (and, for a pseudo-version, its commit and date); a build in
a git checkout records the commit.` + exitHelp("never"),
		Example: `  meshscope version
  kubectl meshscope version`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, ok := debug.ReadBuildInfo()
			if !ok {
				info = nil
			}
			b := readBuild(info, version, commit, date)
			fmt.Fprintf(cmd.OutOrStdout(), "meshscope %s\ncommit: %s\ndate: %s\ngo: %s %s/%s\n",
				b.Version, b.Commit, b.Date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			if b.Commit == "unknown" {
				// Built in a checkout with VCS stamping off (GOFLAGS=-buildvcs=false
				// is common in CI images) or outside git: say how to get one.
				fmt.Fprintln(cmd.ErrOrStderr(), "meshscope: this build records no commit: build with `make build`, or with `go build -buildvcs=true` in a git checkout")
			}
			return nil
		},
	}
}

// build is what `meshscope version` prints.
type build struct {
	Version, Commit, Date string
}

// readBuild merges the -ldflags values (which win) with the build info:
//
//   - version: the main module's version ("v0.3.0" for go install ...@v0.3.0,
//     a pseudo-version or "v0.0.0-...+dirty" for a checkout build since Go
//     1.24), never Go's "(devel)" placeholder;
//   - commit: vcs.revision (with vcs.modified), else the revision inside a
//     pseudo-version;
//   - date: vcs.time, else the time inside a pseudo-version.
//
// What is not known says so ("unknown") rather than inventing a value.
func readBuild(info *debug.BuildInfo, ldVersion, ldCommit, ldDate string) build {
	b := build{Version: ldVersion, Commit: ldCommit, Date: ldDate}
	if info != nil {
		var rev, at string
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		mv := info.Main.Version
		if mv == "(devel)" {
			mv = ""
		}
		if b.Version == "" {
			b.Version = mv
		}
		pseudoRev, pseudoTime := pseudoVersion(mv)
		if b.Commit == "" {
			switch {
			case rev != "" && modified:
				b.Commit = rev + " (modified)"
			case rev != "":
				b.Commit = rev
			default:
				b.Commit = pseudoRev
			}
		}
		if b.Date == "" {
			b.Date = at
			if b.Date == "" {
				b.Date = pseudoTime
			}
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	if b.Date == "" {
		b.Date = "unknown"
	}
	return b
}

// pseudoVersion returns the revision prefix and the commit time (RFC 3339,
// UTC) of a Go pseudo-version such as v0.0.0-20260827124520-eed52ebb66ad
// or v1.2.4-0.20260827124520-eed52ebb66ad+dirty; empty strings for any
// other version (golang.org/x/mod/module.PseudoVersionTime, in short).
func pseudoVersion(v string) (rev, at string) {
	v, _, _ = strings.Cut(v, "+") // build metadata, e.g. +dirty
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 {
		return "", ""
	}
	rev = v[i+1:]
	head := v[:i]
	j := strings.LastIndexAny(head, "-.")
	if j < 1 || !strings.HasPrefix(v, "v") {
		return "", ""
	}
	t, err := time.Parse("20060102150405", head[j+1:])
	if err != nil {
		return "", ""
	}
	for _, c := range rev {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return "", ""
		}
	}
	return rev, t.UTC().Format(time.RFC3339)
}
