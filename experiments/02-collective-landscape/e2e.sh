#!/usr/bin/env bash
# Study 02, end to end (MCR-DL's 31% question): one training iteration of two jobs on 64 H100s
# (8 DGX H100 nodes of dgx-h100-superpod) under the automatic (NCCL-like) selection and under
# --tuning tuning.csv (this study's table), every collective a real op (--detail full), at the
# analytical fidelity and on SimGrid (pipelined). Also checks that the table reads back: `trainsim
# coll --tuning tuning.csv` reproduces best.csv's algorithm and time in every cell up to 512 GPUs.
# Writes e2e.csv and readback.csv. About 30 s on 2 cores (FIDELITIES=analytical: seconds).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
make -s bin/trainsim
FIDELITIES=${FIDELITIES:-analytical pipelined}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# read-back: the table's choice and time per cell equal best.csv's
echo "coll,gpus,size,best,best_time_us,table_choice,table_time_us" > "$here/readback.csv"
for n in 8 64 512; do
  for op in all_reduce all_gather reduce_scatter alltoall broadcast; do
    bin/trainsim coll --cluster dgx-h100-superpod --nodes $(( n / 8 )) --gpus $n --op $op -b 8 -e 8G -f 32 \
      --tuning "$here/tuning.csv" --fidelity analytical --csv "$tmp/c.csv" > /dev/null
    awk -F, -v best="$here/best.csv" 'BEGIN { while ((getline l < best) > 0) { split(l, f, ","); b[f[1] "," f[2] "," f[3]] = f[4] ":" f[5] "," f[6] } }
      NR > 1 && $3 > 0 { k = $1 "," $2 "," $3; if (k in b) printf "%s,%s,%s:%s,%.4g\n", k, b[k], $11, $12, $8 }' "$tmp/c.csv" >> "$here/readback.csv"
  done
done
awk -F, 'NR > 1 { n++; split($4, a, ":"); if ($4 == $6 && ($5 - $7) ^ 2 <= (1e-3 * $5) ^ 2) ok++ }
  END { printf "read-back: %d of %d cells (8-512 GPUs) pick best.csv'"'"'s algorithm and time\n", ok, n }' "$here/readback.csv"

# the jobs: a Mixtral MoE (expert parallelism: all-to-all, as MCR-DL's DS-MoE) and a dense model
# whose ZeRO-3 all-gathers and reduce-scatters span the 8 nodes
jobs=(
  "moe mixtral-8x7b tp=1,pp=2,ep=8,dp=32,mbs=1,gbs=128,zero=1,recompute=full"
  "zero3 llama3-8b tp=1,pp=1,dp=64,mbs=1,gbs=128,zero=3,recompute=full"
)
echo "job,model,layout (; for ,),fidelity,policy,iteration_s,exposed_comm_s,wall_s" > "$here/e2e.csv"
for j in "${jobs[@]}"; do
  read -r name model layout <<< "$j"
  for fid in $FIDELITIES; do
    for pol in auto tuning; do
      extra=(); [ "$pol" = tuning ] && extra=(--tuning "$here/tuning.csv")
      t0=$(date +%s.%N)
      bin/trainsim run --model "$model" --layout "$layout" --seq 4096 --cluster dgx-h100-superpod --nodes 8 \
        --detail full --fidelity "$fid" "${extra[@]}" > "$tmp/run.txt"
      wall=$(echo "$(date +%s.%N) - $t0" | bc)
      awk -v j="$name" -v m="$model" -v l="$layout" -v f="$fid" -v p="$pol" -v w="$wall" '
        /^iteration/ { it = $2 }
        /^time per rank/ { gsub(",", ""); for (i = 1; i <= NF; i++) if ($i == "tp" || $i == "cp" || $i == "ep" || $i == "pp" || $i == "dp") c += $(i + 1) }
        END { gsub(",", ";", l); printf "%s,%s,%s,%s,%s,%s,%.4f,%.1f\n", j, m, l, f, p, it, c, w }' "$tmp/run.txt" >> "$here/e2e.csv"
      [ "$fid" = analytical ] && sed -n '/^collectives/,$p' "$tmp/run.txt" > "$here/e2e_${name}_${pol}.txt"
    done
  done
done
# gain = auto / tuning - 1 per job and fidelity
awk -F, 'NR > 1 { k = $1 "," $4; t[k, $5] = $6; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
  END { print "job,fidelity,auto_s,tuning_s,gain"; for (i = 1; i <= n; i++) { k = order[i]
    printf "%s,%s,%s,%.2f%%\n", k, t[k, "auto"], t[k, "tuning"], 100 * (t[k, "auto"] / t[k, "tuning"] - 1) } }' "$here/e2e.csv" | column -s, -t
