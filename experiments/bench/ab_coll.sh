#!/usr/bin/env bash
# Old and new builds alternating (OLD=<dir>/bin, NEW default bin), 3 runs each under nice,
# medians: wall, CPU (user + system), platform build (wall) and the simulated time of a 1 GiB
# pipelined all-reduce on N GPUs (default 16,384; docs/performance.md, row 2).
cd "$(dirname "$0")/../.."
OLD=${OLD:?OLD=<old build>/bin} NEW=${NEW:-bin} N=${N:-16384} tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in 1 2 3; do
  for b in OLD NEW; do
    d=${!b}
    /usr/bin/time -f "%e %U %S" -o $tmp/t nice $d/bench_coll $N 1073741824 pipelined > $tmp/o
    read w u s < $tmp/t
    echo "$b $w $(echo "$u + $s" | bc) $(awk '{print $6, $5}' $tmp/o)"
  done
done | tee $tmp/runs.txt
python3 - "$tmp/runs.txt" <<'PY'
import statistics as st
rows=[l.split() for l in open(__import__('sys').argv[1])]
for b in ('OLD','NEW'):
    r=[x for x in rows if x[0]==b]
    m=lambda k: st.median(float(x[k]) for x in r)
    print(f"{b}: median wall {m(1):.2f} s, cpu {m(2):.2f} s, build {m(3):.3f} s; sim {sorted(set(x[4] for x in r))} ms")
PY
