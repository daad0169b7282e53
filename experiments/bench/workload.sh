#!/usr/bin/env bash
# trainsim run at scale: GPT-3 175B (tp=8, pp=8, dp=N/64, gbs=1536, SP, selective
# recompute, distributed optimizer) on N-GPU fat-trees, wall time and peak RSS;
# then the accuracy cost of the reduced detail (replica 0, analytical DP and
# intra-node TP) against the full simulation on 128 and 256 GPUs of DGX nodes.
# SIZES and REPLICAS_MAX (largest size also run with --detail replicas) can be set.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s bin/trainsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lay=sp=on,recompute=selective,zero=1
printf "%7s %-9s %-8s %12s %10s %8s %8s\n" gpus fidelity detail iteration_s tflops/gpu wall_s rss_MB
for n in ${SIZES:-1024 4096 16384}; do
  experiments/bench/fattree.sh "$n" > "$tmp/ft.xml"
  for fid in pipelined analytical; do
    plat="--platform $tmp/ft.xml"
    /usr/bin/time -f "%e %M" -o "$tmp/time" bin/trainsim run $plat --model gpt3-175b --gpu h100 --seq 2048 \
      --layout tp=8,pp=8,dp=$((n / 64)),gbs=1536,$lay --fidelity $fid > "$tmp/out"
    read -r wall rss < "$tmp/time"
    it=$(awk '/^iteration/ {print $2}' "$tmp/out")
    tf=$(awk '/^throughput/ {print $4}' "$tmp/out")
    printf "%7d %-9s %-8s %12s %10s %8s %8d\n" "$n" "$fid" reduced "$it" "$tf" "$wall" $((rss / 1024))
  done
  if [ "$n" -le "${REPLICAS_MAX:-4096}" ]; then
    /usr/bin/time -f "%e %M" -o "$tmp/time" bin/trainsim run --platform "$tmp/ft.xml" --model gpt3-175b --gpu h100 \
      --seq 2048 --layout tp=8,pp=8,dp=$((n / 64)),gbs=1536,$lay --detail replicas > "$tmp/out"
    read -r wall rss < "$tmp/time"
    it=$(awk '/^iteration/ {print $2}' "$tmp/out")
    tf=$(awk '/^throughput/ {print $4}' "$tmp/out")
    printf "%7d %-9s %-8s %12s %10s %8s %8d\n" "$n" pipelined replicas "$it" "$tf" "$wall" $((rss / 1024))
  fi
done
echo
echo "accuracy of the reduced detail against the full simulation (DGX H100 nodes, pipelined):"
printf "%7s %-8s %12s %8s %8s\n" gpus detail iteration_s wall_s rss_MB
for n in 128 256; do
  experiments/bench/dgx.sh "$n" > "$tmp/dgx.xml"
  for d in full reduced; do
    /usr/bin/time -f "%e %M" -o "$tmp/time" bin/trainsim run --platform "$tmp/dgx.xml" --model gpt3-175b --gpu h100 \
      --seq 2048 --layout tp=8,pp=8,dp=$((n / 64)),gbs=$((n / 4)),$lay --detail $d \
      --net intra_lat=1e-6,inter_lat=2e-6 > "$tmp/out"
    read -r wall rss < "$tmp/time"
    printf "%7d %-8s %12s %8s %8d\n" "$n" "$d" "$(awk '/^iteration/ {print $2}' "$tmp/out")" "$wall" $((rss / 1024))
  done
done
