/* Workload models: model specs, layouts and their rejection reasons, FLOP
 * counts against Megatron-LM's formulas, memory against hand calculations. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "memory/memory.h"
#include "tests.h"
#include "util.h"
#include "workload/workload.h"

#define MODELS "configs/models"

static void load(const char *name, wl_model *m)
{
    char err[TS_ERRLEN];
    int rc = wl_model_find(name, MODELS, m, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static int layout(const char *s, const wl_model *m, int seq, int ngpus, wl_layout *l, char *err)
{
    if (wl_layout_parse(s, l, err, TS_ERRLEN) < 0) return -1;
    return wl_layout_check(l, m, seq, ngpus, err, TS_ERRLEN);
}

static void test_models(void)
{
    wl_model m;
    load("llama3-70b", &m);
    CU_ASSERT_EQUAL(m.hidden, 8192);
    CU_ASSERT_EQUAL(m.kv_heads, 8);
    CU_ASSERT(m.gated && !m.tied && !m.learned_pos && !m.bias);
    /* Llama-3 70B: 70.55e9 parameters (Meta's model card says 70B) */
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab) / 1e9, 70.55, 0.01);
    load("llama3-8b", &m);
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab) / 1e9, 8.03, 0.01);
    load("mixtral-8x7b", &m);
    CU_ASSERT_EQUAL(m.experts, 8);
    CU_ASSERT_EQUAL(m.topk, 2);
    /* Mixtral 8x7B: 46.7e9 parameters (Mistral's announcement) */
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab) / 1e9, 46.7, 0.05);
    load("gpt3-175b", &m);
    CU_ASSERT(m.tied && m.learned_pos && m.bias && !m.gated);
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab) / 1e9, 174.6, 0.1);
    load("gpt-neox-20b", &m);
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab) / 1e9, 20.55, 0.02);
    /* every shipped model loads */
    const char *all[] = {"megatron-gpt-1.7b", "megatron-gpt-3.6b", "megatron-gpt-7.5b", "megatron-gpt-18b",
                         "megatron-gpt-39b", "megatron-gpt-76b", "megatron-gpt-145b", "megatron-gpt-310b",
                         "megatron-gpt-530b", "megatron-gpt-1t", "llama3-405b"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) load(all[i], &m);
    /* Megatron's Table 1 names its models by parameter count */
    load("megatron-gpt-1t", &m);
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab) / 1e12, 1.008, 0.01);
}

