#!/bin/sh
# Accuracy of trainsim's collective predictions on real GPU logs
# (../shared/data/nccl-tests), uncalibrated and calibrated (docs/validation.md):
#  1. dgx-h100-superpod (1 node, 8 H100, ring): calibrate from the all_reduce log's
#     sizes up to 64 MB; predict that log's sizes above 64 MB and the all_gather log.
#  2. polaris (2 nodes x 4 A100): calibrate from the all_reduce log; predict alltoall.
# Prints median and p90 |error| of the time per prediction. A benchmark, not a test.
set -eu
cd "$(dirname "$0")/../.."
D=../shared/data/nccl-tests
[ -d "$D" ] || { echo "validate_accuracy: $D absent, skipped"; exit 0; }
T=bin/trainsim
tmp=$(mktemp -d /tmp/trainsim-accuracy.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
H100="--cluster dgx-h100-superpod --nodes 1 --algo ring"
POL="--cluster polaris --nodes 2"
$T calibrate $D/nccl_h100x8_single_node_all_reduce_ring_together.txt $H100 -e 64M -o "$tmp/h100.json" > "$tmp/h100.log"
$T calibrate $D/nccl_polaris_a100_2nodes_8gpu_all_reduce_alcf.txt $POL -o "$tmp/polaris.json" > "$tmp/polaris.log"
grep '^# cluster factors' "$tmp/h100.log" "$tmp/polaris.log" | sed 's/^[^:]*://'
printf '%-52s %8s %8s %8s %8s %6s\n' prediction "med%" "p90%" "cal med%" "cal p90%" sizes
emit() { # label, file, calibration, options...
    label=$1 file=$2 cal=$3
    shift 3
    a=$($T compare "$file" "$@" | grep '^# summary')
    b=$($T compare "$file" "$@" --calibration "$cal" | grep '^# summary')
    med() { echo "$1" | sed 's/.*median |error| \([0-9.]*\)%.*/\1/'; }
    p90() { echo "$1" | sed 's/.*p90 |error| \([0-9.]*\)%.*/\1/'; }
    n=$(echo "$b" | sed 's/.*over \([0-9]*\) sizes.*/\1/')
    printf '%-52s %8s %8s %8s %8s %6s\n' "$label" "$(med "$a")" "$(p90 "$a")" "$(med "$b")" "$(p90 "$b")" "$n"
}
emit "h100 all_reduce, fitted sizes (<= 64 MB)" $D/nccl_h100x8_single_node_all_reduce_ring_together.txt \
    "$tmp/h100.json" $H100 -e 64M
emit "h100 all_reduce, held-out sizes (> 64 MB)" $D/nccl_h100x8_single_node_all_reduce_ring_together.txt \
    "$tmp/h100.json" $H100 -b 65M
emit "h100 all_gather (from the all_reduce calibration)" $D/nccl_h100x8_single_node_all_gather_ring_together.txt \
    "$tmp/h100.json" $H100
emit "polaris all_reduce, fitted sizes" $D/nccl_polaris_a100_2nodes_8gpu_all_reduce_alcf.txt "$tmp/polaris.json" $POL
emit "polaris alltoall (from the all_reduce calibration)" $D/nccl_polaris_a100_2nodes_8gpu_alltoall_alcf.txt \
    "$tmp/polaris.json" $POL
