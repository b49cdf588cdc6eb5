#!/usr/bin/env bash
# End-to-end check of the Slurm path (`make slurm-check`): a throw-away single-node Slurm
# cluster on this host, a small multirun through hydra/launcher=slurm, a second sweep
# cancelled halfway with scancel and resubmitted. Needs a Debian or Ubuntu host and root
# (it installs slurm-wlm and munge with apt-get when they are missing and starts daemons);
# that is why it is not part of `make test`. Run from anywhere; everything it starts
# (munged, slurmctld, slurmd) uses its own configuration, socket, state and logs in one
# temporary folder and is stopped on exit. It refuses to run beside a Slurm already running.
#   bash experiments/slurm_check.sh              # uses .venv/bin/python (`make env`)
#   PY=/path/to/python KEEP=1 bash experiments/slurm_check.sh   # other Python; keep the folder
# Environment: PY (Python with proxboost installed), KEEP=1 (keep the temporary folder: logs,
# slurm.conf, rows), SLURMCTLD_PORT / SLURMD_PORT (default 6817 / 6818).
#
# The cluster has no accounting (no slurmdbd), as on many small clusters: `sacct` answers
# "Slurm accounting storage is disabled". submitit then cannot read job states; it learns
# that a job ended from the result file the job writes, and logs "Bypassing sacct error ...
# status may be inaccurate" while it waits. The first sweep shows that warning, the others
# run with SUBMITIT_LOG_LEVEL=ERROR (see conf/hydra/launcher/slurm.yaml). A cancelled job
# writes no result file, so the submitting command of a cancelled sweep never learns that
# its jobs are gone: this script stops it (as Ctrl-C would) and resubmits.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
KEEP=${KEEP:-0}
CTLD_PORT=${SLURMCTLD_PORT:-6817}
SLURMD_PORT=${SLURMD_PORT:-6818}
T0=$SECONDS

say() { printf '[slurm-check %4ds] %s\n' $((SECONDS - T0)) "$*"; }
die() { say "FAILED: $*"; exit 1; }

# -- preconditions -------------------------------------------------------------------------------
[[ $(id -u) == 0 ]] || die "run as root (installs packages and starts munged, slurmctld, slurmd)"
[[ -x $PY ]] || die "no Python at $PY: run 'make env' first or set PY=/path/to/python"
"$PY" -c "import proxboost, hydra_plugins.hydra_submitit_launcher" \
  || die "$PY cannot import proxboost and hydra-submitit-launcher ('make env' installs them)"
for daemon in slurmctld slurmd; do
  if pgrep -x "$daemon" >/dev/null; then
    die "a $daemon is already running on this host: this check starts its own cluster; stop it first"
  fi
done

# -- packages ------------------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
   || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  command -v apt-get >/dev/null || die "slurm-wlm and munge are missing and this is not a Debian/Ubuntu host"
  say "installing slurm-wlm and munge (apt-get)"
  t=$SECONDS
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
  say "installed in $((SECONDS - t)) s"
else
  say "slurm-wlm and munge already installed"
fi
say "$(slurmctld -V), munge $(dpkg-query -W -f='${Version}' munge 2>/dev/null || echo '?')"

# -- a throw-away cluster ------------------------------------------------------------------------
WORK=$(mktemp -d /tmp/proxboost-slurm-check.XXXXXX)
chmod 755 "$WORK"
MUNGE_DIR=$WORK/munge
MUNGE_SOCKET=$MUNGE_DIR/munge.socket
SUBMITTER_PID=
OK=0

stop() {  # stop <pidfile>: SIGTERM the daemon it names; SIGKILL if it is still there after 15 s
  local pid
  [[ -f $1 ]] || return 0
  pid=$(cat "$1")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
  say "$(basename "$1" .pid) still running 15 s after SIGTERM: SIGKILL"
  kill -KILL "$pid" 2>/dev/null
}

