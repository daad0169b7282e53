#!/bin/sh
# Study 5: best AxoNN 4D layout vs best Megatron 3D layout found by trainsim search for a ~80B
# GPT (Megatron GPT 76B) on 1,024 Perlmutter GPUs. Both spaces whole, each ranked by its
# closed-form estimate, the top K costed on the op graph (and on SimGrid).
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd); ts="$root/bin/trainsim"
cd "$root"   # search resolves model names under configs/models/ of the working directory
o="$here"; rm -f "$o/timing.log"
common="--cluster perlmutter --gpus 1024 --model megatron-gpt-76b --gbs 1024 --seq 2048"
# 3D, the whole space: top 5 on the analytical critical path, then on SimGrid (pipelined)
"$ts" search $common --top 5 --fidelity analytical > "$o/3d_all.txt" 2>> "$o/timing.log"
"$ts" search $common --top 5 --fidelity pipelined > "$o/3d_all_simgrid.txt" 2>> "$o/timing.log"
# 4D, the whole space (every gx, gy, gz, dp with product 1,024, mbs 1-8, ZeRO 0-2, recompute
# none/selective/full, AxoNN's overlap on): ranked by the estimate, the top 10 costed on the
# critical path of their op graphs, then the top 5 on SimGrid (pipelined)
"$ts" search $common --top 10 --fidelity analytical --space 4d \
  --csv "$o/4d.csv" --plot "$o/4d.svg" > "$o/4d.txt" 2>> "$o/timing.log"
"$ts" search $common --top 5 --fidelity pipelined --space 4d > "$o/4d_simgrid.txt" 2>> "$o/timing.log"
# the restricted space of the previous version of this study (mbs=1, ZeRO-1, recompute <= 1,
# gx, gy, gz <= 16), now with overlap and the estimate
"$ts" search $common --top 5 --fidelity analytical --space 4d \
  --constraint 'mbs=1,zero=1,recompute<=1,gx<=16,gy<=16,gz<=16' > "$o/4d_restricted.txt" 2>> "$o/timing.log"
# the best 4D layout without AxoNN's overlap (every grid collective where its result is needed)
best4d=$(awk '$1 == "1" { print $NF }' "$o/4d.txt")
"$ts" search $common --fidelity analytical --explain "$(echo "$best4d" | sed 's/overlap=on/overlap=off/')" \
  > "$o/4d_best_overlap_off.txt" 2>> "$o/timing.log"
"$ts" search $common --fidelity analytical --explain "$best4d" > "$o/4d_best_overlap_on.txt" 2>> "$o/timing.log"
# the previous defaults put back one at a time, to say which change of the models moved what:
# (a) the hierarchical all-reduce, chosen automatically before (now only when forced)
"$ts" search $common --top 3 --fidelity analytical --space 4d --coll allreduce=hierarchical \
  > "$o/4d_hier.txt" 2>> "$o/timing.log"
"$ts" search $common --fidelity pipelined --explain "$best4d" --coll allreduce=hierarchical \
  > "$o/4d_best_simgrid_hier.txt" 2>> "$o/timing.log"
# (b) minimal routing inside a dragonfly group (one 25 GB/s link between two switches)
pm=$(mktemp --suffix=.json); trap 'rm -f "$pm"' EXIT
sed 's/"routing": "adaptive"/"routing": "minimal"/' configs/clusters/perlmutter.json > "$pm"
grep -q '"routing": "minimal"' "$pm" || { echo "run.sh: perlmutter.json has no adaptive routing key" >&2; exit 1; }
"$ts" search --cluster "$pm" --gpus 1024 --model megatron-gpt-76b --gbs 1024 --seq 2048 --top 5 \
  --fidelity pipelined > "$o/3d_all_simgrid_minimal.txt" 2>> "$o/timing.log"
# 64 MiB all-reduce on 2, 4 and 8 nodes (one switch holds 4): closed form vs SimGrid
for g in 8 16 32; do for f in analytical pipelined; do
  printf '%2d GPUs %-10s ' $g $f
  "$ts" coll --platform perlmutter:8 --gpus $g --op all_reduce --fidelity $f -b 64M -e 64M | awk '$1 ~ /^[0-9]+$/'
done; done > "$o/coll_allreduce.txt"
# one table: the top 5 of each run (time, TFLOP/s per GPU counting recompute, % of the A100's
# 312 TFLOP/s bf16 peak, MFU, memory)
cd "$here"
echo "run,rank,iteration_s,tflops_per_gpu,pct_of_peak,mfu_pct,mem_gib,layout" > best.csv
for r in 3d_all 3d_all_simgrid 4d 4d_simgrid 4d_restricted; do
  awk -v r=$r '$1 ~ /^[0-9]+$/ && $1 <= 5 && NF >= 8 { printf "%s,%d,%s,%s,%.1f,%s,%s,\"%s\"\n", r, $1, $2, $4, 100 * $4 / 312, $5, $6, $NF }' $r.txt >> best.csv
done
# plot: iteration time of the top 5 per run
awk -F, -v x=2 -v y=3 -v s=1 -v title="GPT 76B on 1,024 Perlmutter A100s: top 5 layouts per search" \
  -v xl="rank in its search" -v yl="iteration (s)" -f ../07-pipeline-schedules/plot.awk best.csv > best.svg
column -s, -t best.csv
