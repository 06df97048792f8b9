#!/usr/bin/env bash
# compare.sh BASE [COUNT]: the Go benchmarks that docs/benchmarks.md's
# table lists, run on BASE (a git revision, checked out in a temporary
# worktree) and on the working tree, alternately (BASE, this, BASE, this…),
# so both meet the same load. Prints every result line tagged BASE or HEAD,
# then min–max per benchmark side by side. `make bench-compare BASE=REV`.
set -euo pipefail
base=${1:?usage: compare.sh BASE [COUNT]}
count=${2:-3}
head=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$head" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$head" worktree add -q --detach "$tmp/base" "$base"
out="$tmp/results"

run() { # label dir pkg regex flags...
  local label=$1 dir=$2 pkg=$3 re=$4
  shift 4
  [ -d "$dir/$pkg" ] || { echo "$label $pkg: no such package here"; return 0; }
  # A benchmark that fails on one side is said, and the others still run.
  local log
  log=$(cd "$dir" && go test -run '^$' -bench "$re" "$@" "$pkg" 2>&1) || echo "$label $pkg $re: go test failed: $(echo "$log" | grep -v '^Benchmark' | tail -3 | tr '\n' ' ')"
  echo "$log" | grep -E '^Benchmark' | sed "s/^/$label /" | tee -a "$out" || true
}
# basepkg: where a package of this tree was in BASE (the readers moved from
# collector/ to analysis/ and session/ in issue 36).
basepkg() {
  local p=$1
  for old in "$p" "${p/analysis\//collector/}" "${p/session\//collector/}"; do
    [ -d "$tmp/base/$old" ] && { echo "./$old/"; return; }
  done
  echo "./$p/"
}
pair() { # basepkg headpkg regex flags...
  local bp=$1 hp=$2 re=$3
  shift 3
  for _ in $(seq "$count"); do
    run BASE "$tmp/base" "$bp" "$re" "$@"
    run HEAD "$head" "$hp" "$re" "$@"
  done
}
uptime
pair "$(basepkg analysis/horizon)" ./analysis/horizon/ 'PredictWholeMesh$|PredictWholeMeshLocalities|PredictWholeMeshIstioConfig' -benchmem -count 1
pair "$(basepkg analysis/explain)" ./analysis/explain/ 'Diagnose' -benchtime 5x -count 1
pair ./xdsclient/ ./xdsclient/ 'WDSPush10k|EDSPush10k$|IdleStreams' -benchmem -benchtime 30x -count 1
# BuildPart moved from collector to collector/watch (issue 25).
bp=./collector/watch/
[ -d "$tmp/base/collector/watch" ] || bp=./collector/
pair "$bp" ./collector/watch/ 'BuildPart' -benchtime 5x -count 1
pair ./collector/ ./collector/ 'Publish' -benchtime 5x -count 1
pair ./tui/ ./tui/ 'ViewServices$|ViewServicesFiltered|ViewClusters|ViewService$|FuzzyKeystroke|FuzzyFirstKeystroke|StartupFirstFrame|FleetBuild|ProxiesDerive|ProxiesApply|ViewProxies|ViewMap' -benchmem -count 1
pair ./cmd/meshscope/ ./cmd/meshscope/ 'ProxiesCommand' -benchmem -count 1
pair "$(basepkg session/live)" ./session/live/ 'WhatIfOneObject' -benchtime 5x -count 1
pair ./demo/ ./demo/ 'DemoSettle' -count 1
uptime
echo
echo "min–max ms per op (BASE $base, HEAD the working tree)"
awk '$1 ~ /^(BASE|HEAD)$/ && $2 ~ /^Benchmark/ {
  for (i = 3; i <= NF; i++) if ($(i+1) == "ns/op") { v = $i / 1e6; break }
  k = $2; s = $1
  if (!((k, s) in min) || v < min[k, s]) min[k, s] = v
  if (!((k, s) in max) || v > max[k, s]) max[k, s] = v
  names[k] = 1
}
END {
  for (k in names) printf "%-48s BASE %9.2f–%-9.2f HEAD %9.2f–%-9.2f\n", k, min[k, "BASE"], max[k, "BASE"], min[k, "HEAD"], max[k, "HEAD"]
}' "$out" | sort
