#!/usr/bin/env bash
# The baseline of docs/ci.md's recipe comes from another run: the newest unexpired artifact named
# $C3_ARTIFACT that a run of this repository (not of a fork) on branch $C3_BRANCH uploaded, other
# than this run. Writes `run-id=ID` to $GITHUB_OUTPUT, or `run-id=` when there is none yet (the
# first run on the branch, or every baseline expired). An API call that fails (no `actions: read`
# permission, no GitHub CLI) is an error, never taken for "no baseline".
# Environment: GH_TOKEN, GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_OUTPUT, C3_ARTIFACT, C3_BRANCH.
set -euo pipefail
: "${GITHUB_REPOSITORY:?}" "${GITHUB_RUN_ID:?}" "${GITHUB_OUTPUT:?}" "${C3_ARTIFACT:?}" "${C3_BRANCH:?}"
if ! command -v gh >/dev/null 2>&1; then
  echo "::error::c3scope-compare: the GitHub CLI (gh) is not on this runner's PATH; install it (GitHub-hosted runners have it)"
  exit 2
fi
# The newest first (the API's order); artifacts of other branches, of forks (a fork's branch may
# be called main too), expired ones and this run's own (a re-run) are not a baseline.
query='[.artifacts[]
        | select(.expired | not)
        | select(.workflow_run.head_branch == env.C3_BRANCH)
        | select(.workflow_run.head_repository_id == .workflow_run.repository_id)
        | select((.workflow_run.id | tostring) != env.GITHUB_RUN_ID)]
       | .[0].workflow_run.id // empty'
err=$(mktemp)
trap 'rm -f "$err"' EXIT
if ! id=$(gh api --method GET "repos/$GITHUB_REPOSITORY/actions/artifacts" \
            -f name="$C3_ARTIFACT" -f per_page=100 --jq "$query" 2>"$err"); then
  echo "::error::c3scope-compare: cannot list the artifacts of $GITHUB_REPOSITORY ($(head -c 300 "$err" | tr '\n' ' ')): give the job 'permissions: actions: read'"
  exit 2
fi
if [ -z "$id" ]; then
  echo "::notice::c3scope-compare: no baseline yet (no artifact $C3_ARTIFACT from a run on $C3_BRANCH): budgets only"
else
  echo "c3scope-compare: the baseline is artifact $C3_ARTIFACT of run $id ($C3_BRANCH)"
fi
echo "run-id=$id" >>"$GITHUB_OUTPUT"
