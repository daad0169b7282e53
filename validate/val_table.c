/* nccl-tests' output table: header, row layout and size rounding, shared by
 * every command that prints collective times (simulated or measured). */
#include <stdio.h>
#include <stdlib.h>

#include "val.h"

int val_parse_size(const char *s, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    int64_t mul = 1;
    if (*end == 'K' || *end == 'k') mul = 1 << 10, end++;
    else if (*end == 'M' || *end == 'm') mul = 1 << 20, end++;
    else if (*end == 'G' || *end == 'g') mul = (int64_t)1 << 30, end++;
    if (end == s || *end || v < 0 || v > OG_MAX_BYTES / mul) return -1;
    *out = v * mul;
    return 0;
}

void val_fmt_time(char *buf, size_t n, double us)
{
    snprintf(buf, n, "%7.*f", us < 1e4 ? 2 : us < 1e5 ? 1 : 0, us);
}

int val_per_rank_count(int c)
{
    return c == OG_ALLGATHER || c == OG_REDUCESCATTER || c == OG_ALLTOALL;
}

const char *val_redop(int c)
{
    return c == OG_ALLREDUCE || c == OG_REDUCE || c == OG_REDUCESCATTER ? "sum" : "none";
}

int val_rooted(int c) { return c == OG_BROADCAST || c == OG_REDUCE; }

int64_t val_nccl_size(int coll, int n, int64_t size, int elsize, int64_t *count)
{
    int64_t unit = (int64_t)elsize * (val_per_rank_count(coll) ? n : 1);
    int align = 16 / elsize;
    *count = coll == OG_BARRIER ? 0 : size / unit;
    if (val_per_rank_count(coll)) *count &= -(int64_t)(align > 0 ? align : 1);
    return *count * unit;
}

void val_table_header(FILE *f)
{
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "",
            "", "", "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "size", "count", "type",
            "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "(B)", "(elements)", "", "",
            "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

void val_table_row(FILE *f, int64_t size, int64_t count, const char *type, int coll, int root, double t_oop_us,
                   double t_ip_us, double busfactor, long wrong_oop, long wrong_ip)
{
    fprintf(f, "%12lld  %12lld  %8s  %6s  %6d", (long long)size, (long long)count, type, val_redop(coll),
            val_rooted(coll) ? root : -1);
    double ts[2] = {t_oop_us, t_ip_us};
    long wr[2] = {wrong_oop, wrong_ip};
    for (int i = 0; i < 2; i++) {
        char t[32], w[24];
        double alg = ts[i] > 0 ? (double)size / ts[i] / 1e3 : 0;
        val_fmt_time(t, sizeof t, ts[i]);
        if (wr[i] < 0) snprintf(w, sizeof w, "N/A");
        else snprintf(w, sizeof w, "%ld", wr[i]);
        fprintf(f, "  %7s  %6.2f  %6.2f  %6s", t, alg, alg * busfactor, w);
    }
    fprintf(f, "\n");
}
