#!/usr/bin/env bash
# Engine throughput: ring all-reduce on N-host crossbars, step and pipelined.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s bin/bench_ring
printf "%6s %10s %12s %12s %10s %10s %8s %8s %12s %8s\n" ranks fidelity bytes sim_ms rel_err flows load_s wall_s flows/s rss_MB
for n in 8 64 512; do
  for f in step pipelined; do bin/bench_ring $n 1073741824 $f; done
done
for n in 4096; do bin/bench_ring $n 1073741824 pipelined; done
