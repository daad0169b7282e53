#!/usr/bin/env bash
# The scale benchmarks of issue 17, one row each with its target: wall time (the
# median of REPS runs, default 3) and peak RSS of the whole process (platform
# build included). A run is stopped past LIMIT_S seconds (default 300) or
# LIMIT_MB of resident memory (default 6000) and reported as such. ROWS picks
# rows by number (default all; e.g. ROWS="1 2 3"); BIN another build's bin/ (to
# compare builds in one run).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-bin}
[ -n "${BIN:-}" ] || make -s bin/trainsim bin/bench_coll
reps=${REPS:-3} limit_s=${LIMIT_S:-300} limit_mb=${LIMIT_MB:-6000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure CMD...: runs it REPS times under the limits; sets wall (median, s),
# cpu (user + system s of the run with the median wall), rss (MB, likewise)
# and out/err files of the last run; status "ok", "timeout" or "over-memory".
# On a shared machine cpu is the steadier figure.
measure() {
  local walls=() rsss=() cpus=() i pid kid t0 t1 r peak
  status=ok
  for ((i = 0; i < reps; i++)); do
    t0=$(date +%s.%N)
    /usr/bin/time -f "%U %S" -o "$tmp/time" "$@" > "$tmp/out" 2> "$tmp/err" &
    pid=$!
    peak=0
    while kill -0 "$pid" 2> /dev/null; do
      kid=$(pgrep -P "$pid" | head -1 || true)
      r=$(awk '/^VmHWM/ {print int($2 / 1024)}' /proc/${kid:-$pid}/status 2> /dev/null || echo 0)
      [ -n "$r" ] && [ "$r" -gt "$peak" ] && peak=$r
      if [ "$peak" -gt "$limit_mb" ]; then kill ${kid:-$pid} 2> /dev/null || true; status=over-memory; fi
      if [ "$(echo "$(date +%s.%N) - $t0 > $limit_s" | bc)" = 1 ]; then kill ${kid:-$pid} 2> /dev/null || true; status=timeout; fi
      sleep 0.05
    done
    wait "$pid" || [ "$status" != ok ] || status="exit $?"
    t1=$(date +%s.%N)
    walls+=("$(echo "$t1 - $t0" | bc)")
    rsss+=("$peak")
    # the last line: a stopped run's file starts with "Command terminated by signal"
    cpus+=("$(awk 'END {printf "%.2f", $1 + $2}' "$tmp/time" 2> /dev/null || echo "?")")
    [ "$status" = ok ] || break
  done
  # the run with the median wall time
  local m
  m=$(for j in "${!walls[@]}"; do echo "${walls[$j]} $j"; done | sort -g | awk '{a[NR] = $2} END {print a[int((NR + 1) / 2)]}')
  wall=$(printf "%.2f" "${walls[$m]}") rss=${rsss[$m]} cpu=${cpus[$m]}
}

row() { # number, label, target, then the measured text
  printf "%2s  %-58s %-22s %s\n" "$1" "$2" "$3" "$4"
}

want() { [ -z "${ROWS:-}" ] || [[ " $ROWS " == *" $1 "* ]]; }

result() { # what the row prints for a measured run
  if [ "$status" = ok ]; then echo "${wall} s (cpu ${cpu} s), ${rss} MB${1:+, $1}"
  else echo "$status after ${wall} s (cpu ${cpu} s), ${rss} MB"; fi
}

row "#" workload target "measured (median of $reps: wall (cpu), peak RSS)"
G=1073741824
if want 1; then
  measure $bin/bench_coll 4096 $G pipelined
  row 1 "1 GiB all-reduce, 4,096 H100s, pipelined" "< 0.25 s" "$(result "sim $(awk '{print $5}' "$tmp/out") ms")"
fi
if want 2; then
  measure $bin/bench_coll 16384 $G pipelined
  row 2 "1 GiB all-reduce, 16,384 H100s, pipelined" "< 1 s" "$(result "build $(awk '{print $6}' "$tmp/out") s")"
fi
if want 3; then
  measure $bin/bench_coll 512 $G pipelined dgx-h100-superpod auto alltoall
  row 3 "all-to-all 1 GiB, 512 GPUs, with contention (pipelined)" "< 1 s" "$(result "sim $(awk '{print $5}' "$tmp/out") ms")"
fi
if want 4; then
  measure $bin/bench_coll 4096 $G pipelined dgx-h100-superpod auto alltoall
  row 4 "all-to-all 1 GiB, 4,096 GPUs, with contention (pipelined)" "< 30 s, < 4 GB" "$(result "sim $(awk '{print $5}' "$tmp/out") ms")"
fi
gpt() { # N detail: GPT-3 175B (tp=8, pp=8, dp=N/64) on the N-GPU fat-tree of workload.sh
  experiments/bench/fattree.sh "$1" > "$tmp/ft$1.xml"
  measure $bin/trainsim run --platform "$tmp/ft$1.xml" --model gpt3-175b --gpu h100 --seq 2048 \
    --layout tp=8,pp=8,dp=$(($1 / 64)),gbs=1536,sp=on,recompute=selective,zero=1 --detail "$2"
}
if want 5; then
  gpt 4096 replicas
  row 5 "GPT-3 175B iteration, --detail replicas, 4,096 GPUs" "< 30 s" "$(result "iteration $(awk '/^iteration/ {print $2}' "$tmp/out") s")"
fi
if want 6; then
  gpt 16384 replicas
  row 6 "GPT-3 175B iteration, --detail replicas, 16,384 GPUs" "< 120 s" "$(result "iteration $(awk '/^iteration/ {print $2}' "$tmp/out") s")"
fi
if want 7; then
  gpt 1024 full
  row 7 "GPT-3 175B iteration, --detail full, 1,024 GPUs" "< 60 s, < 4 GB" "$(result "iteration $(awk '/^iteration/ {print $2}' "$tmp/out") s $(grep -o 'over [0-9,]* ops' "$tmp/err" | head -1)")"
fi
if want 8; then
  measure $bin/trainsim search --cluster dgx-a100-superpod --gpus 1024 --model gpt3-175b --gbs 1536 --seq 2048 \
    --space all --top 10
  row 8 "layout search, 175B on 1,024 A100s, --space all --top 10" "< 20 s" "$(result)"
fi
if want 9; then
  measure $bin/trainsim search --cluster perlmutter --gpus 1024 --model megatron-gpt-76b --gbs 1024 --seq 2048 \
    --space 4d --top 10 --fidelity estimate --jobs 1
  row 9 "analytical estimates/s/core, AxoNN 4D space (76B, 1,024; --jobs 1)" ">= 100,000/s" \
    "$(grep -o '([0-9]* estimates/s)' "$tmp/err" | tr -d '()') ($(result))"
fi
if want 10; then
  measure $bin/bench_coll 75264 1048576 analytical frontier
  row 10 "Frontier 9,408 nodes (75,264 GCDs): build + 1 MiB, analytical" "< 10 s" "$(result "build $(awk '{print $6}' "$tmp/out") s")"
fi
