#!/bin/sh
# Megatron-LM 2021 Table 1 (../shared/data/training/megatron_lm_2021_a100.md):
# trainsim's TFLOP/s per GPU against the published figure, per row, and the MAPE.
# A benchmark printout while the accuracy report (make accuracy) is built.
# usage: training_a100.sh [FIDELITY (default estimate)] [extra trainsim run options]
set -eu
cd "$(dirname "$0")/../.."
fid=${1:-estimate}
[ $# -gt 0 ] && shift
T=bin/trainsim
printf '%-6s %-30s %9s %9s %8s\n' model layout published predicted error
# model, layout of Megatron-LM examples/sc21/run_table_1.sh (micro-batch, interleaving,
# --DDP-impl torch on the pp=1 rows), gpus, published (as configs/measurements/training/)
while read -r m lay n pub; do
    tf=$($T run --model megatron-gpt-$m --cluster dgx-a100-superpod --gpus "$n" --seq 2048 --dtype fp16 \
        --stack megatron-2021 --fidelity "$fid" --layout "$lay,recompute=full" "$@" |
        sed -n 's/.* \([0-9.]*\) TFLOP\/s per GPU.*/\1/p')
    echo "$m $lay $pub $tf"
done <<ROWS | awk '{e = ($4 - $3) / $3 * 100; s += (e < 0 ? -e : e); n++;
    printf "%-6s %-30s %9.1f %9.1f %+7.1f%%\n", $1, substr($2, 1, 30), $3, $4, e}
    END {printf "MAPE %.1f%% over %d rows\n", s / n, n}'
1.7b tp=1,pp=1,dp=32,mbs=16,gbs=512,overlap_grad=on,bucket=13107200 32 137
3.6b tp=2,pp=1,dp=32,mbs=16,gbs=512,overlap_grad=on,bucket=13107200 64 138
7.5b tp=4,pp=1,dp=32,mbs=16,gbs=512,overlap_grad=on,bucket=13107200 128 142
18b tp=8,pp=1,dp=32,mbs=8,gbs=1024,overlap_grad=on,bucket=13107200 256 135
39b tp=8,pp=2,dp=32,mbs=4,gbs=1536,overlap_grad=off 512 138
76b tp=8,pp=4,vpp=3,dp=32,mbs=2,gbs=1792,overlap_grad=off 1024 140
145b tp=8,pp=8,vpp=2,dp=24,mbs=2,gbs=2304,overlap_grad=off 1536 148
310b tp=8,pp=16,vpp=2,dp=15,mbs=1,gbs=2160,overlap_grad=off 1920 155
530b tp=8,pp=35,vpp=3,dp=9,mbs=1,gbs=2520,overlap_grad=off 2520 163
1t tp=8,pp=64,dp=6,mbs=1,gbs=3072,overlap_grad=off 3072 163
ROWS
