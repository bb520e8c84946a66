#!/usr/bin/env bash
# This run as the next baseline (docs/ci.md): its summary, a few hundred kB however large the
# traces. Environment: C3SCOPE, C3_TRACE, C3_STEP (may be empty), C3_SUMMARY.
set -euo pipefail
: "${C3SCOPE:?}" "${C3_TRACE:?}" "${C3_SUMMARY:?}"
mkdir -p "$(dirname "$C3_SUMMARY")"
args=()
if [ -n "${C3_STEP:-}" ]; then args+=(--step "$C3_STEP"); fi
"$C3SCOPE" analyze "$C3_TRACE" "${args[@]}" --summary "$C3_SUMMARY" --force >/dev/null
echo "c3scope-compare: this run's summary is the next baseline: $C3_SUMMARY"
