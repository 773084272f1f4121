#!/usr/bin/env bash
# Kills tlmc with SIGKILL at random points while it tunes, KILLS times (default 100), and
# after each kill checks that the tuning database passes `tlmc db check` and still holds
# every record that was committed before the kill (read just before it); then a resumed
# run finishes. Prints one line a kill and a summary. The test suite does this 5 times
# (tests/driver/tuning_records_survive_kills_and_parallel_builds.cc).
#   scripts/kill_tuning.sh [KILLS] [TLMC]      TLMC: default build-tests/driver/tlmc
set -euo pipefail
kills=${1:-100}
tlmc=$(realpath "${2:-$(dirname "$0")/../build-tests/driver/tlmc}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/m.yaml" <<'YAML'
tlmc: 1
name: killed
inputs:
  a: {shape: [24, 40]}
weights:
  w: {shape: [40, 56], init: {uniform: [-1, 1]}, seed: 2}
nodes:
  - {op: MatMul, inputs: [a, w], outputs: [c]}
  - {op: Relu, inputs: [c], outputs: [r]}
  - {op: Softmax, inputs: [r], outputs: [y]}
outputs: [y]
YAML
db=$work/t.db
ids() {  # the records' (workload, target, schedule), one a line, sorted
  "$tlmc" db export --tuning-db "$db" | /usr/bin/python3 -c '
import json, sys
next(sys.stdin, None)
for line in sys.stdin:
    r = json.loads(line)
    print(json.dumps([r["workload_key"], r["target"], r["schedule"]]))' | sort
}
lost_total=0
for ((k = 1; k <= kills; ++k)); do
  # A fresh database every 10 kills, so that kills land early in a search as well as late.
  if ((k % 10 == 1)); then rm -f "$db" "$db"-wal "$db"-shm; fi
  "$tlmc" "$work/m.yaml" -O3 --trials 400 --tuning-db "$db" -o "$work/o" >/dev/null 2>&1 &
  pid=$!
  # A resumed search proposes and compiles a batch for seconds before it commits the next
  # records: kills up to 10 s in land in every phase of it.
  sleep "$(/usr/bin/python3 -c 'import random; print(random.uniform(0.05, 10.0))')"
  before=""
  [ -f "$db" ] && before=$(ids)
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ -f "$db" ] || { echo "kill $k: before the database existed"; continue; }
  check=$("$tlmc" db check --tuning-db "$db" 2>&1) || { echo "kill $k: db check FAILED: $check"; exit 1; }
  after=$(ids)
  lost=$(comm -23 <(printf '%s\n' "$before" | sed '/^$/d') <(printf '%s\n' "$after") | wc -l)
  lost_total=$((lost_total + lost))
  echo "kill $k: $(printf '%s\n' "$before" | sed '/^$/d' | wc -l) records before, $(printf '%s\n' "$after" | wc -l) after, $lost lost; $check"
done
"$tlmc" "$work/m.yaml" -O3 --trials 40 --tuning-db "$db" -o "$work/o" >/dev/null 2>&1
echo "kill_tuning.sh: $kills kills, $lost_total committed records lost; the resumed run finished"
[ "$lost_total" -eq 0 ]
