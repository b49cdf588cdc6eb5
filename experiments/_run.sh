#!/usr/bin/env bash
# The run() of results.sh and benchmark.sh, sourced by both (after their `cd` to the repository
# root), not a script to run: one copy, so that `make results` and `make benchmark` print and run
# their lines the same way. run ARGS... prints the line, then runs it unless DRY_RUN=1; a -m line
# gets the words of MULTIRUN_OVERRIDES appended first. Under the callers' `set -e` a line that
# fails stops the script with its exit status.
set -euo pipefail
read -r -a MULTIRUN <<<"${MULTIRUN_OVERRIDES:-}"

run() {
  local argv=("$@")
  if [[ " $* " == *" -m "* ]]; then argv+=("${MULTIRUN[@]}"); fi
  echo "${argv[*]}"
  if [[ ${DRY_RUN:-} != 1 ]]; then "${argv[@]}"; fi
}
