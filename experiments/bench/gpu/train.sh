#!/usr/bin/env bash
# One-GPU training steps (train_step.py) for the accuracy table's 'measured here' rows:
# Llama 3 8B and Llama 2 7B blocks, torchtitan's eager FSDP2 recipe. Writes $OUT/train.csv.
set -u
cd "$(dirname "$0")/../../.."
out=${OUT:-build/gpu}
mkdir -p "$out"
echo "model,layers,seq,mbs,ckpt,mode,step_s,fwd_s,bwd_s,opt_s,peak_gib,tflops,steps" > "$out/train.csv"
while read -r cfg; do
    case "$cfg" in ''|'#'*) continue;; esac
    PYTHONUNBUFFERED=1 timeout 150 python3 experiments/bench/gpu/train_step.py $cfg >>"$out/train.csv" 2>>"$out/train.err" \
        || echo "# $cfg: exit $?" >>"$out/train.csv"
done < "${CONFIGS:-experiments/bench/gpu/train_configs.txt}"
cat "$out/train.csv"
