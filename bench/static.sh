#!/bin/bash
# The 100,000-step static benchmark: `flow validate` and `flow plan` on a
# generated 100k-step workflow, beside the C floor that only loads the same
# file into libyaml's node tree. Prints wall time (median of REPS runs), peak
# RSS, the ratio to the floor, and PASS/FAIL against the targets
# (<= 0.35 s and <= 200 MB each). Exit 0 only if both flow commands pass.
#
#   bash bench/static.sh            # 5 reps
#   REPS=11 bash bench/static.sh
#   FLOW=/path/to/flow bash bench/static.sh
#
# Needs bench/setup.sh to have run (GNU time, bench/bin/yaml_tree, flow).
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

python3 "$BENCH/gen.py" static100k
echo "file: $(du -h "$BENCH/out/static100k/flow.yml" | cut -f1)," \
     "$(wc -l < "$BENCH/out/static100k/flow.yml") lines"
"$BENCH/bin/yaml_tree" -v "$BENCH/out/static100k/flow.yml"
echo

exec python3 "$BENCH/run.py" --only static100k --reps "${REPS:-5}" \
    --variant 'libyaml node tree (C)' 'flow validate' 'flow plan' \
    --target 0.35 200