static void test_bad_layouts(void)
{
    wl_model m;
    wl_layout l;
    char err[TS_ERRLEN];
    load("gpt3-175b", &m);
    CU_ASSERT_EQUAL(layout("tp=8,pp=8,dp=16,gbs=1536", &m, 2048, 1024, &l, err), 0);
    CU_ASSERT_EQUAL(layout("tp=5,pp=8,gbs=1536", &m, 2048, 1280, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "tp=5 does not divide 96 attention heads"));
    CU_ASSERT_EQUAL(layout("tp=8,pp=7,gbs=1568", &m, 2048, 1792, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "pp=7 does not divide 96 layers"));
    CU_ASSERT_EQUAL(layout("tp=8,pp=8,dp=16,gbs=1536", &m, 2048, 2048, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "= 1024 gpus, but the platform has 2048"));
    CU_ASSERT_EQUAL(layout("tp=8,pp=8,dp=16,gbs=1000", &m, 2048, 1024, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "gbs=1000 not divisible by mbs*dp"));
    CU_ASSERT_EQUAL(layout("tp=8,pp=8,vpp=5,gbs=1536", &m, 2048, 1024, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "pp*vpp = 8*5 does not divide 96 layers"));
    CU_ASSERT_EQUAL(layout("tp=8,pp=8,ep=2,gbs=1536", &m, 2048, 1024, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "ep=2 for a dense model"));
    CU_ASSERT_EQUAL(layout("tp=8,pp=8,bogus=3", &m, 2048, 1024, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown key 'bogus'"));
    CU_ASSERT_EQUAL(layout("tp=8,tp=4", &m, 2048, 1024, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'tp' given twice"));
    CU_ASSERT_EQUAL(layout("tp=0", &m, 2048, 1024, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "tp=0 is not an integer >= 1"));
    CU_ASSERT_EQUAL(layout("tp=8,schedule=bfs", &m, 2048, 1024, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "valid: gpipe, 1f1b, interleaved, zbh1"));
    CU_ASSERT_EQUAL(layout("tp=1,sp=on", &m, 2048, 1024, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "sp=on needs tp >= 2"));
    CU_ASSERT_EQUAL(layout("gx=8,gy=7,gz=2,dp=8", &m, 2048, 896, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "gy=7 does not divide"));
    /* dp is derived from the gpu count */
    CU_ASSERT_EQUAL(layout("tp=8,pp=8,gbs=1536", &m, 2048, 4096, &l, err), 0);
    CU_ASSERT_EQUAL(l.dp, 64);
    CU_ASSERT_EQUAL(wl_layout_micro(&l), 24);
    load("mixtral-8x7b", &m);
    CU_ASSERT_EQUAL(layout("tp=2,pp=1,ep=3,gbs=48", &m, 4096, 48, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "ep=3 does not divide 8 experts"));
}

/* Megatron-LM (Narayanan et al. 2021, appendix): per iteration
 * F = 72 B s l h^2 (1 + s/(6h) + V/(12 l h)), and with full recompute
 * F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). */
static void test_flops_formula(void)
{
    const char *names[] = {"megatron-gpt-1.7b", "megatron-gpt-18b", "megatron-gpt-145b"};
    const char *layouts[] = {"tp=1,pp=1,dp=32,gbs=512", "tp=8,pp=1,dp=32,gbs=1024", "tp=8,pp=8,dp=24,gbs=2304"};
    for (int i = 0; i < 3; i++) {
        wl_model m;
        wl_layout l;
        char err[TS_ERRLEN];
        load(names[i], &m);
        CU_ASSERT_EQUAL_FATAL(layout(layouts[i], &m, 2048, 0, &l, err), 0);
        double B = l.gbs, s = 2048, L = m.layers, h = m.hidden, V = m.vocab;
        double plain = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
        double full = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
        double f = wl_iteration_flops(&m, &l, 2048, 0);
        CU_ASSERT(fabs(f - plain) / plain < 1e-3);
        l.recompute = WL_RC_FULL;
        f = wl_iteration_flops(&m, &l, 2048, 0);
        CU_ASSERT(fabs(f - full) / full < 1e-3);
        CU_ASSERT(fabs(wl_iteration_flops(&m, &l, 2048, 1) - plain) / plain < 1e-3);
    }
}

/* Korthikanti et al. 2022, equations 1, 4, 5, 6 and section 4.1 for one GPT layer. */
static void test_activation_equations(void)
{
    wl_model m;
    wl_layout l;
    char err[TS_ERRLEN];
    load("megatron-gpt-18b", &m);
    double s = 2048, b = 2, h = 6144, a = 48, t = 8;
    CU_ASSERT_EQUAL_FATAL(layout("tp=8,mbs=2,dp=1", &m, 2048, 0, &l, err), 0);
    CU_ASSERT_DOUBLE_EQUAL(mem_layer_activations(&m, &l, 2048, 0),
                           s * b * h * (10 + 24 / t + 5 * a * s / (h * t)), 1);           /* eq. 4 */
    l.sp = 1;
    CU_ASSERT_DOUBLE_EQUAL(mem_layer_activations(&m, &l, 2048, 0),
                           s * b * h / t * (34 + 5 * a * s / h), 1);                     /* eq. 5 */
    l.recompute = WL_RC_SELECTIVE;
    CU_ASSERT_DOUBLE_EQUAL(mem_layer_activations(&m, &l, 2048, 0), s * b * h * 34 / t, 1); /* eq. 6 */
    l.sp = 0;
    CU_ASSERT_DOUBLE_EQUAL(mem_layer_activations(&m, &l, 2048, 0), s * b * h * (10 + 24 / t), 1);
    l.recompute = WL_RC_FULL;
    CU_ASSERT_DOUBLE_EQUAL(mem_layer_activations(&m, &l, 2048, 0), 2 * s * b * h, 1);
    l.tp = 1;
    l.recompute = WL_RC_NONE;
    CU_ASSERT_DOUBLE_EQUAL(mem_layer_activations(&m, &l, 2048, 0), s * b * h * (34 + 5 * a * s / h), 1); /* eq. 1 */
}

/* GPT-3 175B, tp=8 pp=8 dp=16, mbs=1, gbs=1536, sp, selective recompute,
 * distributed optimizer (zero=1), bf16, sequence 2048, by hand:
 *   h = 12288, vocabulary padded to a multiple of 128*8: 51200; 12 layers/stage.
 *   one layer on a rank: QKV 3h^2+3h and fc1 4h^2+4h split by t, proj h^2 and
 *   fc2 4h^2 split by t, their biases h + h replicated, 2 layer norms 4h:
 *   (12h^2 + 7h)/8 + 6h = 226,576,896 parameters.
 *   stage 0: 12 layers + embedding 51200*h/8 + positions 2048*h
 *          = 2,718,922,752 + 78,643,200 + 25,165,824 = 2,822,731,776 params.
 *   weights 2 B/param = 5,645,463,552; fp32 main grads 4 B = 11,290,927,104;
 *   Adam (fp32 master, m, v) 12 B / dp 16 = 0.75 B/param = 2,117,048,832.
 *   activations: 34 sbh / t per layer = 34*2048*12288/8 = 106,954,752 bytes,
 *   x 12 layers x min(p, m) = 8 micro-batches in flight (1F1B, m = 96)
 *   = 10,267,656,192, + embedding dropout mask sbh/t x 8 = 25,165,824.
 *   workspace 2 GiB. Total 31,493,745,152 bytes. */
static void test_memory_hand(void)
{
    wl_model m;
    wl_layout l;
    char err[TS_ERRLEN];
    load("gpt3-175b", &m);
    CU_ASSERT_EQUAL_FATAL(layout("tp=8,pp=8,dp=16,mbs=1,gbs=1536,zero=1,sp=on,recompute=selective", &m, 2048,
                                 1024, &l, err), 0);
    mem_breakdown mb;
    mem_estimate(&m, &l, 2048, CM_BF16, 80 * 1073741824.0, &mb);
    CU_ASSERT_EQUAL(mb.stage, 0);
    CU_ASSERT(fabs(mb.weights - 5645463552.0) / 5645463552.0 < 0.01);
    CU_ASSERT(fabs(mb.grads - 11290927104.0) / 11290927104.0 < 0.01);
    CU_ASSERT(fabs(mb.optim - 2117048832.0) / 2117048832.0 < 0.01);
    CU_ASSERT(fabs(mb.activations - 10292822016.0) / 10292822016.0 < 0.01);
    CU_ASSERT(fabs(mb.total - 31493745152.0) / 31493745152.0 < 0.01);
    CU_ASSERT(mb.fits);
    /* no sharding at all on 8 GPUs: 175e9 x 18 / 8 bytes of states alone */
    CU_ASSERT_EQUAL_FATAL(layout("tp=8,pp=1,dp=1,gbs=1", &m, 2048, 8, &l, err), 0);
    mem_estimate(&m, &l, 2048, CM_BF16, 80 * 1073741824.0, &mb);
    CU_ASSERT(!mb.fits);
    CU_ASSERT(mb.weights + mb.grads + mb.optim > 18 * 174e9 / 8);
    /* ZeRO stages shard progressively more */
    CU_ASSERT_EQUAL_FATAL(layout("tp=8,pp=1,dp=4,gbs=4,zero=2", &m, 2048, 32, &l, err), 0);
    mem_estimate(&m, &l, 2048, CM_BF16, 80 * 1073741824.0, &mb);
    CU_ASSERT_DOUBLE_EQUAL(mb.grads / mb.weights, 2.0 / 4, 1e-9);
    l.zero = 3;
    mem_estimate(&m, &l, 2048, CM_BF16, 80 * 1073741824.0, &mb);
    CU_ASSERT_DOUBLE_EQUAL(mb.optim / mb.grads, 12.0 / 4, 1e-9);
}

void suite_workload(void)
{
    test_add_suite("workload", "model specs", test_models, "bad layouts rejected", test_bad_layouts,
                   "flops vs megatron formula", test_flops_formula, "korthikanti activation equations",
                   test_activation_equations, "memory vs hand calculation", test_memory_hand, NULL);
}
