#!/bin/sh
# Study 4: all-gather at scale on Frontier: ring vs recursive doubling (rhd) vs Bruck vs PAT,
# 8 to 2,048 GCDs, 1 MiB to 1 GiB. Analytical everywhere; SimGrid (pipelined) where it is cheap.
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd); ts="$root/bin/trainsim"
cd "$here"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
out=allgather.csv
echo "gcds,size,algorithm,fidelity,time_us,busbw_gbs" > $out
run() { # nodes algo fidelity
  "$ts" coll --cluster frontier:$1 --op all_gather -b 1M -e 1G -f 4 --algo $2 --fidelity $3 \
    --csv "$tmp/c.csv" > /dev/null
  awk -F, 'NR > 1 { printf "%d,%d,%s,%s,%.3f,%.4f\n", $2, $3, $11, $13, $8, $10 }' "$tmp/c.csv" >> $out
}
for nodes in 1 4 16 64 256; do
  for a in ring rhd bruck pat; do
    run $nodes $a analytical
    # SimGrid: ring and rhd up to 512 GCDs, Bruck and PAT up to 128 (memory and time: PAT on
    # 512 GCDs takes 28 s and 4 GiB, ring on 2,048 GCDs 80 s and 16 GiB)
    if [ $nodes -le 16 ] || { [ $nodes -le 64 ] && { [ $a = ring ] || [ $a = rhd ]; }; }; then
      run $nodes $a pipelined
    fi
  done
done
# best algorithm per cell (analytical) and its speedup over ring
awk -F, 'NR > 1 && $4 == "analytical" { k = $1 "," $2; if ($3 == "ring") r[k] = $5
           if (!(k in b) || $5 < b[k]) { b[k] = $5; w[k] = $3 } }
         END { print "gcds,size,best,best_us,ring_us,speedup_over_ring"
               for (k in b) printf "%s,%s,%.3f,%.3f,%.2f\n", k, w[k], b[k], r[k], r[k] / b[k] }' $out |
  sort -t, -k1,1n -k2,2n > best.csv
# the same from SimGrid (pipelined), where it ran
awk -F, 'NR > 1 && $4 == "pipelined" { k = $1 "," $2; if ($3 == "ring") r[k] = $5
           if (!(k in b) || $5 < b[k]) { b[k] = $5; w[k] = $3 } }
         END { print "gcds,size,best,best_us,ring_us,speedup_over_ring"
               for (k in b) printf "%s,%s,%.3f,%.3f,%.2f\n", k, w[k], b[k], r[k], r[k] / b[k] }' $out |
  sort -t, -k1,1n -k2,2n > best_pipelined.csv
# plot: all-gather time at 2,048 GCDs (analytical) per algorithm
awk -F, 'NR == 1 || ($1 == 2048 && $4 == "analytical")' $out | awk -F, -v x=2 -v y=5 -v s=3 -v logx=1 -v logy=1 \
  -v title="all-gather on 2,048 Frontier GCDs (analytical)" -v xl="bytes (nccl-tests size: whole output)" \
  -v yl="time (us)" -f ../07-pipeline-schedules/plot.awk > allgather_2048.svg
awk -F, 'NR == 1 || ($2 == 1048576 && $4 == "analytical")' $out | awk -F, -v x=1 -v y=5 -v s=3 -v logx=1 -v logy=1 \
  -v title="all-gather of 1 MiB on Frontier (analytical)" -v xl="GCDs" \
  -v yl="time (us)" -f ../07-pipeline-schedules/plot.awk > allgather_1mib.svg
column -s, -t best.csv; echo; column -s, -t best_pipelined.csv
