#!/bin/sh
# Study 7: pipeline schedules (GPipe, 1F1B, interleaved, ZB-H1) across pipeline depths and
# micro-batch counts: bubble fraction, memory per GPU, iteration time. Analytical critical path.
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd); ts="$root/bin/trainsim"
cd "$here"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
out=schedules.csv
echo "pp,m,schedule,vpp,iteration_s,bubble_s,bubble_frac,compute_s,pp_exposed_s,mem_gib,speedup_vs_1f1b" > $out
for pp in 2 4 8; do
  for m in 8 16 32 64; do
    base=""
    for s in 1f1b gpipe interleaved zbh1; do
      v=1; [ $s = interleaved ] && v=2
      rm -f "$tmp/r.json"
      "$ts" run --model llama3-8b --gpu h100 --fidelity analytical --seq 4096 \
        --layout tp=2,pp=$pp,vpp=$v,dp=1,mbs=1,gbs=$m,sp=on,recompute=selective,schedule=$s \
        --json "$tmp/r.json" > /dev/null || true   # exit 1: does not fit in 80 GiB (row kept, times empty)
      j=$(tr -d ' \n' < "$tmp/r.json")
      mem=$(echo "$j" | sed 's/.*"total":\([0-9.e+]*\).*/\1/')
      case "$j" in
      *'"fits":true'*)
        set -- $(echo "$j" | sed 's/.*"iteration_s":\([0-9.e+-]*\).*"compute":\([0-9.e+-]*\).*"pp":\([0-9.e+-]*\),.*"bubble":\([0-9.e+-]*\)}.*/\1 \2 \3 \4/')
        [ $s = 1f1b ] && base=$1
        awk -v pp=$pp -v m=$m -v s=$s -v v=$v -v mem=$mem -v it=$1 -v c=$2 -v p=$3 -v b=$4 -v base=$base \
          'BEGIN { printf "%d,%d,%s,%d,%.5f,%.5f,%.4f,%.5f,%.5f,%.2f,%.4f\n", pp, m, s, v, it, b, b/it, c, p, mem/2^30, base/it }' >> $out ;;
      *)
        awk -v pp=$pp -v m=$m -v s=$s -v v=$v -v mem=$mem \
          'BEGIN { printf "%d,%d,%s,%d,,,,,,%.2f,\n", pp, m, s, v, mem/2^30 }' >> $out ;;
      esac
    done
  done
done
# cross-check on SimGrid (pipelined fidelity, flow-level links of two DGX H100 nodes) at pp=8
echo "pp,m,schedule,iteration_simgrid_s,iteration_analytical_s,ratio" > simgrid.csv
for m in 8 64; do
  for s in 1f1b gpipe interleaved zbh1; do
    v=1; [ $s = interleaved ] && v=2
    it=$("$ts" run --cluster dgx-h100-superpod --nodes 2 --model llama3-8b --seq 4096 \
      --layout tp=2,pp=8,vpp=$v,dp=1,mbs=1,gbs=$m,sp=on,recompute=selective,schedule=$s 2> /dev/null |
      sed -n 's/^iteration *\([0-9.]*\) s/\1/p') || true
    an=$(awk -F, -v m=$m -v s=$s '$1 == 8 && $2 == m && $3 == s { print $5 }' $out)
    [ -n "$it" ] && [ -n "$an" ] && awk -v m=$m -v s=$s -v a=$it -v b=$an \
      'BEGIN { printf "8,%d,%s,%.4f,%.4f,%.4f\n", m, s, a, b, a / b }' >> simgrid.csv  || true
  done
done
# plot: bubble fraction against micro-batches at pp=8, one line per schedule
awk -F, 'NR == 1 || $1 == 8' $out | awk -F, -v x=2 -v y=7 -v s=3 -v logx=1 \
  -v title="Llama-3 8B, tp=2 pp=8 (16 H100): pipeline bubble fraction" \
  -v xl="micro-batches per iteration" -v yl="bubble / iteration" -f plot.awk > bubble_pp8.svg
column -s, -t $out; echo; column -s, -t simgrid.csv
