# best.csv (sorted by coll, gpus, size) -> tuning table of ranges, the format
# `--tuning` reads: each measured point covers the group sizes and byte counts
# up to the geometric midpoints to its neighbours (the first from 1 GPU / 0 B,
# the last to inf); neighbouring byte ranges with the same choice are merged.
function mid(a, b) { return int(sqrt(a * b)) }
NR > 1 {
  k = $1 SUBSEP $2
  if (!($1 in ng)) colls[++nc] = $1
  if (!(k in ns)) { ng[$1]++; G[$1, ng[$1]] = $2 }
  ns[k]++; S[k, ns[k]] = $3; A[k, ns[k]] = $4 ":" $5
}
END {
  print "# experiments/02-collective-landscape/run.sh: best algorithm per cell of best.csv (closed form, dgx-h100-superpod, 8 GPUs per node), as ranges"
  print "coll,min_gpus,max_gpus,min_bytes,max_bytes,algorithm"
  for (c = 1; c <= nc; c++) { co = colls[c]
    for (i = 1; i <= ng[co]; i++) { g = G[co, i]; k = co SUBSEP g
      glo = i == 1 ? 1 : mid(G[co, i - 1], g) + 1; ghi = i == ng[co] ? "inf" : mid(g, G[co, i + 1])
      for (j = 1; j <= ns[k]; j++) {
        slo = j == 1 ? 0 : mid(S[k, j - 1], S[k, j]) + 1
        while (j < ns[k] && A[k, j + 1] == A[k, j]) j++
        shi = j == ns[k] ? "inf" : sprintf("%.0f", mid(S[k, j], S[k, j + 1]))
        printf "%s,%s,%s,%.0f,%s,%s\n", co, glo, ghi, slo, shi, A[k, j] } } } }
