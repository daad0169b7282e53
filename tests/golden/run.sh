#!/bin/sh
# Replay every golden of tests/golden/LIST (CI regression mode on the sample
# traces). Usage: tests/golden/run.sh [--write-golden]. Exit 1 when any moved.
cd "$(dirname "$0")/../.." || exit 2
DATA=../shared/data/traces
if [ ! -d "$DATA" ]; then
    # CI has ../shared beside the checkout: its absence there is a broken
    # setup, not a reason to pass with nothing replayed.
    if [ -n "${CI:-}" ]; then
        echo "tests/golden/run.sh: $DATA absent under CI: the replay goldens cannot run (FAILED)"
        exit 1
    fi
    echo "tests/golden/run.sh: $DATA absent, replay goldens skipped"
    exit 0
fi
mkdir -p build/golden-data
[ -d build/golden-data/dlrm_kineto ] || tar xzf "$DATA/kineto/param_dlrm_kineto_8ranks.tar.gz" -C build/golden-data
status=0
total=$(grep -v '^#' tests/golden/LIST | grep -c .)
grep -v '^#' tests/golden/LIST | while read -r name platform traces; do
    [ -n "$name" ] || continue
    args=""
    for t in $traces; do
        case "$t" in @*) t="$DATA/${t#@}" ;; esac
        args="$args --trace $t"
    done
    printf '%-20s ' "$name"
    bin/trainsim replay --platform "tests/golden/$platform" $args --expect "tests/golden/$name.json" "$@" \
        > "build/golden-data/$name.out" 2>&1
    rc=$?
    tail -n 1 "build/golden-data/$name.out"
    if [ $rc -ne 0 ]; then cat "build/golden-data/$name.out"; exit 1; fi
done || status=1
if [ $status -eq 0 ]; then echo "golden: $total passed, 0 failed"; else echo "golden: 0 passed, 1 failed"; fi
exit $status
