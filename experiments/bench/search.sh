#!/usr/bin/env bash
# trainsim search benchmark: GPT-3 175B on 1,024 GPUs of dgx-a100-superpod (gbs 1536,
# sequence 2048; the default 3d space), the top 10 simulated (pipelined): layouts
# enumerated and pruned, estimates per second, total wall time; then the same under
# mpirun -np 2 (where mpirun exists), the whole AxoNN 4D space of a GPT 76B on 1,024
# Perlmutter A100s, and the top-5 of Llama-3 70B on 512 H100s.
# Targets (issue 8): whole search < 60 s, > 10,000 analytical estimates/s per core; issue 17:
# the 175B search over --space all < 20 s (experiments/bench/scale.sh row 8), AxoNN 4D
# estimates >= 100,000/s per core (row 9). Each run prints its target beside its figures.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s bin/trainsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # label, target, then trainsim search arguments
  local label=$1 target=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$tmp/time" bin/trainsim search "$@" > "$tmp/out" 2> "$tmp/err"
  read -r wall rss < "$tmp/time"
  echo "== $label: wall ${wall} s, peak RSS $((rss / 1024)) MB (target: $target)"
  grep -v '^\[' "$tmp/err" | tr '\r' '\n' | grep '^search:' || true
  cat "$tmp/out"
  echo
}
gpt="--cluster dgx-a100-superpod --gpus 1024 --model gpt3-175b --gbs 1536 --seq 2048"
run "GPT-3 175B, 1,024 x A100, 3d space, top 10 simulated" "< 60 s" $gpt --top 10
run "GPT-3 175B, 1,024 x A100, estimates only" "> 10,000 estimates/s per core" $gpt --top 10 --fidelity estimate
# with cp: estimates only (simulating cp=2 layouts at this scale took 77 s and 6.9 GB for 5)
run "GPT-3 175B, 1,024 x A100, 3d + cp, estimates only (AxoNN 4d constrained out)" "> 10,000 estimates/s per core" $gpt --top 5 \
    --space all --constraint 'gx=1,gy=1,gz=1,mbs=1' --fidelity estimate
# AxoNN 4D: the whole space by its estimate, the top 10 on the critical path of their op graphs
run "GPT 76B, 1,024 x A100 (perlmutter), 4d space, top 10 on the critical path" ">= 100,000 estimates/s per core (issue 17)" --cluster perlmutter \
    --gpus 1024 --model megatron-gpt-76b --gbs 1024 --seq 2048 --space 4d --top 10 --fidelity analytical
if command -v mpirun > /dev/null; then
  root=$([ "$(id -u)" = 0 ] && echo --allow-run-as-root || true)
  /usr/bin/time -f "%e" -o "$tmp/time" mpirun $root --oversubscribe -np 2 bin/trainsim search $gpt --top 10 \
    > "$tmp/mpi" 2> /dev/null
  bin/trainsim search $gpt --top 10 > "$tmp/serial" 2> /dev/null
  echo "== mpirun -np 2: wall $(cat "$tmp/time") s (target: < 60 s), output $(cmp -s "$tmp/mpi" "$tmp/serial" && echo identical || echo DIFFERENT) to the serial run"
  echo
fi
run "Llama-3 70B, 512 x H100, 3d space, top 5 simulated" "< 60 s" --cluster dgx-h100-superpod --gpus 512 \
    --model llama3-70b --gbs 1024 --seq 8192 --top 5
