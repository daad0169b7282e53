#!/bin/sh
# Run each trace-format fuzzer (bin/fuzz_<format>) for FUZZ_RUNS executions from a
# seed corpus of the fixtures, then print executions, crashes, hangs and leaks.
# Crashing inputs land in build/fuzz/artifacts/; keep them under tests/data/fuzz/<format>/.
cd "$(dirname "$0")/../.." || exit 2
RUNS=${FUZZ_RUNS:-100000}
DATA=../shared/data/traces
out=build/fuzz
mkdir -p "$out/artifacts"
seed() { # format dir files...
    d="$out/corpus/$1"; shift
    mkdir -p "$d"
    for f in "$@"; do [ -f "$f" ] && cp "$f" "$d/" 2>/dev/null; done
    [ -d "tests/data/fuzz/$(basename "$d")" ] && cp tests/data/fuzz/"$(basename "$d")"/* "$d/" 2>/dev/null
    true
}
seed kineto tests/data/kineto_*.json
seed chakra_et "$DATA"/chakra/astra-sim/all_reduce_4npus_1MB/all_reduce.0.et \
    "$DATA"/chakra/astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce.0.et tests/data/chakra_truncated.0.et
seed chakra_json "$DATA"/chakra/small_chakra.0.json
mkdir -p "$out/corpus/nccl_log"
[ -f "$DATA/nccl-logs/timez_nccl-tests_nccl.log" ] && head -c 8000 "$DATA/nccl-logs/timez_nccl-tests_nccl.log" > "$out/corpus/nccl_log/head.log" \
    && grep -m 40 "Init START\|nRanks\|opCount" "$DATA/nccl-logs/timez_nccl-tests_nccl.log" > "$out/corpus/nccl_log/coll.log"
seed nccl_log tests/data/nccl_*.log
seed smpi_ti "$DATA"/smpi-ti/replay/actions_*.txt tests/data/smpi_*.txt
seed native tests/data/example.json tests/data/bad_*.json
seed pytorch_et
{ cat tests/data/pytorch_et_r0.json; printf '\0'; cat tests/data/pytorch_et_kineto_r0.json; } > "$out/corpus/pytorch_et/pair.bin"
seed smpi_index
printf 'r0.txt\nr1.txt\n\0000 init\n0 send 1 0 10\n0 allReduce 8 1\n\0001 Init\n1 recv 0 0 10\n1 allreduce 8 1\n' \
    > "$out/corpus/smpi_index/pair.bin"
seed simgrid_xml tests/golden/*.xml "$DATA"/smpi-ti/platform/small_platform.xml
seed golden tests/golden/*.json
seed nccl_tests ../shared/data/nccl-tests/*.txt tests/data/osu_*.txt
seed hf_config configs/models/*.json tests/data/model_*.json
seed nccl_topo "$DATA"/nccl-topo/*.xml
seed msccl "$DATA"/msccl/msccl-tools_ring_8_1.xml "$DATA"/msccl/msccl-tools_ar_multi_ar_1.xml
seed cluster configs/clusters/*.json
seed calibration
seed tuning tests/data/tuning_*.csv
seed constraint
mkdir -p "$out/corpus/layout"
printf 'tp=8,pp=4,dp=2,mbs=1,gbs=64,zero=1,sp=on' > "$out/corpus/layout/a"
printf 'gx=2,gy=2,gz=2,dp=4,mbs=2,gbs=32,recompute=full' > "$out/corpus/layout/b"
printf 'tp=2,pp=2,vpp=2,schedule=interleaved,zero=3,hpz=2,hgz=8,qwz=on' > "$out/corpus/layout/c"

printf '%-12s %10s %8s %6s %6s %8s\n' format executions crashes hangs leaks seconds
status=0
for fmt in "$@"; do
    start=$(date +%s)
    bin/fuzz_$fmt -runs="$RUNS" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
        -artifact_prefix="$out/artifacts/$fmt-" "$out/corpus/$fmt" > "$out/$fmt.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$fmt.log" | tail -n 1)
    crashes=$(ls "$out/artifacts" | grep -c "^$fmt-crash-")
    hangs=$(ls "$out/artifacts" | grep -c "^$fmt-timeout-")
    leaks=$(ls "$out/artifacts" | grep -c "^$fmt-leak-")
    oom=$(ls "$out/artifacts" | grep -c "^$fmt-oom-")
    printf '%-12s %10s %8s %6s %6s %8s\n' "$fmt" "${execs:-?}" "$((crashes + oom))" "$hangs" "$leaks" "$secs"
    if [ $rc -ne 0 ]; then status=1; tail -n 30 "$out/$fmt.log"; fi
done
exit $status
