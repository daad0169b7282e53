#!/bin/sh
# Study 6: communication characteristics of transformer training (volume and message sizes per
# parallelism kind) as model size and sequence length grow, from the op graph trainsim builds.
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd); ts="$root/bin/trainsim"
cd "$here"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "config,kind,calls_per_gpu,bytes_per_gpu,bytes_share,p2p_per_gpu,small_share,small_p2p_share,mean_bytes" > "$tmp/sum.csv"
echo "config,kind,size_bin_bytes,calls_per_gpu" > "$tmp/hist.csv"
one() { # config-name model seq layout
  "$ts" run --model $2 --gpu h100 --fidelity analytical --detail full --seq $3 --layout $4 \
    --opgraph "$tmp/og.json" > "$tmp/out.txt" || { echo "$1: $(sed -n 4p "$tmp/out.txt")" >&2; return 0; }
  awk -v cfg="$1" -v sum="$tmp/sum.csv" -v hist="$tmp/hist.csv" -f analyze.awk "$tmp/og.json"
  it=$(sed -n 's/^iteration *\([0-9.]*\) s/\1/p' "$tmp/out.txt"); echo "$1,$2,$3,\"$4\",$it" >> "$tmp/cfg.csv"
}
echo "config,model,seq,layout,iteration_s" > "$tmp/cfg.csv"
dense=tp=2,pp=2,cp=2,dp=2,mbs=1,gbs=8,sp=on,zero=1,recompute=selective
# model size at sequence 4096 (16 GPUs: tp=2 pp=2 cp=2 dp=2, 4 micro-batches)
for m in 1.7b 3.6b 7.5b 18b; do one gpt-$m-s4096 megatron-gpt-$m 4096 $dense; done
# sequence length on the 7.5B
for s in 2048 8192 16384 32768; do one gpt-7.5b-s$s megatron-gpt-7.5b $s $dense; done
# short sequences on the 1.7B (the small-message end)
for s in 512 1024; do one gpt-1.7b-s$s megatron-gpt-1.7b $s $dense; done
# MoE: expert parallelism (Mixtral 8x7B, 16 GPUs: tp=2 pp=2 ep=4 dp=4)
for s in 2048 4096; do one mixtral-s$s mixtral-8x7b $s tp=2,pp=2,ep=4,dp=4,mbs=1,gbs=8,sp=on,zero=1,recompute=selective; done
{ head -1 "$tmp/sum.csv"; tail -n +2 "$tmp/sum.csv" | sort -t, -k1,1V -k2,2; } > summary.csv
{ head -1 "$tmp/hist.csv"; tail -n +2 "$tmp/hist.csv" | sort -t, -k1,1V -k2,2 -k3,3n; } > sizes.csv
cp "$tmp/cfg.csv" configs.csv
# plots: message-size histogram of the 7.5B at 4096 and of Mixtral at 4096, one line per kind
for c in gpt-7.5b-s4096 mixtral-s4096; do
  awk -F, -v c=$c 'NR == 1 || $1 == c' sizes.csv | awk -F, -v x=3 -v y=4 -v s=2 -v logx=1 -v logy=1 \
    -v title="$c: calls per GPU per iteration by message size" -v xl="message size (bytes, power-of-two bin)" \
    -v yl="calls per GPU" -f ../07-pipeline-schedules/plot.awk > sizes_$c.svg
done
column -s, -t summary.csv
