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
# model tp pp gpus gbs published
while read -r m tp pp n gbs pub; do
    dp=$((n / tp / pp))
    lay="tp=$tp,pp=$pp,dp=$dp,gbs=$gbs,mbs=1,recompute=full,sp=off"
    tf=$($T run --model megatron-gpt-$m --cluster dgx-a100-superpod --seq 2048 --dtype fp16 \
        --stack megatron-2021 --fidelity "$fid" --layout "$lay" "$@" |
        sed -n 's/.* \([0-9.]*\) TFLOP\/s per GPU.*/\1/p')
    echo "$m $lay $pub $tf"
done <<ROWS | awk '{e = ($4 - $3) / $3 * 100; s += (e < 0 ? -e : e); n++;
    printf "%-6s %-30s %9.1f %9.1f %+7.1f%%\n", $1, substr($2, 1, 30), $3, $4, e}
    END {printf "MAPE %.1f%% over %d rows\n", s / n, n}'
1.7b 1 1 32 512 137
3.6b 2 1 64 512 138
7.5b 4 1 128 512 142
18b 8 1 256 1024 135
39b 8 2 512 1536 138
76b 8 4 1024 1792 140
145b 8 8 1536 2304 148
310b 8 16 1920 2160 155
530b 8 35 2520 2520 163
1t 8 64 3072 3072 163
ROWS
