#!/bin/sh
# Study 5: best AxoNN 4D layout vs best Megatron 3D layout found by trainsim search for a ~80B
# GPT (Megatron GPT 76B) on 1,024 Perlmutter GPUs. The 4D space is constrained (see README).
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd); ts="$root/bin/trainsim"
cd "$root"   # search resolves model names under configs/models/ of the working directory
o="$here"; rm -f "$o/timing.log"
common="--cluster perlmutter --gpus 1024 --model megatron-gpt-76b --gbs 1024 --seq 2048 --top 5"
# 3D, the whole space: top 5 on the analytical critical path, then on SimGrid (pipelined)
"$ts" search $common --fidelity analytical > "$o/3d_all.txt" 2>> "$o/timing.log"
"$ts" search $common --fidelity pipelined > "$o/3d_all_simgrid.txt" 2>> "$o/timing.log"
# 3D with the constraints of the 4D run, for a like-for-like comparison
c4='mbs=1,zero=1,recompute<=1'
"$ts" search $common --fidelity analytical --constraint "$c4" > "$o/3d_constrained.txt" 2>> "$o/timing.log"
# 4D: each layout costed from its op graph (about 0.5 s each here), so restricted to mbs=1,
# ZeRO-1, no or selective recompute, gx, gy, gz <= 16 (242 layouts)
"$ts" search $common --fidelity analytical --space 4d --constraint "$c4,gx<=16,gy<=16,gz<=16" \
  --csv "$o/4d.csv" --plot "$o/4d.svg" > "$o/4d.txt" 2>> "$o/timing.log"
# one table: the top 5 of each run (time, TFLOP/s per GPU counting recompute, % of the A100's
# 312 TFLOP/s bf16 peak, MFU, memory)
cd "$here"
echo "run,rank,iteration_s,tflops_per_gpu,pct_of_peak,mfu_pct,mem_gib,layout" > best.csv
for r in 3d_all 3d_all_simgrid 3d_constrained 4d; do
  awk -v r=$r '$1 ~ /^[0-9]+$/ && NF >= 8 { printf "%s,%d,%s,%s,%.1f,%s,%s,\"%s\"\n", r, $1, $2, $4, 100 * $4 / 312, $5, $6, $NF }' $r.txt >> best.csv
done
# plot: iteration time of the top 5 per run
awk -F, -v x=2 -v y=3 -v s=1 -v title="GPT 76B on 1,024 Perlmutter A100s: top 5 layouts per search" \
  -v xl="rank in its search" -v yl="iteration (s)" -f ../07-pipeline-schedules/plot.awk best.csv > best.svg
column -s, -t best.csv
