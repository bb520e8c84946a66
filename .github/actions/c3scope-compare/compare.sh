#!/usr/bin/env bash
# Compares this run with the baseline (docs/ci.md), or checks the budgets alone when there is no
# baseline yet, appends the Markdown report to the job summary and exits with c3scope compare's
# code (3, inconclusive, passes with a warning when C3_ALLOW_INCONCLUSIVE is true).
# Environment: C3SCOPE, C3_TRACE, C3_STEP, C3_BUDGETS (may be empty), C3_BASELINE (the downloaded
# summary; empty when there is none), C3_BASELINE_RUN, C3_ARTIFACT, C3_BRANCH, C3_OUT (folder of
# the reports), C3_ALLOW_INCONCLUSIVE, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY.
set -uo pipefail
: "${C3SCOPE:?}" "${C3_TRACE:?}" "${C3_OUT:?}" "${GITHUB_OUTPUT:?}" "${GITHUB_STEP_SUMMARY:?}"
mkdir -p "$C3_OUT"
md="$C3_OUT/report.md"
junit="$C3_OUT/report.xml"
json="$C3_OUT/compare.json"
rm -f "$md" "$junit" "$json"
args=(--md "$md" --junit "$junit" --json "$json")
if [ -n "${C3_STEP:-}" ]; then args+=(--step "$C3_STEP"); fi
if [ -n "${C3_BUDGETS:-}" ]; then
  if [ ! -f "$C3_BUDGETS" ]; then
    echo "::error::c3scope-compare: the budgets file '$C3_BUDGETS' does not exist"
    exit 2
  fi
  args+=(--budget "$C3_BUDGETS")
fi

note=""
if [ -n "${C3_BASELINE:-}" ]; then
  if [ ! -f "$C3_BASELINE" ]; then
    echo "::error::c3scope-compare: run ${C3_BASELINE_RUN:-?}'s artifact ${C3_ARTIFACT:-} has no $(basename "$C3_BASELINE")"
    exit 2
  fi
  "$C3SCOPE" compare "$C3_BASELINE" "$C3_TRACE" "${args[@]}"
  rc=$?
elif [ -n "${C3_BUDGETS:-}" ]; then
  note="No baseline yet (no artifact ${C3_ARTIFACT:-} from a run on ${C3_BRANCH:-the baseline branch}): the budgets alone were checked."
  "$C3SCOPE" compare "${args[@]}" "$C3_TRACE"
  rc=$?
else
  note="No baseline yet (no artifact ${C3_ARTIFACT:-} from a run on ${C3_BRANCH:-the baseline branch}) and no budgets: nothing was compared. The next run on that branch with save-baseline saves one."
  rc=0
fi

{
  if [ -n "$note" ]; then printf '> %s\n\n' "$note"; fi
  if [ -f "$md" ]; then cat "$md"; fi
} >"$md.tmp" && mv "$md.tmp" "$md"
cat "$md" >>"$GITHUB_STEP_SUMMARY"
if [ -n "$note" ]; then echo "::notice::c3scope-compare: $note"; fi
{
  echo "exit-code=$rc"
  echo "markdown=$md"
  if [ -f "$junit" ]; then echo "junit=$junit"; else echo "junit="; fi
} >>"$GITHUB_OUTPUT"
if [ "$rc" -eq 3 ] && [ "${C3_ALLOW_INCONCLUSIVE:-false}" = "true" ]; then
  echo "::warning::c3scope-compare: inconclusive (exit code 3; the report says why): passed as allow-inconclusive asks"
  exit 0
fi
exit "$rc"
