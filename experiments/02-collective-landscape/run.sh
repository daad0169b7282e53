#!/usr/bin/env bash
# Study 02, collective landscape (MCR-DL's question: does one algorithm win everywhere?):
# every algorithm x protocol of five collectives on 8 to 4,096 H100 GPUs of dgx-h100-superpod,
# 8 B to 8 GB (factor 32; at 4,096 GPUs Simple protocol only and no all-to-all), closed form (--fidelity analytical: no contention, which on this
# rail-optimised 1:1 fat-tree is what the flow simulation gives for these schedules).
# Writes all.csv (every run), tuning.csv (the best algorithm per range of group sizes and bytes,
# the format of --tuning) and best.csv (best,
# its margin over the runner-up algorithm, the automatic NCCL-like choice and the gain over it),
# and plot.svg. A few minutes on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
make -s bin/trainsim
GPUS=${GPUS:-8 64 512 4096}
declare -A algos=(
  [all_reduce]="ring tree rhd rabenseifner hierarchical nvls nvlstree"
  [all_gather]="ring rhd bruck pat hierarchical hier-rd nvls"
  [reduce_scatter]="ring rhd pat hierarchical hier-rd nvls"
  [alltoall]="bruck pairwise direct"
  [broadcast]="chain tree")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
all=$here/all.csv
echo "op,gpus,size,time_us,algorithm,protocol,forced" > "$all"
for n in $GPUS; do
  nodes=$(( n < 8 ? 1 : n / 8 ))
  for op in all_reduce all_gather reduce_scatter alltoall broadcast; do
    for a in auto ${algos[$op]}; do
      # 4,096 GPUs: Simple protocol only (each closed-form sweep there walks the schedule of
      # 4,096 ranks, ~20 s) and no all-to-all (n^2 = 16.8M transfers per size: minutes)
      protos="simple ll128 ll"; [ "$n" -ge 4096 ] && protos=simple
      [ "$n" -ge 4096 ] && [ "$op" = alltoall ] && continue
      for p in $protos; do
        if [ "$a" = auto ]; then spec=(); [ "$p" = simple ] || continue; else spec=(--algo "$a:$p"); fi
        # NCCL runs NVLS, NVLS+tree, PAT and send/recv (direct, pairwise) with Simple only: their
        # LL/LL128 rows are 0 in models/coll/coll_params.c ("the library does not run it"), and a
        # forced LL/LL128 run of them is costed with neither the protocol's bandwidth fraction nor
        # its base latency (nvls:ll beat nvls:simple by 35% at 8 GB): not a real choice, skipped
        case "$a:$p" in nvls:ll*|nvlstree:ll*|pat:ll*|direct:ll*|pairwise:ll*) continue ;; esac
        # an algorithm the topology does not allow (NVLS across nodes, ...) fails: skip it
        if bin/trainsim coll --cluster dgx-h100-superpod --nodes "$nodes" --gpus "$n" --op "$op" -b 8 -e 8G -f 32 \
             "${spec[@]}" --fidelity analytical --csv "$tmp/c.csv" > /dev/null 2> "$tmp/err"; then
          awk -F, -v f="$([ "$a" = auto ] && echo auto || echo forced)" 'NR > 1 { print $1 "," $2 "," $3 "," $8 "," $11 "," $12 "," f }' "$tmp/c.csv" >> "$all"
        fi
      done
    done
  done
done
# per cell: best forced algorithm:protocol, best time of any other algorithm (margin), auto's time
tail -n +2 "$all" | awk -F, '$3 > 0' | sort -t, -k1,1 -k2,2n -k3,3n -k4,4g | awk -F, '
  { key = $1 "," $2 "," $3 }
  $7 == "auto" { auto[key] = $4; autoa[key] = $5 ":" $6; next }
  !(key in best) { best[key] = $4; ba[key] = $5; bp[key] = $6; order[++nk] = key; next }
  $5 != ba[key] && !(key in second) { second[key] = $4; sa[key] = $5 }
  END {
    print "coll,gpus,size,algorithm,protocol,time_us,runner_up,margin,auto,auto_time_us,gain_over_auto" > "'"$here/best.csv"'"
    for (i = 1; i <= nk; i++) { k = order[i]
      m = (k in second) ? second[k] / best[k] - 1 : 0
      g = (k in auto) ? auto[k] / best[k] - 1 : 0
      printf "%s,%s,%s,%.4g,%s,%.4f,%s,%.4g,%.4f\n", k, ba[k], bp[k], best[k], (k in second) ? sa[k] : "-", m, autoa[k], auto[k], g > "'"$here/best.csv"'" } }'
# the tuning table `--tuning` reads back (docs/collectives.md): each measured cell covers the
# group sizes and byte counts up to the geometric midpoints to its neighbours (the first from
# 1 GPU / 0 B, the last to inf); neighbouring byte ranges with the same choice are merged
awk -F, -f "$here/tuning.awk" "$here/best.csv" > "$here/tuning.csv"
# how often each algorithm wins, per collective
awk -F, 'NR > 1 { w[$1 "," $4]++ } END { for (k in w) print k "," w[k] }' "$here/best.csv" | sort > "$here/wins.csv"
column -s, -t "$here/best.csv"
# plot: gain of the best algorithm over the automatic choice per cell (largest first)
{ echo "cell,gain_pct"; awk -F, 'NR > 1 && $11 > 0.005 { printf "%s %s GPUs %s B,%.2f\n", $1, $2, $3, 100 * $11 }' "$here/best.csv" | sort -t, -k2,2gr | head -25; } > "$tmp/gain.csv"
awk -F, -v label=1 -v cols=2 -v title="Best forced algorithm vs automatic selection: time saved (top 25 cells)" \
  -v unit="auto time / best time - 1, in %" -f experiments/common/bars.awk "$tmp/gain.csv" > "$here/plot.svg"
# end to end: two training jobs under the automatic policy and under --tuning tuning.csv
"$here/e2e.sh"
