/* embed.c: libtrainsim inside another program (docs/api.md): an all-reduce
 * sweep and one training iteration through trainsim.h, on two nodes of the
 * shipped DGX H100 SuperPOD. Build against an installed trainsim:
 *   cc embed.c $(pkg-config --cflags --libs trainsim) -o embed */
#include <stdio.h>
#include <trainsim.h>

int main(void)
{
    char msg[TS_MSG_MAX];
    ts_common cluster = {.cluster = "dgx-h100-superpod", .nodes = 2};

    /* nccl-tests' all_reduce_perf from 1 MiB to 64 MiB, x4 per step, on all 16 GPUs */
    ts_coll_opts co = {.c = cluster, .op = "all_reduce", .min_bytes = 1 << 20, .max_bytes = 64 << 20, .step_factor = 4};
    ts_coll_result *coll;
    ts_status st = ts_coll(&co, &coll, msg, sizeof msg);
    if (st != TS_OK) {
        fprintf(stderr, "embed: coll: %s\n", msg);
        return st;
    }
    printf("%s on %d GPUs (%s):\n", coll->op, coll->gpus, coll->fidelity);
    for (size_t i = 0; i < coll->npoints; i++) {
        const ts_coll_point *p = &coll->points[i];
        printf("  %10lld bytes  %9.2f us  algbw %7.2f GB/s  busbw %7.2f GB/s  %s/%s\n", p->size, p->time_s * 1e6,
               p->algbw_gbs, p->busbw_gbs, p->algorithm, p->protocol);
    }
    ts_coll_result_free(coll);

    /* one iteration of the 1.7B Megatron GPT, tensor parallel in a node, a pipeline across the two */
    ts_run_opts ro = {.c = cluster, .model = "megatron-gpt-1.7b", .layout = "tp=8,pp=2,gbs=16", .seq = 2048};
    ts_run_result *run;
    st = ts_run(&ro, &run, msg, sizeof msg);
    if (st != TS_OK) {
        fprintf(stderr, "embed: run: %s\n", msg);
        ts_run_result_free(run); /* set when the layout was valid: run->memory says whether it fits */
        return st;
    }
    printf("%s, %s on %d x %s: memory %.2f of %.2f GiB per GPU\n", run->model, run->layout, run->gpus, run->gpu,
           run->memory.total / 1073741824.0, run->memory.capacity / 1073741824.0);
    printf("iteration %.4f s, %.0f tokens/s, MFU %.1f%%: compute %.4f s, exposed tp %.4f s, pp %.4f s, bubble %.4f s\n",
           run->iteration_s, run->tokens_per_s, 100 * run->mfu, run->breakdown[TS_COMPUTE], run->breakdown[TS_TP],
           run->breakdown[TS_PP], run->breakdown[TS_BUBBLE]);
    ts_run_result_free(run);
    return TS_OK;
}
