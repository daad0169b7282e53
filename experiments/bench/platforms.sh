#!/usr/bin/env bash
# Platform build time and peak memory, in-process (S4U), at 1k nodes and full size.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s bin/bench_platform
printf "%-26s %8s %9s %9s %9s\n" cluster gpus links load_s rss_MB
for c in dgx-h100-superpod:128 dgx-h100-superpod:1024 dgx-a100-superpod:140 perlmutter:1024 perlmutter \
         polaris frontier:1024 frontier; do
  bin/bench_platform "$c"
done
