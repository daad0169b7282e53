#!/usr/bin/env bash
# One call on a machine with an NVIDIA GPU: build trainsim-gemm there (or use a
# carried build), time GEMMs (bf16, fp8 both accumulations; squares and transformer
# shapes) and the other kernel classes (kernels.py), write everything under $OUT
# (or build/gpu). Results are committed under configs/measurements/gpu/ with the
# card, driver and library versions in their header lines.
set -u
cd "$(dirname "$0")/../../.."
out=${OUT:-build/gpu}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$out/smi.txt"
cuda=${CUDA_HOME:-/usr/local/cuda}
bin=build/gpu-bin/trainsim-gemm
if gcc -std=c11 -O2 -I"$cuda/include" -o /tmp/trainsim-gemm validate/bench_gemm.c -L"$cuda/lib64" \
      -Wl,-rpath,"$cuda/lib64" -lcublasLt -lcudart -lm 2>"$out/build.log"; then bin=/tmp/trainsim-gemm; fi
echo "trainsim-gemm: $bin"
$bin --dtype bf16,fp8 --square 1024:16384 -o "$out/gemm_square.csv"
$bin --dtype bf16,fp8 --shapes experiments/bench/gpu/shapes.csv -o "$out/gemm_shapes.csv"
$bin --dtype fp8 --fp8-fast --shapes experiments/bench/gpu/shapes.csv -o "$out/gemm_shapes_fp8fast.csv"
[ "${SKIP_KERNELS:-}" ] || PYTHONUNBUFFERED=1 python3 experiments/bench/gpu/kernels.py > "$out/kernels.csv"
[ -f "$out/kernels.csv" ] && cat "$out/kernels.csv"; cat "$out"/gemm_*.csv
