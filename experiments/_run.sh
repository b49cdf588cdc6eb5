#!/usr/bin/env bash
# The run() of results.sh and benchmark.sh, sourced by both (after their `cd` to the repository
# root), not a script to run: one copy, so that `make results` and `make benchmark` print and run
# their lines the same way. run ARGS... prints the line, then runs it unless DRY_RUN=1; a -m line
# gets the words of MULTIRUN_OVERRIDES appended first. Under the callers' `set -e` a line that
# fails stops the script with its exit status. Once the deadline of a budget (PROXBOOST_DEADLINE,
# a UNIX time) has passed, the remaining lines are not started at all: each would only plan its
# sweep to start nothing, which takes up to a minute on the largest; one line at the end says how
# many were left for the next piece.
set -euo pipefail
read -r -a MULTIRUN <<<"${MULTIRUN_OVERRIDES:-}"
NOT_STARTED=0

past_deadline() {
  [[ -n ${PROXBOOST_DEADLINE:-} ]] && (($(date +%s) >= ${PROXBOOST_DEADLINE%.*}))
}

report_not_started() {
  if ((NOT_STARTED > 0)); then
    echo "budget reached: ${NOT_STARTED} line(s) not started; ${PROXBOOST_RESUME:-the same command} continues them"
  fi
}
trap report_not_started EXIT

run() {
  local argv=("$@")
  if [[ " $* " == *" -m "* ]]; then argv+=("${MULTIRUN[@]}"); fi
  if [[ ${DRY_RUN:-} != 1 ]] && past_deadline; then
    NOT_STARTED=$((NOT_STARTED + 1))
    return 0
  fi
  echo "${argv[*]}"
  if [[ ${DRY_RUN:-} != 1 ]]; then "${argv[@]}"; fi
}
