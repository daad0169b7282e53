/* ts_coll: a simulated nccl-tests sweep, one collective per size on the first
 * N GPUs of a platform (the compute core of `trainsim coll`). */
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "coll.h"
#include "util.h"
#include "val.h"

static const char *fid_names[] = {"step", "pipelined", "analytical"}; /* VAL_FID_* order */

ts_status ts_coll(const ts_coll_opts *o, ts_coll_result **out, char *msg, size_t msglen)
{
    *out = NULL;
    if (!o->c.cluster) return ts_err(msg, msglen, "a cluster or platform is required"), TS_BAD_INPUT;
    int op = coll_from_name(api_or(o->op, "all_reduce"));
    if (op < 0 || op == OG_ALLTOALLV)
        return ts_err(msg, msglen, "unknown op '%s' (valid: all_reduce, all_gather, reduce_scatter, broadcast, "
                      "reduce, alltoall, barrier)", o->op), TS_BAD_INPUT;
    int fid;
    for (fid = 0; fid < 3 && strcmp(fid_names[fid], api_or(o->fidelity, "pipelined")); fid++) {}
    if (fid == 3)
        return ts_err(msg, msglen, "unknown fidelity '%s' (valid: step, pipelined, analytical)", o->fidelity),
               TS_BAD_INPUT;
    int dtype = og_dtype_from_name(api_or(o->dtype, "float"));
    if (dtype < 0) return ts_err(msg, msglen, "unknown dtype '%s'", o->dtype), TS_BAD_INPUT;
    int64_t minb = o->min_bytes, maxb = o->max_bytes ? o->max_bytes : (int64_t)128 << 20;
    double factor = o->step_factor ? o->step_factor : 2;
    if (minb < 0 || maxb < 0 || o->step_bytes < 0 || o->gpus < 0 || o->root < 0)
        return ts_err(msg, msglen, "negative size, step, group size or root (%lld, %lld, %lld, %d, %d)",
                      (long long)minb, (long long)maxb, (long long)o->step_bytes, o->gpus, o->root), TS_BAD_INPUT;
    if (!(factor > 1) || factor > 1024)
        return ts_err(msg, msglen, "step factor %g is not above 1 (at most 1024)", factor), TS_BAD_INPUT;
    if (minb > maxb)
        return ts_err(msg, msglen, "minimum size %lld is larger than the maximum %lld", (long long)minb,
                      (long long)maxb), TS_BAD_INPUT;
    coll_policy *pol = NULL;
    val_sweep sw;
    memset(&sw, 0, sizeof sw);
    ts_coll_result *r = NULL;
    ts_status st = TS_BAD_INPUT;
    if (api_policy(&o->c, &pol, msg, msglen) < 0 || api_engine(&o->c, o->c.nodes, msg, msglen) < 0 ||
        val_sweep_open(&sw, op, o->gpus, o->root, dtype, fid, o->algo, msg, msglen) < 0)
        goto out;
    sw.policy = pol;
    r = ts_calloc(1, sizeof *r);
    api_copy(r->op, sizeof r->op, og_coll_name(op));
    api_copy(r->fidelity, sizeof r->fidelity, fid_names[fid]);
    api_copy(r->dtype, sizeof r->dtype, og_dtype_name(dtype));
    api_copy(r->redop, sizeof r->redop, val_redop(op));
    r->gpus = sw.n;
    r->root = val_rooted(op) ? o->root : -1;
    r->busbw_factor = coll_busbw_factor(op, sw.n);
    size_t cap = 0;
    double sum_bus = 0;
    for (int64_t size = minb; size <= maxb;) {
        ts_grow(&r->points, sizeof *r->points, &cap, r->npoints + 1);
        ts_coll_point *p = &r->points[r->npoints];
        memset(p, 0, sizeof *p);
        /* nccl-tests (2.14 on) rounds each size down to whole elements, and
         * per-rank counts down to 16 bytes' worth of elements */
        int64_t count;
        p->size = val_nccl_size(op, sw.n, size, og_dtype_size(dtype), &count);
        p->count = count;
        val_point pt;
        char err[TS_ERRLEN];
        if (val_sweep_size(&sw, p->size, &pt, err, sizeof err) < 0) {
            ts_err(msg, msglen, "%s of %lld bytes: %s", og_coll_name(op), (long long)p->size, err);
            goto out;
        }
        p->time_s = pt.time;
        p->algbw_gbs = pt.time > 0 ? (double)p->size / pt.time / 1e9 : 0;
        p->busbw_gbs = p->algbw_gbs * r->busbw_factor;
        api_copy(p->algorithm, sizeof p->algorithm, coll_algo_get(pt.algo)->name);
        api_copy(p->protocol, sizeof p->protocol, coll_proto_name(pt.proto));
        sum_bus += p->busbw_gbs;
        r->npoints++;
        /* -b 0 runs the empty collective, then goes on from one element;
         * a factor that rounds back to the same size steps by one byte */
        int64_t next = o->step_bytes ? size + o->step_bytes
                       : size == 0 ? (int64_t)og_dtype_size(dtype) : (int64_t)(size * factor);
        if (next <= size) next = size + 1;
        size = next;
    }
    r->avg_busbw_gbs = r->npoints ? sum_bus / r->npoints : 0;
    st = TS_OK;
out:
    val_sweep_close(&sw);
    coll_policy_free(pol);
    if (st != TS_OK) ts_coll_result_free(r);
    else *out = r;
    return st;
}

void ts_coll_result_free(ts_coll_result *r)
{
    if (!r) return;
    free(r->points);
    free(r);
}
