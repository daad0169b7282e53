#!/bin/sh
# Benchmark: an nccl-tests-style sweep (six sizes, one process, each size a separate SimGrid
# run on the same platform) of all-gather on 2,048 Frontier GCDs, per algorithm: wall time and
# peak memory. Guards the engine's fixed mmap threshold: without it the fifth run onwards held
# every actor's 8 MiB stack resident (168 s and 16.8 GB for ring).
set -eu
cd "$(dirname "$0")/../.."
t=$(mktemp); trap 'rm -f "$t"' EXIT
printf "%-13s %8s %10s\n" algorithm wall_s rss_MB
for a in ring hierarchical hier-rd; do
  /usr/bin/time -f "%e %M" -o "$t" bin/trainsim coll --cluster frontier:256 \
    --op all_gather -b 1M -e 1G -f 4 --algo $a --fidelity pipelined > /dev/null
  awk -v a=$a '{ printf "%-13s %8s %10.1f\n", a, $1, $2 / 1024 }' "$t"
done
