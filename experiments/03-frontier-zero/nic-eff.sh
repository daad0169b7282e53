#!/usr/bin/env bash
# Study 03, sensitivity: how slow must the network be for the partitioning to matter? The six
# variants of run.sh at 48 GCDs (6 Frontier nodes) with NIC and switch-link bandwidth scaled by
# inter_bw_eff (a calibration file, docs/clusters.md) from 1.0 down to 0.1, i.e. 25 GB/s NICs
# delivering 25 to 2.5 GB/s (RCCL's efficiency on Slingshot is not measured in shared/data).
# Writes nic-eff.csv (run.sh's columns after inter_bw_eff) and nic-eff.svg. About 1.5 minutes on the
# shared 2-core machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
make -s bin/trainsim
out=$here/nic-eff.csv
cal=$(mktemp)
trap 'rm -f "$cal" "$cal.out" "$cal.csv"' EXIT
echo "inter_bw_eff,variant,gcds,layout,fits,mem_gib,iteration_s,tflops_per_gcd,mfu,compute_s,tp_s,dp_s,idle_s" > "$out"
n=48
for eff in 1.0 0.5 0.3 0.2 0.1; do
  echo "{\"cluster\": {\"inter_bw_eff\": $eff}}" > "$cal"
  while IFS=: read -r name z; do
    lay=tp=1,dp=$n,mbs=1,gbs=$((n * 4)),$z,recompute=full
    bin/trainsim run --cluster frontier --nodes $((n / 8)) --calibration "$cal" --model gpt-neox-20b --seq 2048 \
      --layout "$lay" --detail replicas < /dev/null > "$cal.out" || true
    echo "$eff,$(awk -v n="$name" -v g="$n" -v l="$lay" -f "$here/parse.awk" "$cal.out")" >> "$out"
  done < "$here/variants.txt"
done
column -s, -t "$out"
# plot: TFLOP/s per GCD, one bar per NIC efficiency and variant
{ echo "run,tflops_per_gcd"; awk -F, 'NR > 1 && $8 != "" { print "NIC x" $1 " " $2 "," $8 }' "$out"; } > "$cal.csv"
awk -F, -v label=1 -v cols=2 -v title="GPT-NeoX-20B on 48 Frontier GCDs, NIC bandwidth scaled (inter_bw_eff)" \
  -v unit="TFLOP/s per GCD (with recompute)" -f experiments/common/bars.awk "$cal.csv" > "$here/nic-eff.svg"
