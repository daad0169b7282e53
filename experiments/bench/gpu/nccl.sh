#!/usr/bin/env bash
# trainsim-bench's nccl backend on the GPUs of this machine (docs/validation.md): every
# collective it knows, 8 B to 1 GiB, data checked, one rank per GPU under mpirun, or a
# single rank without a launcher (Open MPI singleton) where there is one GPU or no mpirun.
# Then a run with injected errors, which must be caught. Writes under $OUT (or build/gpu).
# BENCH: the binary (default bin/trainsim-bench, built where nvcc and nccl.h are found).
set -u
cd "$(dirname "$0")/../../.."
out=${OUT:-build/gpu}
mkdir -p "$out"
bench=${BENCH:-bin/trainsim-bench}
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "$n" -gt 1 ] && command -v mpirun >/dev/null; then
    launch="mpirun -np $n"
else
    launch=""; n=1
    export OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_btl=self OMPI_MCA_pml=ob1
fi
echo "# nccl.sh: $n rank(s), launcher '${launch:-singleton}', $bench" | tee "$out/nccl.log"
fail=0
for op in all_reduce all_gather reduce_scatter broadcast reduce alltoall; do
    $launch $bench --backend nccl --op $op -b 8 -e 1G -f 4 -n 20 -w 5 --json "$out/nccl_$op.json" \
        >>"$out/nccl.log" 2>&1 || { echo "# $op: exit $?" | tee -a "$out/nccl.log"; fail=1; }
done
# The check must catch wrong data: 3 elements of rank 0's result overwritten.
if $launch $bench --backend nccl --op all_reduce -b 1M -e 1M -n 2 -w 1 --inject-errors 3 >"$out/nccl_inject.log" 2>&1; then
    echo "# inject: exit 0, the errors were NOT caught" | tee -a "$out/nccl.log"; fail=1
else
    echo "# inject: exit $?, caught: $(grep -c . "$out/nccl_inject.log") lines" | tee -a "$out/nccl.log"
fi
exit $fail
