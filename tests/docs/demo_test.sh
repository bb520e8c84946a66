#!/usr/bin/env bash
# scripts/demo's output (issue 24 item 26): every line within 120 columns, the analysis of the
# trace it wrote (overlap, exposed communication), and an explanation of the headline result that
# is printed only when the numbers show it.
#   demo_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The demo on the programs already built (no setup, no build), into a temporary folder.
C3_DEMO_BUILD="$build" C3_DEMO_OUT="$tmp/demo" "$src/scripts/demo" >"$tmp/out.txt" 2>&1 ||
  { cat "$tmp/out.txt"; fail "scripts/demo exited with $?"; }
wide=$(awk 'length($0) > 120 { printf "%d: %d columns: %s\n", NR, length($0), $0 }' "$tmp/out.txt")
[ -z "$wide" ] || fail "lines wider than 120 columns:"$'\n'"$wide"
for want in "== c3scope analyze: overlap and exposed communication" "% of it hidden" \
            "exposed communication" "overlap %" "exposed comm ms" "== what the numbers say"; do
  grep -qF -- "$want" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "the demo does not show '$want'"; }
done
if grep -q "SIMULATED" "$tmp/out.txt"; then
  # The simulated node's default experiment: the plain GEMM + AllReduce gains nothing because the
  # AllReduce waits for a GEMM that fills every SM; pipelining helps.
  for want in "gained almost nothing" "Why: the GEMM ran at full speed" "it fills every SM" \
              "analyze shows the same" "Pipelining helps"; do
    grep -qF -- "$want" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "the demo does not say '$want'"; }
  done
fi

# The explanation follows the numbers: results where the plain cases gained, or where the GEMM was
# slowed, do not get the sentences that would be false for them.
trace=$(find "$tmp/demo" -maxdepth 1 -name "*.sqlite" | sort | head -1)
report() { python3 "$src/scripts/demo_report.py" analysis "$1" "$tmp/demo/analysis.json" "$trace"; }
edit() {  # edit FILE PYTHON-EXPRESSION-ON-r: applies it to every plain case of results.json
  python3 - "$tmp/demo/results.json" "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["results"]:
    if not r.get("knobs"):
        exec(sys.argv[3])
json.dump(doc, open(sys.argv[2], "w"))
PY
}
edit "$tmp/gained.json" 'r["fraction_of_ideal"] = 0.5; r["realized_speedup"] = 1.1'
report "$tmp/gained.json" >"$tmp/gained.txt"
if grep -qF "gained almost nothing" "$tmp/gained.txt" || grep -qF "Why:" "$tmp/gained.txt"; then
  cat "$tmp/gained.txt"; fail "plain cases that gained are said to have gained nothing"
fi
edit "$tmp/slowed.json" 'r["compute_slowdown"] = 0.3'
report "$tmp/slowed.json" >"$tmp/slowed.txt"
grep -qF "gained almost nothing" "$tmp/slowed.txt" || { cat "$tmp/slowed.txt"; fail "no headline"; }
if grep -qF "Why: the GEMM ran at full speed" "$tmp/slowed.txt"; then
  cat "$tmp/slowed.txt"; fail "a slowed GEMM is said to run at full speed"
fi
echo "demo_test: 3 passed, 0 failed"
