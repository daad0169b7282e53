# analyze.awk: communication of one op graph (trainsim run --opgraph) by parallelism kind.
# usage: awk -v cfg=NAME -v sum=SUMMARY.csv -v hist=HIST.csv -f analyze.awk OPGRAPH.json
# Counts every collective call and every send (a point-to-point message is counted once, at its
# sender); sizes are the op's bytes (nccl-tests' size for collectives, the message for sends).
# Kind: the label's prefix (tp, pp, dp, cp, ep). Figures are per GPU: summed over ranks / nranks.
/"nranks":/ { gsub(/[^0-9]/, "", $0); nranks = $0 + 0; next }
/"kind": "(coll|send)"/ {
    b = $0; sub(/.*"bytes": /, "", b); sub(/[,}].*/, "", b); b += 0
    l = $0; sub(/.*"label": "/, "", l); sub(/\..*/, "", l)
    p2p = ($0 ~ /"kind": "send"/)
    n[l]++; v[l] += b; if (p2p) np[l]++
    if (b < 1048576) { small[l]++; S++; if (p2p) smallp[l]++ }
    e = 0; while (2 ^ (e + 1) <= b) e++
    h[l "," e]++
    N++; V += b; if (p2p) { P++; if (b < 1048576) SP++ }
    next
}
END {
    for (k in n)
        printf "%s,%s,%.1f,%.6g,%.4f,%.1f,%.4f,%.4f,%.6g\n", cfg, k, n[k] / nranks, v[k] / nranks, v[k] / V,
               np[k] / nranks, small[k] / n[k], np[k] ? smallp[k] / np[k] : 0, v[k] / n[k] >> sum
    printf "%s,all,%.1f,%.6g,1,%.1f,%.4f,%.4f,%.6g\n", cfg, N / nranks, V / nranks, P / nranks, S / N,
           P ? SP / P : 0, V / N >> sum
    for (k in h) { split(k, a, ","); printf "%s,%s,%.0f,%.1f\n", cfg, a[1], 2 ^ a[2], h[k] / nranks >> hist }
}
