#!/usr/bin/env bash
# Study 03, hierarchical partitioning on Frontier: a 20B GPT (GPT-NeoX-20B) on 48 to 384 MI250X
# GCDs, ZeRO-3 against what the layout keys can express as partitioning inside a node
# (tensor parallelism over the GCD pair / the node, ZeRO-3 over the rest) and the no-gather
# bound (ZeRO-2: weights replicated). Weak scaling: 4 sequences of 2,048 tokens per
# GCD per iteration (the same global batch for every variant at one size), full recompute. Every rank and DP collective simulated (--detail replicas).
# Writes results.csv (with per-variant scaling efficiency from 48 GCDs) and plot.svg. About 3 minutes on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
make -s bin/trainsim
out=$here/results.csv
echo "variant,gcds,layout,fits,mem_gib,iteration_s,tflops_per_gcd,mfu,compute_s,tp_s,dp_s,idle_s,scaling_eff" > "$out"
for v in "zero3:1:3" "zero3-tp2:2:3" "zero3-tp8:8:3" "zero2:1:2"; do
  IFS=: read -r name tp z <<< "$v"
  base=
  for n in 48 96 192 384; do
    # tp=8 with ZeRO-3 on 384 GCDs simulates 32 micro-batches x 44 layers of gathers on 384
    # ranks: more than 5 minutes here, so that cell is left out
    [ "$tp" = 8 ] && [ "$n" = 384 ] && continue
    dp=$((n / tp))
    lay=tp=$tp,dp=$dp,mbs=1,gbs=$((n * 4)),zero=$z,recompute=full
    bin/trainsim run --cluster frontier --nodes $((n / 8)) --model gpt-neox-20b --seq 2048 --layout "$lay" \
      --detail replicas > /tmp/s03.$$ || true
    line=$(awk -v n="$name" -v g="$n" -v l="$lay" '
      /^memory per GPU/ { mem = $4; fits = ($0 ~ /DOES NOT FIT/) ? "no" : "yes" }
      /^iteration/ { it = $2 }
      /^throughput/ { tf = $4; mfu = $11; sub("%", "", mfu) }
      /^time per rank/ { for (i = 1; i <= NF; i++) { x = $(i + 1); sub(",", "", x)
          if ($i == "compute") c = x; if ($i == "tp") t = x; if ($i == "dp") d = x; if ($i == "bubble") b = x } }
      END { gsub(",", " ", l); printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s", n, g, l, fits, mem, it, tf, mfu, c, t, d, b }' /tmp/s03.$$)
    tf=$(echo "$line" | awk -F, '{print $7}')
    [ -z "$base" ] && base=$tf
    eff=$(awk -v a="$tf" -v b="$base" 'BEGIN { if (a != "" && b != "") printf "%.3f", a / b }')
    echo "$line,$eff" >> "$out"
  done
done
rm -f /tmp/s03.$$
column -s, -t "$out"
# plot: TFLOP/s per GCD, one bar per variant and size
{ echo "run,tflops_per_gcd"; awk -F, 'NR > 1 && $7 != "" { print $1 " " $2 " GCDs," $7 }' "$out"; } > "$here/plot.csv"
awk -F, -v label=1 -v cols=2 -v title="GPT-NeoX-20B on Frontier GCDs, weak scaling (4 sequences per GCD)" \
  -v unit="TFLOP/s per GCD (with recompute)" -f experiments/common/bars.awk "$here/plot.csv" > "$here/plot.svg"
rm -f "$here/plot.csv"
