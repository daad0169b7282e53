#!/bin/sh
# The validation loop on CPUs (make validate-cpu, run by make check): measure
# with trainsim-bench (mpi and schedule backends, 2 ranks), calibrate the
# one-node "localhost" cluster from the even sizes, predict the odd ones.
# Checks that every step runs and gives sane numbers; prints the error, does
# not require it to be small (a shared CI machine's timings are noisy).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/trainsim-validate-cpu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "validate-cpu: FAILED: $*"; exit 1; }
for be in mpi schedule; do
    mpirun -np 2 --oversubscribe --allow-run-as-root bin/trainsim-bench --backend $be -b 8 -e 8M -f 4 \
        > "$tmp/$be.txt" 2> "$tmp/$be.err" || { cat "$tmp/$be.err"; fail "trainsim-bench --backend $be"; }
    grep -q '^# Out of bounds values : 0 OK' "$tmp/$be.txt" || fail "$be: wrong data"
    rows=$(grep -c '^ *[0-9]' "$tmp/$be.txt")
    [ "$rows" -eq 11 ] || fail "$be: $rows rows, want 11 (8 B to 8 MiB by 4)"
    algo=$( [ $be = schedule ] && echo "--algo ring" || echo "")
    bin/trainsim calibrate "$tmp/$be.txt" --cluster localhost --half even $algo -o "$tmp/$be.json" \
        > "$tmp/$be.cal" || { cat "$tmp/$be.cal"; fail "$be: calibrate"; }
    grep -q 'all_reduce intra-node (nccl-tests), 2 ranks' "$tmp/$be.cal" || fail "$be: calibrate did not see 2 ranks"
    grep -q '"bw_frac"' "$tmp/$be.json" || fail "$be: no fitted bandwidth term in the calibration"
    for cal in none "$tmp/$be.json"; do
        opt=$( [ "$cal" = none ] && echo "" || echo "--calibration $cal")
        bin/trainsim compare "$tmp/$be.txt" --cluster localhost --half odd $algo $opt --svg "$tmp/$be.svg" \
            > "$tmp/$be.cmp" || { cat "$tmp/$be.cmp"; fail "$be: compare"; }
        sum=$(grep '^# summary' "$tmp/$be.cmp") || fail "$be: compare printed no summary"
        n=$(grep -c '^ *[0-9]' "$tmp/$be.cmp")
        [ "$n" -eq 5 ] || fail "$be: compare predicted $n sizes, want the 5 odd ones"
        # sane: every predicted time is a positive finite number
        awk '/^ *[0-9]/ { if (!($3 > 0) || $3 == "inf" || $3 == "nan") exit 1 }' "$tmp/$be.cmp" \
            || fail "$be: a predicted time is not positive"
        grep -q '</svg>' "$tmp/$be.svg" || fail "$be: no plot"
        echo "validate-cpu: $be backend, calibration $( [ "$cal" = none ] && echo none || echo 'from the even sizes'):" \
             "${sum#\# summary all_reduce: } (odd sizes predicted)"
    done
done
# every collective on 3 ranks, both backends, data checked; and #wrong counts
# real mismatches: 3 corrupted elements per check (out-of-place and in-place)
for be in mpi schedule; do
    for op in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
        [ $be = schedule ] && [ $op = sendrecv ] && continue
        mpirun -np 3 --oversubscribe --allow-run-as-root bin/trainsim-bench --backend $be --op $op -r 1 \
            -b 96 -e 96K -f 32 -n 2 -w 1 > "$tmp/c.txt" 2>&1 || { cat "$tmp/c.txt"; fail "$be $op"; }
        grep -q '^# Out of bounds values : 0 OK' "$tmp/c.txt" || fail "$be $op: wrong data"
    done
done
# --csv and --json: one record per size, the same times as the table
mpirun -np 2 --oversubscribe --allow-run-as-root bin/trainsim-bench -b 1K -e 16K -f 4 -n 2 \
    --csv "$tmp/b.csv" --json "$tmp/b.json" > "$tmp/b.txt" 2>&1 || { cat "$tmp/b.txt"; fail "--csv/--json"; }
[ "$(tail -n +2 "$tmp/b.csv" | wc -l)" -eq 3 ] || fail "--csv: want 3 rows"
grep -q '^all_reduce,mpi,2,4096,1024,float,sum,-1,' "$tmp/b.csv" || fail "--csv: row of 4096 bytes"
[ "$(grep -o '"size":' "$tmp/b.json" | wc -l)" -eq 3 ] || fail "--json: want 3 results"
if mpirun -np 2 --oversubscribe --allow-run-as-root bin/trainsim-bench --backend schedule -b 1K -e 1K -n 1 \
       --inject-errors 3 > "$tmp/inj.txt" 2>&1; then fail "injected errors went unnoticed (exit 0)"; fi
grep -q '^# Out of bounds values : 6 FAILED' "$tmp/inj.txt" || { cat "$tmp/inj.txt"; fail "injected errors miscounted"; }
echo "validate-cpu: ok"
