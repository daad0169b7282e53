#!/usr/bin/env bash
# The clock a GPU holds under sustained GEMM load (as in training) against the
# short-burst timing of run.sh: the same transformer GEMMs timed cold and after
# SUSTAIN seconds back to back, with nvidia-smi sampling SM clock and power every
# 100 ms meanwhile. Writes under $OUT (or build/gpu).
set -u
cd "$(dirname "$0")/../../.."
out=${OUT:-build/gpu}
mkdir -p "$out"
cuda=${CUDA_HOME:-/usr/local/cuda}
bin=build/gpu-bin/trainsim-gemm
if gcc -std=c11 -O2 -I"$cuda/include" -o /tmp/trainsim-gemm validate/bench_gemm.c -L"$cuda/lib64" \
      -Wl,-rpath,"$cuda/lib64" -lcublasLt -lcudart -lm 2>"$out/build.log"; then bin=/tmp/trainsim-gemm; fi
grep -v '^#' experiments/bench/gpu/shapes.csv | sed -n '1p;3p;7p;9p;13p;19p;20p' > /tmp/sus_shapes.csv
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 100 > "$out/smi_samples.csv" 2>&1 &
smi=$!
$bin --dtype bf16,fp8 --shapes /tmp/sus_shapes.csv -o "$out/gemm_cold.csv"
$bin --dtype bf16,fp8 --shapes /tmp/sus_shapes.csv --sustain ${SUSTAIN:-4} -o "$out/gemm_sustained.csv"
kill $smi
paste -d, "$out/gemm_cold.csv" "$out/gemm_sustained.csv" | grep -v '^#'
awk -F', ' '{c[$2]++} END {for (k in c) print k, c[k]}' "$out/smi_samples.csv" | sort -n | tail -15