cleanup() {
  set +e
  if [[ -n $SUBMITTER_PID ]] && kill -0 "$SUBMITTER_PID" 2>/dev/null; then kill "$SUBMITTER_PID"; fi
  # Cancel what is left and let the job steps end before slurmd goes: a slurmd stopped while a
  # step is still completing may hang, and the step would outlive the cluster.
  if [[ -f $WORK/slurmctld.pid ]] && squeue -h -o %i >/dev/null 2>&1; then
    scancel --user=root 2>/dev/null
    for _ in $(seq 60); do [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break; sleep 0.5; done
  fi
  stop "$WORK/slurmd.pid"
  stop "$WORK/slurmctld.pid"
  stop "$MUNGE_DIR/munged.pid"
  if [[ $OK == 1 && $KEEP != 1 ]]; then
    rm -rf "$WORK"
  else
    say "kept $WORK (logs in $WORK/log, configuration in $WORK/slurm.conf)"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# munged with its own key and socket; it runs as the `munge` user the package created.
mkdir -p "$MUNGE_DIR" "$WORK/log" "$WORK/state" "$WORK/spool"
dd if=/dev/urandom of="$MUNGE_DIR/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$MUNGE_DIR"
chmod 711 "$MUNGE_DIR"          # clients (root, slurmstepd) reach the socket; the key stays 0400
chmod 400 "$MUNGE_DIR/munge.key"
runuser -u munge -- munged --key-file="$MUNGE_DIR/munge.key" --socket="$MUNGE_SOCKET" \
  --pid-file="$MUNGE_DIR/munged.pid" --log-file="$MUNGE_DIR/munged.log" \
  --seed-file="$MUNGE_DIR/munged.seed"
munge --socket="$MUNGE_SOCKET" -n | unmunge --socket="$MUNGE_SOCKET" >/dev/null \
  || die "munge round trip failed (log: $MUNGE_DIR/munged.log)"

NODE=$(hostname -s)
NCPU=$(nproc)
MEM_MB=$(awk '/MemTotal/ {m = int($2 / 1024 / 2); print (m > 4096 ? 4096 : m)}' /proc/meminfo)
export SLURM_CONF=$WORK/slurm.conf
cat >"$SLURM_CONF" <<EOF
# Single-node throw-away cluster of experiments/slurm_check.sh (no cgroups, no accounting).
ClusterName=proxboostcheck
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# scancel: SIGTERM, then SIGKILL KillWait seconds later; submitit's job ignores SIGTERM, so a
# cancelled job goes on storing rows until the SIGKILL (a few seconds here)
KillWait=2
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$NCPU RealMemory=$MEM_MB State=UNKNOWN
PartitionName=check Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -c -f "$SLURM_CONF" || die "slurmctld did not start (log: $WORK/log/slurmctld.log)"
slurmd -f "$SLURM_CONF" -N "$NODE" || die "slurmd did not start (log: $WORK/log/slurmd.log)"
for _ in $(seq 60); do
  state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null || true)
  [[ $state == idle ]] && break
  sleep 1
done
[[ $state == idle ]] || die "node $NODE is '$state', not idle after 60 s (logs in $WORK/log)"
say "cluster up: node $NODE, $NCPU CPUs, ${MEM_MB} MB, partition 'check' (SLURM_CONF=$SLURM_CONF)"
say "sacct says: $(sacct 2>&1 | head -1)"

# -- the sweeps ----------------------------------------------------------------------------------
# Small and self-contained: synthetic regression data (no data file), the smoke grid (2 grid
# points), 1 CPU and 1 GB per job. Sweep 2's jobs are longer (6 splits of a few seconds each), so
# that the cancel hits jobs that have stored some of their rows and not others.
SMALL=(dataset=synthetic dataset.params.n_features=5 grid=smoke progress=false
       hydra/launcher=slurm hydra.launcher.partition=check hydra.launcher.cpus_per_task=1
       hydra.launcher.mem_gb=1 hydra.launcher.timeout_min=20)
SWEEP1=(loss=ls,lad algo=gradient,prox protocol.n_splits=2
        dataset.params.n_samples=300 protocol.max_estimators=50)
SWEEP2=(loss=ls,lad algo=residual_gradient,residual_prox protocol.n_splits=6
        dataset.params.n_samples=5000 protocol.max_estimators=1000)

# check.py <results_dir> <losses> <algos> <n_splits> <mode>: the rows stored under results_dir,
# read through proxboost.experiments.store.results.load. mode=complete: every (loss, algo, split) exactly once;
# mode=partial: each at most once, some but not all stored; mode=wait: wait until that holds
# and a job has stored some of its rows but not all (it is running), or until half the rows
# are stored (at most 15 min). Prints "<stored>/<expected>" and writes each row's creation time and fit
# time to <results_dir>.created.json (compared before and after a resubmission).
CHECK=$WORK/check.py
cat >"$CHECK" <<'EOF'
import collections, itertools, json, math, sys, time
from pathlib import Path
from proxboost.experiments.store.results import load

root, losses, algos, n_splits, mode = sys.argv[1:]
expected = {(l, a, k) for l, a, k in itertools.product(
    losses.split(","), algos.split(","), range(int(n_splits)))}
deadline = time.monotonic() + 900
while True:
    rows = load(root) if Path(root).is_dir() else None
    keys = [] if rows is None else list(zip(rows["loss"], rows["algo"], rows["split"].astype(int)))
    n = len(set(keys))
    stored = collections.Counter((l, a) for l, a, _ in set(keys))
    running = any(0 < count < int(n_splits) for count in stored.values())
    if mode != "wait" or (n < len(expected) and (running or 2 * n >= len(expected))):
        break
    if n >= len(expected) or time.monotonic() > deadline:
        sys.exit(f"no partial state caught: {n}/{len(expected)} rows stored")
    time.sleep(0.5)
problems = []
unexpected = set(keys) - expected
if unexpected:
    problems.append(f"unexpected rows {sorted(unexpected)}")
dupes = sorted({k for k in keys if keys.count(k) > 1})
if dupes:
    problems.append(f"rows stored more than once {dupes}")
if rows is not None and not all(math.isfinite(v) for v in rows["test_loss"]):
    problems.append("a stored row has no finite test_loss")
missing = expected - set(keys)
if mode == "complete" and missing:
    problems.append(f"{len(missing)} rows missing, e.g. {sorted(missing)[:3]}")
if mode in ("partial", "wait") and not (0 < len(set(keys)) < len(expected)):
    problems.append(f"not a partial state: {len(set(keys))}/{len(expected)}")
leftovers = [str(p) for p in Path(root).rglob("*") if p.is_file() and p.name.startswith(".")]
if problems:
    sys.exit("; ".join(problems))
created = {} if rows is None else {
    "/".join(map(str, key)): f"{c} {s!r}"
    for key, c, s in zip(keys, rows["created"], rows["fit_seconds"])}
Path(root + ".created.json").write_text(json.dumps(created, sort_keys=True))
per_job = [stored[job] for job in sorted({(l, a) for l, a, _ in expected})]
print(f"{len(set(keys))}/{len(expected)} rows, each exactly once"
      + (f" (rows per job, of {n_splits}: {per_job})" if mode != "complete" else "")
      + (f"; {len(leftovers)} temporary files left by killed writers"
         if leftovers and mode != "wait" else ""))
EOF
check() { "$PY" "$CHECK" "$@"; }
# loss and algo lists of a sweep's arguments, for check.py
arg() { local key=$1 a; shift; for a in "$@"; do if [[ $a == "$key="* ]]; then echo "${a#*=}"; fi; done; }

sweep() {  # sweep <name> <results_dir> <args...>: run.py -m through the Slurm launcher
  local name=$1 results=$2; shift 2
  "$PY" run.py -m "${SMALL[@]}" "$@" results_dir="$results" hydra.sweep.dir="$WORK/$name"
}

# 1. A small multirun: 4 jobs (2 losses x 2 algos), 2 splits each, one array job.
R1=$WORK/results-sweep1
say "sweep 1: ${SWEEP1[*]} (4 jobs x 2 splits), submitit's default logging"
t=$SECONDS
sweep sweep1 "$R1" "${SWEEP1[@]}" >"$WORK/log/sweep1.out" 2>&1 \
  || { tail -30 "$WORK/log/sweep1.out"; die "sweep 1 failed (log: $WORK/log/sweep1.out)"; }
say "sweep 1 done in $((SECONDS - t)) s; submitit's accounting warnings: $(grep -c 'Bypassing sacct error' "$WORK/log/sweep1.out" || true) lines"
grep -m1 'Bypassing sacct error' "$WORK/log/sweep1.out" | cut -c1-160 || true
result=$(check "$R1" "$(arg loss "${SWEEP1[@]}")" "$(arg algo "${SWEEP1[@]}")" "$(arg protocol.n_splits "${SWEEP1[@]}")" complete) \
  || die "sweep 1: $result"
say "sweep 1 stored $result"

# 2. A second sweep (4 jobs x 6 splits), cancelled halfway.
export SUBMITIT_LOG_LEVEL=ERROR
R2=$WORK/results-sweep2
L2=$(arg loss "${SWEEP2[@]}"); A2=$(arg algo "${SWEEP2[@]}"); S2=$(arg protocol.n_splits "${SWEEP2[@]}")
say "sweep 2: ${SWEEP2[*]} (4 jobs x 6 splits), in the background"
t=$SECONDS
sweep sweep2 "$R2" "${SWEEP2[@]}" >"$WORK/log/sweep2-cancelled.out" 2>&1 &
SUBMITTER_PID=$!
result=$(check "$R2" "$L2" "$A2" "$S2" wait) || die "sweep 2: $result"
squeue -h -o '%i %T' >"$WORK/log/squeue-before-scancel.txt"
say "after $((SECONDS - t)) s: $result; $(wc -l <"$WORK/log/squeue-before-scancel.txt") jobs queued or running; scancel --user=root"
scancel --user=root
for _ in $(seq 60); do [[ -z $(squeue -h -o %i) ]] && break; sleep 1; done
[[ -z $(squeue -h -o %i) ]] || die "jobs still in the queue 60 s after scancel"
say "queue empty $((SECONDS - t)) s after the start of sweep 2"
# No accounting: submitit cannot see that its jobs were cancelled, so the submitter waits
# for result files that will never come. Stop it as a user would with Ctrl-C (SIGTERM here:
# a background process of a script ignores SIGINT).
sleep 10
if kill -0 "$SUBMITTER_PID" 2>/dev/null; then
  kill -TERM "$SUBMITTER_PID"
  wait "$SUBMITTER_PID" || true
  say "submitter of the cancelled sweep still waiting 10 s after the cancel: stopped (SIGTERM)"
else
  wait "$SUBMITTER_PID" && rc=0 || rc=$?
  say "submitter of the cancelled sweep exited by itself (status $rc)"
fi
SUBMITTER_PID=
result=$(check "$R2" "$L2" "$A2" "$S2" partial) || die "sweep 2 after scancel: $result"
cp "$R2.created.json" "$WORK/created-before-resubmit.json"
say "after scancel: $result (every stored row complete)"

# 3. The same command again: finishes the missing rows, recomputes none of the stored ones.
t=$SECONDS
sweep sweep2-resubmitted "$R2" "${SWEEP2[@]}" >"$WORK/log/sweep2-resubmitted.out" 2>&1 \
  || { tail -30 "$WORK/log/sweep2-resubmitted.out"; die "resubmitted sweep 2 failed"; }
result=$(check "$R2" "$L2" "$A2" "$S2" complete) || die "resubmitted sweep 2: $result"
say "resubmitted sweep 2 done in $((SECONDS - t)) s: $result"
"$PY" - "$WORK/created-before-resubmit.json" "$R2.created.json" <<'EOF' || die "a row stored before the cancel was recomputed"
import json, sys
before, after = (json.load(open(p)) for p in sys.argv[1:])
changed = [k for k in before if after.get(k) != before[k]]
if changed:
    sys.exit(f"recomputed: {changed}")
print(f"[slurm-check] the {len(before)} rows stored before the cancel were kept as they were;"
      f" {len(after) - len(before)} computed by the resubmission")
EOF
OK=1
say "all checks passed"
