#!/usr/bin/env bash
# Benchmarks. 1) Engine throughput: ring all-reduce on N-host crossbars, step
# and pipelined. 2) A 1 GiB all-reduce (automatic algorithm) on N GPUs of the
# shipped dgx-h100-superpod (N/8 nodes, rail-optimised fat-tree, built
# in-process) at each fidelity: platform build time, wall time of the
# simulation (or of the closed form), and the process's peak memory. step is
# skipped above 512 GPUs (a ring's 2N(N-1) flows: 33.5 million at 4,096).
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s bin/bench_ring bin/bench_coll
echo "== engine throughput, crossbar"
printf "%6s %10s %12s %12s %10s %10s %8s %8s %12s %8s\n" ranks fidelity bytes sim_ms rel_err flows load_s wall_s flows/s rss_MB
for n in 8 64 512; do
  for f in step pipelined; do bin/bench_ring $n 1073741824 $f; done
done
for n in 4096; do bin/bench_ring $n 1073741824 pipelined; done
echo "== 1 GiB all-reduce, dgx-h100-superpod"
printf "%6s %11s %14s %12s %10s %8s %8s %8s\n" gpus fidelity algorithm bytes sim_ms build_s wall_s rss_MB
for n in 8 64 512 4096 16384; do
  for f in step pipelined analytical; do
    if [ "$f" = step ] && [ "$n" -gt 512 ]; then continue; fi
    bin/bench_coll $n 1073741824 $f
  done
done
echo "== platform build (in-process), load time and memory"
experiments/bench/platforms.sh
echo "== all-gather sweep in one process, 2,048 Frontier GCDs"
experiments/bench/sweep.sh
