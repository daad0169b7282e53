#!/usr/bin/env bash
# Kineto import throughput and peak memory on a large synthetic trace: the
# traceEvents of a real sample (HTA rank 0 of 2, with NCCL metadata) repeated K
# times with shifted timestamps, written once plain and once gzip. Usage:
# kineto_import.sh [K] (default 30: about 300 MB uncompressed).
set -euo pipefail
cd "$(dirname "$0")/../.."
K=${1:-30}
SRC=../shared/data/traces/kineto/hta_nccl_data_rank0_ws2.json.gz
[ -f "$SRC" ] || { echo "kineto_import.sh: $SRC absent, skipped"; exit 0; }
make -s bin/bench_import
OUT=${TMPDIR:-/tmp}/trainsim-bench-kineto
mkdir -p "$OUT"
python3 - "$SRC" "$K" "$OUT/big.json" <<'PY'
import gzip, json, sys
src, k, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = json.load(gzip.open(src))
ev = d.pop("traceEvents")
t0 = min(e["ts"] for e in ev if "ts" in e)
t1 = max(e["ts"] + e.get("dur", 0) for e in ev if "ts" in e)
span = t1 - t0 + 1000
with open(out, "w") as f:
    head = json.dumps(d)[:-1]
    f.write(head + ', "traceEvents": [\n')
    first = True
    for i in range(k):
        for e in ev:
            if "ts" in e:
                e = dict(e); e["ts"] = e["ts"] + i * span
            f.write(("" if first else ",\n") + json.dumps(e)); first = False
    f.write("\n]}\n")
PY
gzip -1 -c "$OUT/big.json" > "$OUT/big.json.gz"
printf "%10s %10s %8s %10s %9s %9s %9s %10s %10s  %s\n" file_MB raw_MB ranks ops wall_s file_MB/s raw_MB/s rss0_MB peak_MB file
for f in "$OUT/big.json" "$OUT/big.json.gz"; do
    printf "%s  %s\n" "$(bin/bench_import "$f")" "$(basename "$f")"
done
rm -rf "$OUT"
