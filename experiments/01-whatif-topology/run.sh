#!/usr/bin/env bash
# Study 01, what-if topology: GPT-3 175B with one fixed layout on 1,024 GPUs of several fabrics
# (DGX H100 fat-tree 1:1/2:1, rails on/off, DGX H100 nodes on dragonflies, Frontier GCDs);
# writes results.csv and plot.svg beside this script. About 2 minutes on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
make -s bin/trainsim
# every DP collective of every replica is simulated (--detail replicas): the DP rings of the
# 64 model-parallel ranks then share the fabric, which is what oversubscription changes
layout=tp=8,pp=8,dp=16,mbs=1,gbs=1536,sp=on,recompute=selective,zero=1
out=$here/results.csv
echo "cluster,gpu,iteration_s,tflops_per_gpu,mfu,compute_s,tp_s,pp_s,dp_s,bubble_s" > "$out"
for c in dgx-h100-superpod:128 $here/superpod-ft2-rails.json $here/superpod-ft1-norails.json \
         $here/superpod-ft2-norails.json $here/h100-dragonfly.json $here/h100-dragonfly-4g.json frontier:128; do
  name=$(basename "$c" .json); name=${name%%:*}
  bin/trainsim run --cluster "$c" --model gpt3-175b --seq 2048 --layout "$layout" --detail replicas > /tmp/s01.$$ 
  awk -v n="$name" '
    /^gpus/ { gpu = $4 }
    /^iteration/ { it = $2 }
    /^throughput/ { tf = $4; mfu = $11; sub("%", "", mfu); sub(",", "", mfu) }
    /^time per rank/ { for (i = 1; i <= NF; i++) { v = $(i + 1); sub(",", "", v)
        if ($i == "compute") c = v; if ($i == "tp") t = v; if ($i == "pp") p = v; if ($i == "dp") d = v; if ($i == "bubble") b = v } }
    END { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", n, gpu, it, tf, mfu, c, t, p, d, b }' /tmp/s01.$$ >> "$out"
  rm -f /tmp/s01.$$
done
column -s, -t "$out"
awk -F, -v label=1 -v cols=6,7,8,9,10 -v unit="seconds per iteration (mean rank: compute, exposed TP, PP, DP, bubble)" \
  -v title="GPT-3 175B, $layout, 1,024 GPUs" -f experiments/common/bars.awk "$out" > "$here/plot.svg"
