#!/usr/bin/env bash
# Study 03, hierarchical partitioning on Frontier: a 20B GPT (GPT-NeoX-20B) on 48 to 384 MI250X
# GCDs, DeepSpeed ZeRO-3 against ZeRO++ (hpZ over the node's 8 GCDs, int8 weight gathers, int4
# all-to-all gradients) and the 3-level partitioning (parameters gathered inside the GCD pair,
# gradients reduced inside the node, across nodes once per iteration), with the parts of
# ZeRO++ apart and ZeRO-2 (weights replicated, no gathers in forward and backward); the variants
# are the rows of variants.txt. Weak scaling: 4 sequences of 2,048 tokens per GCD per iteration
# (the same global batch for every variant at one size), full recompute. Every rank and DP
# collective simulated (--detail replicas). Writes results.csv (with per-variant scaling
# efficiency from 48 GCDs) and plot.svg. About 4 minutes on the shared 2-core machine; FULL=1
# adds the ZeRO++ cell at 384 GCDs (about 7 more minutes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
make -s bin/trainsim
out=$here/results.csv
echo "variant,gcds,layout,fits,mem_gib,iteration_s,tflops_per_gcd,mfu,compute_s,tp_s,dp_s,idle_s,scaling_eff" > "$out"
while IFS=: read -r name z; do
  base=
  for n in 48 96 192 384; do
    # qgZ's inter-node all-to-all on 48 nodes is 8 x 48 x 47 flows per layer and micro-batch:
    # that cell alone takes about 7 minutes here, so it runs only with FULL=1
    [ "$name" = zeropp ] && [ "$n" = 384 ] && [ "${FULL:-0}" != 1 ] && continue
    lay=tp=1,dp=$n,mbs=1,gbs=$((n * 4)),$z,recompute=full
    bin/trainsim run --cluster frontier --nodes $((n / 8)) --model gpt-neox-20b --seq 2048 --layout "$lay" --stack deepspeed \
      --detail replicas < /dev/null > /tmp/s03.$$ || true
    line=$(awk -v n="$name" -v g="$n" -v l="$lay" -f "$here/parse.awk" /tmp/s03.$$)
    tf=$(echo "$line" | awk -F, '{print $7}')
    [ -z "$base" ] && base=$tf
    eff=$(awk -v a="$tf" -v b="$base" 'BEGIN { if (a != "" && b != "") printf "%.3f", a / b }')
    echo "$line,$eff" >> "$out"
  done
done < "$here/variants.txt"
rm -f /tmp/s03.$$
column -s, -t "$out"
# plot: TFLOP/s per GCD, one bar per variant and size
{ echo "run,tflops_per_gcd"; awk -F, 'NR > 1 && $7 != "" { print $1 " " $2 " GCDs," $7 }' "$out"; } > "$here/plot.csv"
awk -F, -v label=1 -v cols=2 -v title="GPT-NeoX-20B on Frontier GCDs, weak scaling (4 sequences per GCD)" \
  -v unit="TFLOP/s per GCD (with recompute)" -f experiments/common/bars.awk "$here/plot.csv" > "$here/plot.svg"
rm -f "$here/plot.csv"
