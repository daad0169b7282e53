#!/bin/sh
# Study 4: all-gather at scale on Frontier: ring vs recursive doubling (rhd) vs Bruck vs PAT vs
# hierarchical (ring per rail, then ring in the node) and hier-rd (recursive doubling per rail, as
# PCCL does), 8 to 2,048 GCDs, 1 MiB to 1 GiB. Analytical everywhere; SimGrid (pipelined) on
# every cell but PAT above 1 MiB and Bruck at 2,048 GCDs (15-19 s of CPU per size there).
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd); ts="$root/bin/trainsim"
cd "$here"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
out=allgather.csv
echo "gcds,size,algorithm,fidelity,time_us,busbw_gbs" > $out
run() { # nodes algo fidelity [largest size, 1G if absent]
  "$ts" coll --cluster frontier:$1 --op all_gather -b 1M -e ${4:-1G} -f 4 --algo $2 --fidelity $3 \
    --csv "$tmp/c.csv" > /dev/null
  awk -F, 'NR > 1 { printf "%d,%d,%s,%s,%.3f,%.4f\n", $2, $3, $11, $13, $8, $10 }' "$tmp/c.csv" >> $out
}
for nodes in 1 4 16 64 256; do
  for a in ring rhd bruck pat hierarchical hier-rd; do
    run $nodes $a analytical
    if [ $nodes = 256 ] && [ $a = bruck ]; then continue; fi
    if [ $nodes = 256 ] && [ $a = pat ]; then run $nodes $a pipelined 1M; continue; fi
    run $nodes $a pipelined
  done
done
# best algorithm per cell and its speedup over ring, per fidelity (ring_ref: which ring it is
# compared with; always the same fidelity now that ring is simulated at every scale).
best() { # fidelity
  awk -F, -v f=$1 'NR > 1 { k = $1 "," $2; if ($3 == "ring") r[k, $4] = $5
             if ($4 == f && (!(k in b) || $5 < b[k])) { b[k] = $5; w[k] = $3 } }
           END { print "gcds,size,best,best_us,ring_us,ring_ref,speedup_over_ring"
                 for (k in b) { ref = ((k, f) in r) ? f : "analytical"; rt = r[k, ref]
                   printf "%s,%s,%.3f,%.3f,%s,%.2f\n", k, w[k], b[k], rt, ref, rt / b[k] } }' $out |
    sort -t, -k1,1n -k2,2n
}
best analytical > best.csv
best pipelined > best_pipelined.csv
# hierarchical vs ring and vs the best flat log-step algorithm (rhd, bruck, pat; at 2,048 GCDs on
# SimGrid rhd, and PAT at 1 MiB), both fidelities
echo "gcds,size,fidelity,ring_us,best_flat,best_flat_us,hierarchical_us,hier_rd_us,hier_over_ring,hier_rd_over_ring" \
  > hier.csv
awk -F, 'NR > 1 { k = $1 "," $2 "," $4; t[k, $3] = $5; K[k] = 1 }
  END { for (k in K) { split(k, f, ","); ring = (k, "ring") in t ? t[k, "ring"] : t[f[1] "," f[2] ",analytical", "ring"]
          bf = ""; bt = 0
          n = split("rhd bruck pat", fl, " ")
          for (i = 1; i <= n; i++) if ((k, fl[i]) in t && (bf == "" || t[k, fl[i]] < bt)) { bf = fl[i]; bt = t[k, fl[i]] }
          h = (k, "hierarchical") in t ? t[k, "hierarchical"] : 0; hr = (k, "hier-rd") in t ? t[k, "hier-rd"] : 0
          printf "%s,%.3f,%s,%s,%s,%s,%s,%s\n", k, ring, bf == "" ? "-" : bf, bf == "" ? "-" : sprintf("%.3f", bt),
            h ? sprintf("%.3f", h) : "-", hr ? sprintf("%.3f", hr) : "-",
            h ? sprintf("%.2f", ring / h) : "-", hr ? sprintf("%.2f", ring / hr) : "-" } }' $out |
  sort -t, -k3,3 -k1,1n -k2,2n >> hier.csv
# plots: time against size at 2,048 GCDs (analytical), 1 MiB against GCDs (analytical), and
# time against size at 512 and 2,048 GCDs on SimGrid
awk -F, 'NR == 1 || ($1 == 2048 && $4 == "analytical")' $out | awk -F, -v x=2 -v y=5 -v s=3 -v logx=1 -v logy=1 \
  -v title="all-gather on 2,048 Frontier GCDs (analytical)" -v xl="bytes (nccl-tests size: whole output)" \
  -v yl="time (us)" -f ../07-pipeline-schedules/plot.awk > allgather_2048.svg
awk -F, 'NR == 1 || ($2 == 1048576 && $4 == "analytical")' $out | awk -F, -v x=1 -v y=5 -v s=3 -v logx=1 -v logy=1 \
  -v title="all-gather of 1 MiB on Frontier (analytical)" -v xl="GCDs" \
  -v yl="time (us)" -f ../07-pipeline-schedules/plot.awk > allgather_1mib.svg
awk -F, 'NR == 1 || ($1 == 512 && $4 == "pipelined")' $out | awk -F, -v x=2 -v y=5 -v s=3 -v logx=1 -v logy=1 \
  -v title="all-gather on 512 Frontier GCDs (SimGrid, pipelined)" -v xl="bytes (nccl-tests size: whole output)" \
  -v yl="time (us)" -f ../07-pipeline-schedules/plot.awk > allgather_512_simgrid.svg
awk -F, 'NR == 1 || ($1 == 2048 && $4 == "pipelined")' $out | awk -F, -v x=2 -v y=5 -v s=3 -v logx=1 -v logy=1 \
  -v title="all-gather on 2,048 Frontier GCDs (SimGrid, pipelined)" -v xl="bytes (nccl-tests size: whole output)" \
  -v yl="time (us)" -f ../07-pipeline-schedules/plot.awk > allgather_2048_simgrid.svg
column -s, -t best.csv; echo; column -s, -t best_pipelined.csv; echo; column -s, -t hier.csv
