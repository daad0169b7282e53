/* Workload models: model specs, layouts and their rejection reasons, FLOP
 * counts against Megatron-LM's formulas, memory against hand calculations. */
#include <unistd.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "analytic/analytic.h"
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
    /* BLOOM (model_type bloom): GeLU, tied, ALiBi (no position table), biases; 176,247M parameters
     * in the BLOOM paper, of which its embedding LayerNorm (2h) is not counted here */
    load("bloom-176b", &m);
    CU_ASSERT(m.tied && !m.learned_pos && m.bias && !m.gated);
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab) / 1e9, 176.25, 0.05);
    /* every shipped model loads */
    const char *all[] = {"megatron-gpt-1.7b", "megatron-gpt-3.6b", "megatron-gpt-7.5b", "megatron-gpt-18b",
                         "megatron-gpt-39b", "megatron-gpt-76b", "megatron-gpt-145b", "megatron-gpt-310b",
                         "megatron-gpt-530b", "megatron-gpt-1t", "llama3-405b", "megatron-gpt-22b", "mt-nlg-530b"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) load(all[i], &m);
    /* DeepSeek keys: 64 routed experts of width 1408, top-6, 2 shared experts, the
     * first layer dense. By hand (h = 2048, gated, no biases, RMSNorm):
     * attention 4h^2 = 16,777,216 and norms 2h = 4,096 per layer; dense MLP 3h*10944
     * = 67,239,936; MoE MLP (64 + 2) * 3h*1408 = 570,949,632 plus router 64h = 131,072;
     * embeddings 2 * 102400h = 419,430,400 and the final norm 2048:
     * 419,432,448 + 27 * 16,781,312 + 67,239,936 + 26 * 571,080,704 = 15,787,866,112 */
    load(test_data("model_deepseek_like.json"), &m);
    CU_ASSERT_EQUAL(m.experts, 64);
    CU_ASSERT_EQUAL(m.topk, 6);
    CU_ASSERT_EQUAL(m.moe_ffn, 1408);
    CU_ASSERT_EQUAL(m.shared_experts, 2);
    CU_ASSERT_EQUAL(m.dense_layers, 1);
    CU_ASSERT(m.gated && !m.tied && !m.bias);
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab), 15787866112.0, 1);
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
    CU_ASSERT_EQUAL(layout("tp=8,order=tp-dp-tp-pp", &m, 2048, 1024, &l, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "order=tp-dp-tp-pp is not a permutation"));
    /* placement: Megatron's default puts pp outermost; order=tp-pp-dp-cp moves it inside dp */
    CU_ASSERT_EQUAL(layout("tp=2,pp=2,dp=2,gbs=2", &m, 2048, 8, &l, err), 0);
    CU_ASSERT_EQUAL(wl_rank_of(&l, 1, 0, 0, 1), 5);
    CU_ASSERT_EQUAL(wl_rank_of(&l, 1, 0, 1, 0), 3);
    CU_ASSERT_EQUAL(layout("tp=2,pp=2,dp=2,gbs=2,order=tp-pp-dp-cp", &m, 2048, 8, &l, err), 0);
    CU_ASSERT_EQUAL(wl_rank_of(&l, 1, 0, 0, 1), 3);
    CU_ASSERT_EQUAL(wl_rank_of(&l, 1, 0, 1, 0), 5);
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
        /* causal count (Megatron-Bridge): the scores and weighted values, 4 s h per token
         * and layer forward (x3 with the backward), are halved; nothing else changes */
        double causal = plain - 3 * B * s * L * 2 * s * h;
        double fc = wl_iteration_flops(&m, &l, 2048, WL_FLOPS_MODEL_CAUSAL);
        CU_ASSERT(fabs(fc - causal) / causal < 1e-3);
    }
}

/* Korthikanti et al. 2022, equations 1, 4, 5, 6 and section 4.1 for one GPT layer
 * (their attention is the unfused kernel's; FlashAttention's keeps 4asb of
 * log-sum-exp instead of the 5as^2b scores). */
static void test_activation_equations(void)
{
    wl_model m;
    wl_layout l;
    char err[TS_ERRLEN];
    load("megatron-gpt-18b", &m);
    double s = 2048, b = 2, h = 6144, a = 48, t = 8;
    CU_ASSERT_EQUAL_FATAL(layout("tp=8,mbs=2,dp=1,attn=unfused", &m, 2048, 0, &l, err), 0);
    CU_ASSERT_DOUBLE_EQUAL(mem_layer_activations(&m, &l, 2048, 0),
                           s * b * h * (10 + 24 / t + 5 * a * s / (h * t)), 1);           /* eq. 4 */
    l.attn = WL_ATTN_FLASH2;
    CU_ASSERT_DOUBLE_EQUAL(mem_layer_activations(&m, &l, 2048, 0), s * b * h * (10 + 24 / t + 4 * a / (h * t)), 1);
    l.attn = WL_ATTN_UNFUSED;
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
    /* ZeRO-3 workspace: 2 GiB + two gathered layers (226,576,896 parameters per tp rank,
     * above) x 2 bytes, whatever the dp degree (it once grew as dp) */
    double ws = 2 * 1073741824.0 + 2 * 226576896.0 * 2;
    CU_ASSERT(fabs(mb.workspace - ws) / ws < 0.001);
    CU_ASSERT_EQUAL_FATAL(layout("tp=8,pp=1,dp=64,gbs=64,zero=3", &m, 2048, 512, &l, err), 0);
    mem_estimate(&m, &l, 2048, CM_BF16, 80 * 1073741824.0, &mb);
    CU_ASSERT(fabs(mb.workspace - ws) / ws < 0.001);
}

/* Published parameter counts of open models, from their shipped config.json
 * (configs/models/, field values as the hub has them) within 1%. */
static void test_published_counts(void)
{
    static const struct { const char *name; double published; } rows[] = {
        {"falcon-7b", 6.92e9},          /* TII: 6.92B with lm_head tied to the embedding (the hub's 7.22B stores it twice) */
        {"qwen1.5-moe-a2.7b", 14.3e9},  /* Qwen blog "Qwen1.5-MoE": 14.3B total, 2.7B activated */
        {"dbrx", 132e9},                /* Databricks: 132B total, 36B active */
        {"llama3-8b", 8.03e9},          /* Meta: 8.03B */
        {"llama3-70b", 70.6e9},         /* Meta: 70.6B */
        {"mixtral-8x7b", 46.7e9},       /* Mistral: 46.7B */
        {"deepseek-v3", 671e9},         /* DeepSeek-V3 report: 671B, without the 14B MTP module */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        wl_model m;
        load(rows[i].name, &m);
        double p = wl_model_params(&m, m.vocab), rel = p / rows[i].published - 1;
        if (fabs(rel) >= 0.01) fprintf(stderr, "\n  %s: %.4g vs %.4g published\n", rows[i].name, p, rows[i].published);
        CU_ASSERT(fabs(rel) < 0.01);
    }
}

/* Each way a config names its attention and experts, as a small file: the
 * fields that were ignored before (Falcon's multi_query: +23% parameters;
 * Qwen2-MoE's shared expert; MPT/DBRX names rejected; latent attention). */
static void write_cfg(const char *path, const char *json)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(json, f);
    fclose(f);
}

static void test_config_spellings(void)
{
    char path[] = "/tmp/ts_cfg_XXXXXX.json", err[TS_ERRLEN];
    int fd = mkstemps(path, 5);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    wl_model m;
    /* Falcon-7B-like: multi_query = one key/value head; with new_decoder_architecture num_kv_heads counts */
    write_cfg(path, "{\"model_type\":\"falcon\",\"hidden_size\":256,\"num_attention_heads\":8,"
                    "\"num_hidden_layers\":2,\"vocab_size\":1000,\"multi_query\":true,\"bias\":false}");
    CU_ASSERT_EQUAL_FATAL(wl_model_load(path, &m, err, sizeof err), 0);
    CU_ASSERT_EQUAL(m.kv_heads, 1);
    CU_ASSERT(m.tied && !m.gated && !m.bias);
    CU_ASSERT_EQUAL(m.ffn, 1024);
    /* by hand: attention 256*(256+2*32) + 256^2 = 147,456; MLP 2*256*1024 = 524,288; norms 512;
     * 2 layers + embedding 256,000 (tied) + final norm 256 = 1,600,768 */
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab), 1600768.0, 0.5);
    write_cfg(path, "{\"model_type\":\"falcon\",\"hidden_size\":256,\"num_attention_heads\":8,"
                    "\"num_hidden_layers\":2,\"vocab_size\":1000,\"multi_query\":true,"
                    "\"new_decoder_architecture\":true,\"num_kv_heads\":4}");
    CU_ASSERT_EQUAL_FATAL(wl_model_load(path, &m, err, sizeof err), 0);
    CU_ASSERT_EQUAL(m.kv_heads, 4);
    write_cfg(path, "{\"model_type\":\"RefinedWeb\",\"hidden_size\":256,\"n_head\":8,\"n_layer\":2,"
                    "\"vocab_size\":1000,\"n_head_kv\":2}");
    CU_ASSERT_EQUAL_FATAL(wl_model_load(path, &m, err, sizeof err), 0);
    CU_ASSERT_EQUAL(m.kv_heads, 2);
    /* Qwen2-MoE: a shared expert of its own width beside the routed ones */
    write_cfg(path, "{\"model_type\":\"qwen2_moe\",\"hidden_size\":64,\"num_attention_heads\":4,"
                    "\"num_hidden_layers\":1,\"vocab_size\":100,\"intermediate_size\":256,\"num_experts\":4,"
                    "\"num_experts_per_tok\":2,\"moe_intermediate_size\":32,\"shared_expert_intermediate_size\":128}");
    CU_ASSERT_EQUAL_FATAL(wl_model_load(path, &m, err, sizeof err), 0);
    CU_ASSERT_EQUAL(m.shared_ffn, 128);
    /* attention 4*64^2 = 16,384; norms 128; router 4*64 = 256; experts 4*3*64*32 = 24,576;
     * shared 3*64*128 = 24,576; embeddings 2*100*64 = 12,800; final norm 64: 78,784 */
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab), 78784.0, 0.5);
    /* MPT names: d_model, n_layers, n_heads, expansion_ratio, attn_config.kv_n_heads, no_bias */
    write_cfg(path, "{\"model_type\":\"mpt\",\"d_model\":128,\"n_layers\":3,\"n_heads\":4,"
                    "\"expansion_ratio\":2,\"max_seq_len\":512,\"vocab_size\":100,\"no_bias\":true,"
                    "\"attn_config\":{\"kv_n_heads\":2}}");
    CU_ASSERT_EQUAL_FATAL(wl_model_load(path, &m, err, sizeof err), 0);
    CU_ASSERT(m.hidden == 128 && m.layers == 3 && m.heads == 4 && m.kv_heads == 2 && m.ffn == 256);
    CU_ASSERT(m.max_seq == 512 && !m.bias && m.tied);
    /* DBRX: experts in ffn_config */
    write_cfg(path, "{\"model_type\":\"dbrx\",\"d_model\":128,\"n_layers\":2,\"n_heads\":4,"
                    "\"vocab_size\":100,\"ffn_config\":{\"ffn_hidden_size\":96,\"moe_num_experts\":4,"
                    "\"moe_top_k\":2}}");
    CU_ASSERT_EQUAL_FATAL(wl_model_load(path, &m, err, sizeof err), 0);
    CU_ASSERT(m.experts == 4 && m.topk == 2 && m.moe_ffn == 96 && m.gated && !m.tied);
    /* DeepSeek MLA: h = 64, 2 heads, q_lora 16, kv_lora 8, rope 4, nope 8, v 8:
     * q 64*16 + 16 + 16*2*12 = 1,424; kv 64*(8+4) + 8 + 8*2*16 = 1,032; o 2*8*64 = 1,024 */
    write_cfg(path, "{\"model_type\":\"deepseek_v3\",\"hidden_size\":64,\"num_attention_heads\":2,"
                    "\"num_hidden_layers\":1,\"vocab_size\":10,\"intermediate_size\":32,\"q_lora_rank\":16,"
                    "\"kv_lora_rank\":8,\"qk_rope_head_dim\":4,\"qk_nope_head_dim\":8,\"v_head_dim\":8}");
    CU_ASSERT_EQUAL_FATAL(wl_model_load(path, &m, err, sizeof err), 0);
    /* + MLP 3*64*32 = 6,144, norms 128, embeddings 2*10*64 = 1,280, final norm 64 */
    CU_ASSERT_DOUBLE_EQUAL(wl_model_params(&m, m.vocab), 1424.0 + 1032 + 1024 + 6144 + 128 + 1280 + 64, 0.5);
    write_cfg(path, "{\"hidden_size\":64,\"num_attention_heads\":2,\"num_hidden_layers\":1,\"vocab_size\":10,"
                    "\"kv_lora_rank\":8}");
    CU_ASSERT_EQUAL(wl_model_load(path, &m, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "needs qk_rope_head_dim"));
    unlink(path);
}

/* wl_stage_params keeps its per-layer sums across calls (keyed on the
 * layers' kinds, each kind's figures, t and ep): with the memo on, in any
 * order of calls (slots reused by other keys), every stage's figures equal
 * the uncached ones bit for bit. Dense, MoE with leading dense layers
 * (DeepSeek-V3) and all-MoE (Mixtral); Megatron stages, uneven first and
 * last stages, AxoNN grids. */
/* wl_layout_format writes what the snprintf it replaces wrote: every length
 * of buffer (truncation, the terminating NUL), negative and extreme values,
 * both spaces, and the keys appended after the first part. */
static void test_layout_format(void)
{
    const char *lays[] = {"gx=2,gy=4,gz=1,dp=8,mbs=2,gbs=64,zero=2,recompute=full",
                          "gx=1,gy=8,gz=2,dp=64,mbs=8,gbs=1024,zero=1,recompute=selective,overlap=off",
                          "tp=8,pp=8,dp=16,gbs=1536,sp=on,recompute=selective,zero=1,vpp=3",
                          "tp=1,pp=1,dp=16,gbs=64,zero=3,hpz=2,hgz=8", "tp=4,pp=12,dp=8,mbs=2,gbs=256,pp_first=5"};
    for (size_t i = 0; i < sizeof lays / sizeof lays[0] + 2; i++) {
        wl_layout l;
        char err[TS_ERRLEN], ref[512], got[512];
        CU_ASSERT_EQUAL_FATAL(wl_layout_parse(lays[i < 5 ? i : 0], &l, err, sizeof err), 0);
        if (i == 5) l.gx = -7, l.mbs = INT_MIN, l.gbs = INT_MAX, l.zero = 0; /* the digits' corners */
        if (i == 6) l.axonn = 0, l.tp = INT_MIN, l.vpp = -1, l.gbs = 1000000000;
        int extra = l.hpz > 1 || l.hgz > 1 || l.pp_first; /* keys after the first part */
        if (l.axonn)
            snprintf(ref, sizeof ref, "gx=%d,gy=%d,gz=%d,dp=%d,mbs=%d,gbs=%d,zero=%d,recompute=%s,overlap=%s", l.gx,
                     l.gy, l.gz, l.dp, l.mbs, l.gbs, l.zero, wl_recompute_name(l.recompute),
                     l.ax_serial ? "off" : "on");
        else
            snprintf(ref, sizeof ref, "tp=%d,pp=%d,dp=%d,cp=%d,ep=%d,vpp=%d,mbs=%d,gbs=%d,zero=%d,sp=%s,recompute=%s,"
                     "schedule=%s", l.tp, l.pp, l.dp, l.cp, l.ep, l.vpp, l.mbs, l.gbs, l.zero, l.sp ? "on" : "off",
                     wl_recompute_name(l.recompute), wl_schedule_name(l.schedule));
        size_t len = strlen(ref);
        wl_layout_format(&l, got, sizeof got);
        CU_ASSERT(extra ? strncmp(got, ref, len) == 0 && strlen(got) > len : strcmp(got, ref) == 0);
        if (extra) CU_ASSERT_PTR_NOT_NULL(strstr(got, l.pp_first ? ",pp_first=5" : ",hpz=2,hgz=8"));
        for (size_t n = 0; n <= len; n++) { /* truncated inside the first part: as snprintf */
            char want[512];
            memset(got, '#', sizeof got), memset(want, '#', sizeof want);
            snprintf(want, n, "%s", ref);
            wl_layout_format(&l, got, n);
            CU_ASSERT_EQUAL(memcmp(got, want, sizeof got), 0);
        }
    }
}

static void test_stage_params_memo(void)
{
    static const struct {
        const char *model, *layout;
        int ngpus;
    } cases[] = {
        {"megatron-gpt-76b", "tp=8,pp=4,dp=4,mbs=1,gbs=64", 128},
        {"megatron-gpt-76b", "tp=4,pp=2,dp=16,mbs=1,gbs=64", 128},
        {"megatron-gpt-76b", "tp=8,pp=5,pp_first=6,pp_last=6,dp=2,mbs=1,gbs=64", 80},
        {"megatron-gpt-76b", "gx=2,gy=2,gz=2,dp=16,mbs=1,gbs=64", 128},
        {"megatron-gpt-76b", "gx=4,gy=2,gz=1,dp=16,mbs=1,gbs=64", 128},
        {"deepseek-v3", "tp=8,pp=4,pp_first=16,pp_last=15,ep=8,dp=8,mbs=1,gbs=64", 256},
        {"deepseek-v3", "tp=4,pp=8,pp_first=7,pp_last=12,ep=4,dp=8,mbs=1,gbs=64", 256},
        {"deepseek-v3", "tp=4,pp=5,pp_first=13,pp_last=12,ep=4,dp=8,mbs=1,gbs=64", 160},
        {"mixtral-8x7b", "tp=2,pp=4,ep=8,dp=8,mbs=1,gbs=64", 64},
        {"mixtral-8x7b", "tp=2,pp=4,ep=2,dp=8,mbs=1,gbs=64", 64}, /* the same but ep */
        {"mixtral-8x7b", "tp=4,pp=2,ep=2,dp=8,mbs=1,gbs=64", 64},
    };
    enum { NC = sizeof cases / sizeof cases[0], MAXST = 16 };
    static wl_model m[NC];
    static wl_layout l[NC];
    static wl_rank_params ref[NC][MAXST];
    int ok[NC], nst[NC], checked = 0;
    char err[TS_ERRLEN];
    wl_stage_params_memo(0);
    for (int c = 0; c < NC; c++) {
        load(cases[c].model, &m[c]);
        ok[c] = layout(cases[c].layout, &m[c], 4096, cases[c].ngpus, &l[c], err) == 0;
        if (!ok[c]) fprintf(stderr, "%s %s: %s\n", cases[c].model, cases[c].layout, err);
        nst[c] = l[c].axonn ? 1 : l[c].pp;
        CU_ASSERT_FATAL(nst[c] <= MAXST);
        for (int s = 0; ok[c] && s < nst[c]; s++) wl_stage_params(&m[c], &l[c], s, &ref[c][s]);
    }
    wl_stage_params_memo(1);
    /* case by case, the same backwards, then stage by stage across the cases
     * (the ep pair one after the other on the same layers) */
    for (int round = 0; round < 3; round++)
        for (int a = 0; a < NC * MAXST; a++) {
            int c = round == 2 ? a % NC : round == 1 ? NC - 1 - a / MAXST : a / MAXST, s = round == 2 ? a / NC : a % MAXST;
            if (!ok[c] || s >= nst[c]) continue;
            wl_rank_params p;
            wl_stage_params(&m[c], &l[c], s, &p);
            CU_ASSERT(memcmp(&p, &ref[c][s], sizeof p) == 0);
            checked++;
        }
    for (int c = 0; c < NC; c++) CU_ASSERT(ok[c]);
    CU_ASSERT(checked > 60);
}

void suite_workload(void)
{
    test_add_suite("workload", "model specs", test_models, "bad layouts rejected", test_bad_layouts,
                   "flops vs megatron formula", test_flops_formula, "korthikanti activation equations",
                   test_activation_equations, "memory vs hand calculation", test_memory_hand,
                   "published parameter counts", test_published_counts, "config spellings", test_config_spellings,
                   "stage parameters: memoised equal uncached", test_stage_params_memo,
                   "layout text as snprintf writes it", test_layout_format, NULL);
}

/* ---- generated op graphs ---- */

static const an_net zero_net = {8, 1e18, 0, 1e18, 0, 0, 0, 0, NULL, 0, NULL, NULL};

static og_graph *build(const char *model, const char *lay, int seq, int fuse, int one, wl_info *info, wl_model *m,
                       wl_layout *l, cm_gpu *gpu, const an_net *net)
{
    char err[TS_ERRLEN];
    load(model, m);
    if (layout(lay, m, seq, 0, l, err) < 0) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", gpu, err, sizeof err), 0);
    wl_opts o = {seq, CM_BF16, gpu, net, fuse, one, NULL};
    og_graph *g = NULL;
    CU_ASSERT_EQUAL(wl_build(m, l, &o, &g, info, err, sizeof err), 0);
    if (g && og_check(g, lay, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        CU_FAIL("generated graph fails og_check");
    }
    return g;
}

/* The FLOPs of every compute op of the graph, summed over all ranks, against
 * Megatron-LM's closed forms (B global batch, s sequence, l layers, h hidden, V vocabulary). */
static void test_graph_flops(void)
{
    const char *names[] = {"megatron-gpt-1.7b", "megatron-gpt-3.6b", "megatron-gpt-7.5b"};
    const char *lays[] = {"tp=1,pp=2,dp=2,gbs=8", "tp=2,pp=2,dp=1,mbs=2,gbs=8,sp=on", "tp=4,pp=3,dp=1,gbs=6,vpp=2"};
    for (int i = 0; i < 3; i++)
        for (int full = 0; full < 2; full++) {
            wl_model m;
            wl_layout l;
            cm_gpu gpu;
            wl_info info;
            char lay[128];
            snprintf(lay, sizeof lay, "%s%s", lays[i], full ? ",recompute=full" : "");
            og_graph *g = build(names[i], lay, 2048, 0, 0, &info, &m, &l, &gpu, &zero_net);
            CU_ASSERT_PTR_NOT_NULL_FATAL(g);
            double B = l.gbs, s = 2048, L = m.layers, h = m.hidden, V = m.vocab;
            double want = full ? 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))
                               : 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
            CU_ASSERT(fabs(info.flops - want) / want < 1e-3);
            CU_ASSERT_EQUAL(info.ranks_built, wl_layout_ngpus(&l));
            og_free(g);
        }
}

/* Sum of bytes and count of ops whose label starts with prefix, on rank r. */
static int64_t sum_ops(const og_graph *g, int r, const char *prefix, og_kind kind, int *count, int64_t *each)
{
    int64_t s = 0;
    *count = 0;
    *each = -1;
    for (int i = 0; i < g->ranks[r].nops; i++) {
        const og_op *op = &g->ranks[r].ops[i];
        if (op->kind != kind || !og_label(g, op) || strncmp(og_label(g, op), prefix, strlen(prefix))) continue;
        s += op->bytes;
        if (*each < 0) *each = op->bytes;
        else if (*each != op->bytes) *each = -2;
        (*count)++;
    }
    return s;
}

/* Megatron GPT 1.7B (h = 2304, 24 layers, V = 51200), s = 2048, tp=2 pp=2 dp=2,
 * mbs=2, gbs=8 (2 micro-batches), bf16, no SP, plain DP (zero=0), by hand:
 *   TP all-reduce (after attention and MLP, forward; after their inputs' gradients,
 *   backward): b*s*h*2 bytes = 2*2048*2304*2 = 18,874,368, 4 per layer and
 *   micro-batch: 12 layers * 2 micro-batches * 4 = 96 on a rank.
 *   PP send forward (stage 0 -> 1) and backward (1 -> 0): b*s*h*2 = 18,874,368, 2 each.
 *   DP all-reduce of fp32 gradients of stage 0: 12 layers * ((12h^2 + 7h)/2 + 6h)
 *   + embedding 51200*h/2 + positions 2048*h = 12 * 31,872,384 + 58,982,400 + 4,718,592
 *   = 446,169,600 parameters = 1,784,678,400 bytes, in buckets of 4e7 parameters
 *   (Megatron: max(4e7, 1e6*dp)): ceil(446,169,600 / 4e7) buckets at most, each but
 *   the last one at least 160 MB.
 * With sp=on: all-gather / reduce-scatter of the same 18,874,368 bytes (total, in
 * nccl-tests' convention), 4 forward and 6 backward per layer (the backward
 * re-gathers the inputs of QKV and fc1 for their weight gradients), and the PP
 * message is divided by t: 9,437,184. */
static void test_message_sizes(void)
{
    wl_model m;
    wl_layout l;
    cm_gpu gpu;
    wl_info info;
    int n;
    int64_t each;
    og_graph *g = build("megatron-gpt-1.7b", "tp=2,pp=2,dp=2,mbs=2,gbs=8", 2048, 0, 0, &info, &m, &l, &gpu, &zero_net);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->nranks, 8);
    int64_t tp = sum_ops(g, 0, "tp.all_reduce", OG_COLL, &n, &each);
    CU_ASSERT_EQUAL(n, 96);
    CU_ASSERT_EQUAL(each, 18874368);
    CU_ASSERT_EQUAL(tp, 96 * (int64_t)18874368);
    sum_ops(g, 0, "pp.send.fwd", OG_SEND, &n, &each);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(each, 18874368);
    int r1 = wl_rank_of(&l, 0, 0, 0, 1); /* stage 1 */
    CU_ASSERT_EQUAL(r1, 4);
    sum_ops(g, r1, "pp.send.bwd", OG_SEND, &n, &each);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(each, 18874368);
    int64_t dp = sum_ops(g, 0, "dp.all_reduce.grads", OG_COLL, &n, &each);
    CU_ASSERT_EQUAL(dp, (int64_t)446169600 * 4);
    CU_ASSERT(n >= 1 && n <= 12);
    /* the DP group of rank 0 is {0, 2}: same tp and pp index; every bucket
     * but the last holds at least 4e7 fp32 gradients */
    int small = 0;
    for (int i = 0; i < g->ranks[0].nops; i++) {
        const og_op *op = &g->ranks[0].ops[i];
        if (op->kind == OG_COLL && strncmp(og_label(g, op), "dp.all_reduce.grads", 19) == 0) {
            CU_ASSERT_EQUAL(g->groups[op->group].n, 2);
            CU_ASSERT_EQUAL(g->groups[op->group].ranks[1], 2);
            small += op->bytes < (int64_t)160000000;
        }
    }
    CU_ASSERT(small <= 1);
    /* stage 1: 12 layers + final norm 2h + the output layer's copy of the tied
     * embedding 51200*h/2 = 382,468,608 + 4,608 + 58,982,400 = 441,455,616 parameters */
    dp = sum_ops(g, r1, "dp.all_reduce.grads", OG_COLL, &n, &each);
    CU_ASSERT_EQUAL(dp, (int64_t)441455616 * 4);
    /* and the tied embedding's gradient, summed between first and last stage */
    sum_ops(g, r1, "dp.all_reduce.embedding", OG_COLL, &n, &each);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(each, (int64_t)58982400 * 4);
    og_free(g);

    g = build("megatron-gpt-1.7b", "tp=2,pp=2,dp=2,mbs=2,gbs=8,sp=on", 2048, 0, 0, &info, &m, &l, &gpu, &zero_net);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    sum_ops(g, 0, "tp.all_gather", OG_COLL, &n, &each);
    CU_ASSERT_EQUAL(n, 12 * 2 * (2 + 4));
    CU_ASSERT_EQUAL(each, 18874368);
    sum_ops(g, 0, "tp.reduce_scatter", OG_COLL, &n, &each);
    CU_ASSERT_EQUAL(n, 12 * 2 * (2 + 2));
    CU_ASSERT_EQUAL(each, 18874368);
    sum_ops(g, 0, "pp.send.fwd", OG_SEND, &n, &each);
    CU_ASSERT_EQUAL(each, 9437184);
    og_free(g);

    /* an explicit placement order names each rank's host: stage 1 of dp replica 0 on gpu-2 */
    g = build("megatron-gpt-1.7b", "tp=2,pp=2,dp=2,mbs=2,gbs=8,order=tp-pp-dp-cp", 2048, 0, 0, &info, &m, &l, &gpu,
              &zero_net);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_STRING_EQUAL(g->ranks[4].host, "gpu-2");
    CU_ASSERT_STRING_EQUAL(g->ranks[2].host, "gpu-4");
    og_free(g);

    /* Mixtral 8x7B (h = 4096, top-2), s = 4096, tp=1 ep=2 dp=2, one micro-batch:
     * token all-to-all before and after the experts, forward and backward,
     * tokens*topk*h*2 = 4096*2*4096*2 = 67,108,864 bytes each, 4 per layer: 128. */
    g = build("mixtral-8x7b", "tp=1,pp=1,dp=2,ep=2,gbs=2", 4096, 0, 0, &info, &m, &l, &gpu, &zero_net);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    sum_ops(g, 0, "ep.alltoall", OG_COLL, &n, &each);
    CU_ASSERT_EQUAL(n, 128);
    CU_ASSERT_EQUAL(each, 67108864);
    og_free(g);
}

static double label_duration(const og_graph *g, int r, const char *label)
{
    for (int i = 0; i < g->ranks[r].nops; i++)
        if (og_label(g, &g->ranks[r].ops[i]) && strcmp(og_label(g, &g->ranks[r].ops[i]), label) == 0)
            return g->ranks[r].ops[i].duration;
    return 0;
}

/* Bubble fraction of stage 0: idle time over the pipeline's span (the
 * iteration minus the optimizer step that follows it). */
static double bubble(const char *lay, double *makespan)
{
    wl_model m;
    wl_layout l;
    cm_gpu gpu;
    wl_info info;
    char err[TS_ERRLEN];
    og_graph *g = build(test_data("model_equal_stages.json"), lay, 1024, 0, 0, &info, &m, &l, &gpu, &zero_net);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    eng_result *res = NULL;
    CU_ASSERT_EQUAL_FATAL(an_run(g, &zero_net, &res, err, sizeof err), 0);
    double b[AN_NCATS];
    an_breakdown(g, res, 0, b);
    double span = res->makespan - label_duration(g, 0, "comp.optimizer");
    *makespan = res->makespan;
    eng_result_free(res);
    og_free(g);
    return b[AN_IDLE] / span;
}

static void test_bubbles(void)
{
    double ms;
    int p = 4, m = 8, v = 2;
    double f1 = bubble("tp=1,pp=4,dp=1,gbs=8", &ms);
    double want = (double)(p - 1) / (m + p - 1);
    CU_ASSERT(fabs(f1 - want) < 0.005);
    double f8 = bubble("tp=1,pp=4,dp=1,gbs=24", &ms);
    CU_ASSERT(fabs(f8 - 3.0 / 27) < 0.005);
    double fi = bubble("tp=1,pp=4,dp=1,gbs=8,vpp=2", &ms);
    double wanti = (double)(p - 1) / v / (m + (double)(p - 1) / v);
    CU_ASSERT(fabs(fi - wanti) < 0.005);
    double fz = bubble("tp=1,pp=4,dp=1,gbs=8,schedule=zbh1", &ms);
    CU_ASSERT(fz < f1 - 0.05);
    double fg = bubble("tp=1,pp=4,dp=1,gbs=8,schedule=gpipe", &ms);
    CU_ASSERT(fabs(fg - want) < 0.005); /* GPipe has the same bubble as 1F1B (more memory) */
    fprintf(stderr, "  [bubbles p=4 m=8: 1f1b %.4f (closed form %.4f), m=24 %.4f, interleaved v=2 %.4f (%.4f), zbh1 %.4f, gpipe %.4f]\n",
            f1, want, f8, fi, wanti, fz, fg);
}

/* The same generated graph on SimGrid (contention-free crossbar, zero latency,
 * very fast links) and on the analytical model: the same iteration time. */
static void test_engine_agrees(void)
{
    wl_model m;
    wl_layout l;
    cm_gpu gpu;
    wl_info info;
    char err[TS_ERRLEN];
    og_graph *g = build(test_data("model_equal_stages.json"), "tp=2,pp=2,dp=2,gbs=8", 1024, 0, 0, &info, &m, &l, &gpu,
                        &zero_net);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    eng_result *res = NULL;
    CU_ASSERT_EQUAL_FATAL(an_run(g, &zero_net, &res, err, sizeof err), 0);
    const char *plat = test_crossbar(8, 1e15, 0);
    eng_opts o = {ENG_PIPELINED, 0, 0, 0, 0};
    test_outcome t;
    CU_ASSERT_EQUAL(test_sim(plat, g, &o, &t), 0);
    CU_ASSERT(fabs(t.makespan - res->makespan) / res->makespan < 1e-3);
    remove(plat);
    eng_result_free(res);
    og_free(g);
}

/* Uneven stages (pp_first / pp_last): each stage's forward GEMMs name exactly
 * the layers the rule gives it, the whole graph still counts every layer's
 * FLOPs once, and memory and parameters follow the stage's layer count. */
static void test_uneven_stages(void)
{
    wl_model m;
    wl_layout l;
    cm_gpu gpu;
    wl_info info;
    char err[TS_ERRLEN];
    /* 16 layers on 4 stages: 3 first, 5 last, the 8 left split 4 + 4 */
    const int lo[4] = {0, 3, 7, 11}, n[4] = {3, 4, 4, 5};
    og_graph *g = build(test_data("model_equal_stages.json"), "tp=1,pp=4,dp=1,gbs=4,pp_first=3,pp_last=5", 1024,
                        0, 0, &info, &m, &l, &gpu, &zero_net);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL_FATAL(g->nranks, 4);
    for (int st = 0; st < 4; st++) {
        int first, cnt = wl_stage_layers(&m, &l, st, &first);
        CU_ASSERT_EQUAL(cnt, n[st]);
        CU_ASSERT_EQUAL(first, lo[st]);
        /* the layers whose forward runs on the stage's rank (micro-batch 0) */
        int seen[16] = {0}, nseen = 0;
        for (int i = 0; i < g->ranks[st].nops; i++) {
            const char *lab = og_label(g, &g->ranks[st].ops[i]);
            int li, mb;
            char what[64];
            if (!lab || sscanf(lab, "comp.%63[^.].l%d.mb%d", what, &li, &mb) != 3 || mb != 0) continue;
            if (strcmp(what, "qkv") && strncmp(what, "fc1", 3) && strncmp(what, "attn", 4) && strcmp(what, "proj"))
                continue;
            CU_ASSERT_FATAL(li >= 0 && li < 16);
            if (!seen[li]++) nseen++;
        }
        CU_ASSERT_EQUAL(nseen, n[st]);
        for (int li = 0; li < 16; li++) CU_ASSERT_EQUAL(seen[li] != 0, li >= lo[st] && li < lo[st] + n[st]);
    }
    CU_ASSERT(fabs(info.flops - wl_iteration_flops(&m, &l, 1024, WL_FLOPS_EXECUTED)) /
                  wl_iteration_flops(&m, &l, 1024, WL_FLOPS_EXECUTED) < 1e-9);
    og_free(g);

    /* parameters and memory: the last stage (5 layers) holds more than the first (3) */
    wl_rank_params p0, p3, p1;
    wl_stage_params(&m, &l, 0, &p0);
    wl_stage_params(&m, &l, 1, &p1);
    wl_stage_params(&m, &l, 3, &p3);
    CU_ASSERT(fabs(p1.dense - 4 * p1.layer) < 1);
    CU_ASSERT(p3.dense >= 5 * p3.layer); /* and the output layer */
    CU_ASSERT(p3.dense > p0.dense);

    /* an even split given as pp_first/pp_last builds the graph of the even layout */
    wl_layout a, b;
    CU_ASSERT_EQUAL(wl_layout_parse("tp=1,pp=4,dp=1,gbs=4,pp_first=4,pp_last=4", &a, err, sizeof err), 0);
    CU_ASSERT_EQUAL(wl_layout_check(&a, &m, 1024, 0, err, sizeof err), 0);
    CU_ASSERT_EQUAL(wl_layout_parse("tp=1,pp=4,dp=1,gbs=4", &b, err, sizeof err), 0);
    CU_ASSERT_EQUAL(wl_layout_check(&b, &m, 1024, 0, err, sizeof err), 0);
    mem_breakdown ma, mb2;
    mem_estimate(&m, &a, 1024, CM_BF16, 80e9, &ma);
    mem_estimate(&m, &b, 1024, CM_BF16, 80e9, &mb2);
    CU_ASSERT_DOUBLE_EQUAL(ma.total, mb2.total, 1);
    /* memory takes the heaviest stage: 8 layers on stage 1 outweigh stage 0's 2 */
    CU_ASSERT_EQUAL(wl_layout_parse("tp=1,pp=4,dp=1,gbs=4,pp_first=2,pp_last=2", &a, err, sizeof err), 0);
    CU_ASSERT_EQUAL(wl_layout_check(&a, &m, 1024, 0, err, sizeof err), 0);
    mem_estimate(&m, &a, 1024, CM_BF16, 80e9, &ma);
    CU_ASSERT_EQUAL(ma.stage, 1);
    CU_ASSERT(ma.total > mb2.total);

    /* splits that do not work are refused with the reason */
    const char *bad[] = {"tp=1,pp=4,gbs=4,pp_first=3,pp_last=4", "tp=1,pp=1,gbs=4,pp_first=3",
                         "tp=1,pp=2,gbs=4,pp_first=3,pp_last=4", "tp=1,pp=4,gbs=4,pp_first=2,vpp=2,schedule=interleaved"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL_FATAL(wl_layout_parse(bad[i], &a, err, sizeof err), 0);
        a.dp = 1;
        CU_ASSERT_EQUAL(wl_layout_check(&a, &m, 1024, 0, err, sizeof err), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "pp_first"));
    }
}

/* DeepSpeed's pipeline engine (stack ds_pipe): every pipeline transfer sits on
 * the compute stream (blocking, as p2p.py's broadcasts), the graph has no
 * deadlock, and, each step exchanging with one neighbour in the opposite
 * phase, the iteration stays within 4% of Megatron-LM 2021's 1F1B on the same
 * layout, its output restore included (docs/workload.md, "DeepSpeed's pipeline engine"). */
static void test_ds_pipe(void)
{
    an_net net;
    CU_ASSERT_EQUAL_FATAL(an_net_default("A100", &net), 0);
    double span[2];
    const char *stacks[2] = {"megatron-2021", "deepspeed-2021"};
    for (int k = 0; k < 2; k++) {
        wl_model m;
        wl_layout l;
        cm_gpu gpu;
        wl_info info;
        char err[TS_ERRLEN];
        load("megatron-gpt-1.7b", &m);
        CU_ASSERT_EQUAL_FATAL(layout("tp=2,pp=4,dp=1,gbs=12,recompute=full", &m, 2048, 0, &l, err), 0);
        const wl_stack *st = wl_stack_find(stacks[k], err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(st);
        wl_layout_apply_stack(&l, st);
        CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &gpu, err, sizeof err), 0);
        wl_opts o = {2048, CM_BF16, &gpu, &net, 1, 0, st};
        og_graph *g = NULL;
        CU_ASSERT_EQUAL_FATAL(wl_build(&m, &l, &o, &g, &info, err, sizeof err), 0);
        CU_ASSERT_EQUAL(og_check(g, "ds_pipe", err, sizeof err), 0);
        int sends = 0, on_compute = 0;
        for (int r = 0; r < g->nranks; r++)
            for (int i = 0; i < g->ranks[r].nops; i++) {
                const og_op *op = &g->ranks[r].ops[i];
                if (op->kind != OG_SEND) continue;
                sends++;
                on_compute += op->stream == WL_S_COMPUTE;
            }
        /* 12 micro-batches over 3 stage boundaries, both ways, on each of the 2 TP ranks */
        CU_ASSERT_EQUAL(sends, 12 * 3 * 2 * 2);
        CU_ASSERT_EQUAL(on_compute, k == 1 ? sends : 0);
        eng_result *res = NULL;
        CU_ASSERT_EQUAL_FATAL(an_run(g, &net, &res, err, sizeof err), 0);
        span[k] = res->makespan;
        eng_result_free(res);
        og_free(g);
    }
    /* within 4% of 1F1B either way: the order alone cost under 2%, the engine's output restore
     * (one TP all-gather of the activation per backward, test_ds_bf16) adds to it, and its
     * transfers, deferred to the next step, wait less than Megatron-LM 2021's calls (each
     * awaiting its sends with torch.cuda.synchronize()): -0.5% here. (It read +1.7% while
     * BF16_Optimizer's fallback copies sat on the compute stream before the last SendGrad,
     * holding every upstream stage: test_ds_fallback.) */
    CU_ASSERT(fabs(span[1] - span[0]) / span[0] < 0.04);
}

/* Under DeepSpeed's pipeline engine bf16 runs the BF16_Optimizer of 2022
 * (deepspeed-2021's ds_bf16_optim): its fp32 gradients are all-reduced over DP,
 * whole (_bf16_reduce_grads), as the 2021 engine all-reduces fp16's (test_ds_fallback),
 * where megatron-deepspeed's ZeRO-1 reduce-scatters, and it holds fp32 gradients of all its parameters;
 * the engine's backward all-gathers its partitioned output over TP on every
 * stage but the last (part_output.full()). */
static void test_ds_bf16(void)
{
    an_net net;
    CU_ASSERT_EQUAL_FATAL(an_net_default("A100", &net), 0);
    struct { const char *stack; cm_dtype dt; og_coll want; int restore; } c[] = {
        {"deepspeed-2021", CM_BF16, OG_ALLREDUCE, 1},
        {"deepspeed-2021", CM_FP16, OG_ALLREDUCE, 1},
        {"megatron-deepspeed", CM_BF16, OG_REDUCESCATTER, 0},
        {"megatron-2021", CM_BF16, OG_REDUCESCATTER, 0},
    };
    double grad_bytes[4];
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        wl_model m;
        wl_layout l;
        cm_gpu gpu;
        wl_info info;
        char err[TS_ERRLEN];
        load("megatron-gpt-1.7b", &m);
        CU_ASSERT_EQUAL_FATAL(layout("tp=2,pp=2,dp=2,gbs=8,zero=1,recompute=full", &m, 2048, 0, &l, err), 0);
        const wl_stack *st = wl_stack_find(c[k].stack, err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(st);
        wl_layout_apply_stack(&l, st);
        CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &gpu, err, sizeof err), 0);
        wl_opts o = {2048, c[k].dt, &gpu, &net, 0, 0, st};
        og_graph *g = NULL;
        CU_ASSERT_EQUAL_FATAL(wl_build(&m, &l, &o, &g, &info, err, sizeof err), 0);
        int ngrad = 0, nother = 0, nrestore = 0;
        grad_bytes[k] = 0;
        for (int r = 0; r < g->nranks; r++)
            for (int i = 0; i < g->ranks[r].nops; i++) {
                const og_op *op = &g->ranks[r].ops[i];
                if (!og_label(g, op)) continue;
                if (op->kind == OG_COLL && strstr(og_label(g, op), "grads")) {
                    ngrad++;
                    nother += op->coll != c[k].want;
                    grad_bytes[k] += (double)op->bytes;
                }
                if (strstr(og_label(g, op), "pp_restore")) {
                    nrestore++;
                    CU_ASSERT(op->kind == OG_COLL && op->coll == OG_ALLGATHER);
                    CU_ASSERT(r < 4); /* stage 0 (ranks 0-3) only: the last stage sends no activation */
                }
            }
        CU_ASSERT(ngrad > 0);
        CU_ASSERT_EQUAL(nother, 0);
        /* 4 micro-batches per replica, the 4 ranks of stage 0 */
        CU_ASSERT_EQUAL(nrestore, c[k].restore ? 4 * 4 : 0);
        /* memory: BF16_Optimizer keeps fp32 gradients of every parameter beside the bf16 ones
         * (6 B each), DeepSpeed's ZeRO-1 16-bit gradients only (2 B) */
        mem_breakdown mb;
        mem_estimate(&m, &l, 2048, c[k].dt, 80e9, &mb);
        wl_rank_params rp;
        wl_stage_params(&m, &l, mb.stage, &rp);
        if (k == 0) CU_ASSERT_DOUBLE_EQUAL(mb.grads, 6 * rp.total, 1);
        if (k == 1 || k == 2) CU_ASSERT_DOUBLE_EQUAL(mb.grads, 2 * rp.total, 1);
        og_free(g);
    }
    /* bf16 and fp16 reduce the same elements, fp32 (4 bytes) against fp16 (2) */
    CU_ASSERT(fabs(grad_bytes[0] / grad_bytes[1] - 2) < 0.01);
}

/* The fused graph's critical path (as trainsim run builds it) and the direct
 * estimate of the same layout. */
static void span_and_estimate(const wl_model *m, const wl_layout *l, const wl_opts *o, double *span, double *est)
{
    char err[TS_ERRLEN];
    og_graph *g = NULL;
    wl_info info;
    CU_ASSERT_EQUAL_FATAL(wl_build(m, l, o, &g, &info, err, sizeof err), 0);
    eng_result *res = NULL;
    CU_ASSERT_EQUAL_FATAL(an_run(g, o->net, &res, err, sizeof err), 0);
    *span = res->makespan;
    eng_result_free(res);
    og_free(g);
    wl_est e;
    CU_ASSERT_EQUAL_FATAL(wl_estimate(m, l, o, &e, err, sizeof err), 0);
    *est = e.iter;
}

/* DeepSpeed's pipeline engine of 2021 sent the input gradient whole from every TP
 * rank (engine.py: is_grad_partitioned = False; layout pp_grad_sg=off) while the
 * activations crossed as 1/tp partitions: the backward messages carry tp times
 * the bytes, the forward ones are unchanged, the received gradient needs no TP
 * all-gather, the iteration gets longer, and the direct estimate follows the
 * graph (docs/workload.md, "DeepSpeed's pipeline engine"). */
static void test_ds_grad_whole(void)
{
    an_net net;
    CU_ASSERT_EQUAL_FATAL(an_net_default("A100", &net), 0);
    /* tp=8: the pipeline boundary crosses nodes, where the whole gradient costs more than
     * its part and the gather (inside a node they cost about the same) */
    const char *lay[2] = {"tp=8,pp=2,dp=1,gbs=12,recompute=full", "tp=8,pp=2,dp=1,gbs=12,recompute=full,pp_grad_sg=off"};
    double fwd_bytes[2] = {0}, bwd_bytes[2] = {0}, span[2], est[2];
    int gathers[2] = {0}, nfwd[2] = {0}, nbwd[2] = {0};
    wl_model m;
    load("megatron-gpt-1.7b", &m);
    for (int k = 0; k < 2; k++) {
        wl_layout l;
        cm_gpu gpu;
        wl_info info;
        char err[TS_ERRLEN], buf[512];
        CU_ASSERT_EQUAL_FATAL(layout(lay[k], &m, 2048, 0, &l, err), 0);
        wl_layout_format(&l, buf, sizeof buf);
        CU_ASSERT_EQUAL(strstr(buf, ",pp_grad_sg=off") != NULL, k);
        const wl_stack *st = wl_stack_find("deepspeed-2021", err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(st);
        wl_layout_apply_stack(&l, st);
        CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &gpu, err, sizeof err), 0);
        /* unfused: the TP all-gathers stay collectives, the messages are countable */
        wl_opts o = {2048, CM_BF16, &gpu, &net, 0, 0, st};
        og_graph *g = NULL;
        CU_ASSERT_EQUAL_FATAL(wl_build(&m, &l, &o, &g, &info, err, sizeof err), 0);
        CU_ASSERT_EQUAL(og_check(g, "ds_grad_whole", err, sizeof err), 0);
        for (int r = 0; r < g->nranks; r++)
            for (int i = 0; i < g->ranks[r].nops; i++) {
                const og_op *op = &g->ranks[r].ops[i];
                const char *lb = og_label(g, op);
                if (!lb) continue;
                if (op->kind == OG_SEND && strstr(lb, "pp.send.fwd")) nfwd[k]++, fwd_bytes[k] = (double)op->bytes;
                if (op->kind == OG_SEND && strstr(lb, "pp.send.bwd")) nbwd[k]++, bwd_bytes[k] = (double)op->bytes;
                if (op->kind == OG_COLL && strstr(lb, "pp_gather")) gathers[k]++;
            }
        og_free(g);
        /* fused, as trainsim run builds it: the critical path and the direct estimate */
        wl_opts of = {2048, CM_BF16, &gpu, &net, 1, 0, st};
        span_and_estimate(&m, &l, &of, &span[k], &est[k]);
    }
    double whole = 2048.0 * m.hidden * 2; /* one micro-batch's activation, bf16 */
    /* 12 micro-batches over 1 boundary each way, on each of the 8 TP ranks */
    CU_ASSERT_EQUAL(nfwd[0], 12 * 8);
    CU_ASSERT_EQUAL(nbwd[1], 12 * 8);
    CU_ASSERT_DOUBLE_EQUAL(fwd_bytes[0], whole / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(fwd_bytes[1], whole / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(bwd_bytes[0], whole / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(bwd_bytes[1], whole, 1);
    /* a gather after each received activation and gradient; whole gradients: activations only */
    CU_ASSERT(gathers[0] > 0);
    CU_ASSERT_EQUAL(gathers[1] * 2, gathers[0]);
    CU_ASSERT(span[1] > span[0]);
    CU_ASSERT(est[1] > est[0]);
    /* the estimate follows the graph: within 3% of it (on this 2-stage pipeline the graph
     * hides part of the wider transfers in the first stage's slack, the estimate charges
     * each slot; on MT-NLG's 35 balanced stages the two add 0.97 and 0.90 s) */
    if (fabs(est[1] - span[1]) / span[1] >= 0.03)
        fprintf(stderr, "\n  graph %.4f -> %.4f, estimate %.4f -> %.4f\n", span[0], span[1], est[0], est[1]);
    CU_ASSERT(fabs(est[1] - span[1]) / span[1] < 0.03);
}

/* DeepSpeed's pipeline engine of 2021 (deepspeed-2021's ds_ar_fallback): its ReduceGrads
 * instruction all-reduces every 16-bit gradient whole through buffered_allreduce_fallback
 * even under ZeRO-1 (samyam/DeepSpeed @f095c7da engine.py _exec_reduce_grads), with the
 * fallback's flatten, scale and copy back (six passes over each element) before it; the
 * 2023 engine (megatron-deepspeed) hands ZeRO-1 its reduce-scatter. The copies follow the
 * stage's last SendGrad (ReduceGrads is the schedule's last step): they never hold a
 * pipeline transfer, and the graph's critical path stays with the direct estimate. */
static void test_ds_fallback(void)
{
    an_net net;
    CU_ASSERT_EQUAL_FATAL(an_net_default("A100", &net), 0);
    const char *stacks[2] = {"deepspeed-2021", "megatron-deepspeed"};
    double elems[2] = {0}, copy_s[2] = {0}, span[2], est[2];
    wl_model m;
    load("megatron-gpt-1.7b", &m);
    cm_gpu gpu;
    char err[TS_ERRLEN];
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &gpu, err, sizeof err), 0);
    for (int k = 0; k < 2; k++) {
        wl_layout l;
        wl_info info;
        CU_ASSERT_EQUAL_FATAL(layout("tp=2,pp=4,dp=2,gbs=16,zero=1,recompute=full,overlap_grad=off", &m, 2048, 0, &l, err), 0);
        const wl_stack *st = wl_stack_find(stacks[k], err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(st);
        wl_layout_apply_stack(&l, st);
        wl_opts o = {2048, CM_FP16, &gpu, &net, 0, 0, st};
        og_graph *g = NULL;
        CU_ASSERT_EQUAL_FATAL(wl_build(&m, &l, &o, &g, &info, err, sizeof err), 0);
        CU_ASSERT_EQUAL(og_check(g, "ds_fallback", err, sizeof err), 0);
        int ngrad = 0, nwrong = 0, ncopy = 0;
        for (int r = 0; r < g->nranks; r++) {
            int flat = -1;
            for (int i = 0; i < g->ranks[r].nops; i++) {
                const og_op *op = &g->ranks[r].ops[i];
                const char *lb = og_label(g, op);
                if (!lb) continue;
                if (op->kind == OG_COLL && strstr(lb, "grads")) {
                    ngrad++;
                    nwrong += op->coll != (k == 0 ? OG_ALLREDUCE : OG_REDUCESCATTER);
                    if (r == 0) elems[k] += (double)op->bytes / 2;
                }
                if (strstr(lb, "dp_flatten")) {
                    ncopy++, flat = i;
                    CU_ASSERT_EQUAL(op->stream, WL_S_DP);
                    if (r == 0) copy_s[k] += op->duration;
                }
                /* no pipeline transfer waits for the copies */
                if ((op->kind == OG_SEND || op->kind == OG_RECV) && flat >= 0)
                    for (int d = 0; d < op->ndeps; d++) CU_ASSERT(og_deps(op)[d] != flat);
            }
        }
        CU_ASSERT(ngrad > 0);
        CU_ASSERT_EQUAL(nwrong, 0);
        CU_ASSERT_EQUAL(ncopy > 0, k == 0);
        og_free(g);
        wl_opts of = {2048, CM_FP16, &gpu, &net, 1, 0, st};
        span_and_estimate(&m, &l, &of, &span[k], &est[k]);
    }
    /* the fallback's passes: six reads or writes of each fp16 gradient element, at the streaming rate */
    CU_ASSERT(elems[0] > 0);
    CU_ASSERT(copy_s[0] >= cm_mem_time(&gpu, elems[0] * 6 * 2, 3) * 0.99 &&
              copy_s[0] <= cm_mem_time(&gpu, elems[0] * 6 * 2, 3) * 1.01);
    /* the graph's critical path follows the estimate (within 3%), under either engine */
    for (int k = 0; k < 2; k++) {
        if (fabs(est[k] - span[k]) / span[k] >= 0.03)
            fprintf(stderr, "\n  %s: graph %.4f, estimate %.4f\n", stacks[k], span[k], est[k]);
        CU_ASSERT(fabs(est[k] - span[k]) / span[k] < 0.03);
    }
}

/* DeepSpeed's BF16_Optimizer adds each backward's bf16 weight gradients into its fp32
 * gradients in update_hp_grads, hp_grad.add_(lp.grad.to(fp32)): a cast that materialises
 * an fp32 copy, then the add, 18 bytes per element in two kernels, where Megatron-LM
 * 2021's unfused accumulation moves 10 in one. The weight-gradient GEMMs are the same
 * kernels: every wgrad op differs from Megatron's by exactly that much. */
static void test_ds_bf16_accum(void)
{
    an_net net;
    CU_ASSERT_EQUAL_FATAL(an_net_default("A100", &net), 0);
    wl_model m;
    load("megatron-gpt-1.7b", &m);
    cm_gpu gpu;
    char err[TS_ERRLEN];
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &gpu, err, sizeof err), 0);
    const char *stacks[2] = {"deepspeed-2021", "megatron-2021"};
    double sum[2] = {0}, dense = 0, expert = 0;
    int n[2] = {0};
    for (int k = 0; k < 2; k++) {
        wl_layout l;
        wl_info info;
        CU_ASSERT_EQUAL_FATAL(layout("tp=2,pp=2,dp=1,gbs=8,zero=1,recompute=full", &m, 2048, 0, &l, err), 0);
        const wl_stack *st = wl_stack_find(stacks[k], err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(st);
        wl_layout_apply_stack(&l, st);
        wl_opts o = {2048, CM_BF16, &gpu, &net, 0, 0, st};
        og_graph *g = NULL;
        CU_ASSERT_EQUAL_FATAL(wl_build(&m, &l, &o, &g, &info, err, sizeof err), 0);
        const og_rank *r = &g->ranks[0]; /* stage 0: transformer layers only */
        for (int i = 0; i < r->nops; i++) {
            const char *lb = og_label(g, &r->ops[i]);
            if (r->ops[i].kind == OG_COMPUTE && lb && !strncmp(lb, "comp.wgrad.", 11)) n[k]++, sum[k] += r->ops[i].duration;
        }
        og_free(g);
        wl_layer_params(&m, &l, 0, &dense, &expert);
    }
    /* four weight GEMMs a layer and micro-batch (qkv, proj, fc1, fc2), the same on both stacks */
    CU_ASSERT(n[0] > 0 && n[0] == n[1] && n[0] % 4 == 0);
    /* each wgrad op: one kernel more and 8 bytes more per weight element (18 against 10);
     * the layer's weights are its dense parameters but for the biases and norms (< 0.2%) */
    double want = n[0] * gpu.kernel_overhead + 8 * (n[0] / 4) * dense / gpu.hbm_eff;
    CU_ASSERT(sum[0] > sum[1]);
    CU_ASSERT(fabs((sum[0] - sum[1]) - want) / want < 0.01);
}

static void test_estimate(void);

void suite_workload_graph(void)
{
    test_add_suite("workload_graph", "graph flops vs megatron formula", test_graph_flops, "message sizes by hand",
                   test_message_sizes, "pipeline bubbles", test_bubbles, "engine agrees with analytic",
                   test_engine_agrees, "direct estimate vs graph", test_estimate, "uneven pipeline stages", test_uneven_stages,
                   "DeepSpeed pipeline engine", test_ds_pipe,
                   "DeepSpeed BF16_Optimizer and output restore", test_ds_bf16,
                   "DeepSpeed 2021's fallback all-reduce", test_ds_fallback,
                   "DeepSpeed BF16_Optimizer's gradient accumulation", test_ds_bf16_accum,
                   "DeepSpeed 2021's whole pipeline gradients", test_ds_grad_whole, NULL);
}

/* ---- trainsim run ---- */

static char cli_out[1 << 16];

static void test_run_cli(void)
{
    CU_ASSERT_EQUAL(test_cli("run --help", cli_out, sizeof cli_out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(cli_out, "usage: trainsim run"));
    /* bad layouts: exit status 2 with the reason */
    CU_ASSERT_EQUAL(test_cli("run --model gpt3-175b --layout tp=5,pp=8,dp=16 --fidelity analytical", cli_out,
                             sizeof cli_out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "tp=5 does not divide 96 attention heads"));
    CU_ASSERT_EQUAL(test_cli("run --model gpt3-175b --layout tp=8,pp=8,dp=16 --gpus 512 --fidelity analytical",
                             cli_out, sizeof cli_out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "= 1024 gpus, but the platform has 512"));
    CU_ASSERT_EQUAL(test_cli("run --model gpt3-175b --layout tp=8,pp=8,dp=16", cli_out, sizeof cli_out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "--platform is required"));
    CU_ASSERT_EQUAL(test_cli("run --model nosuch --layout tp=1 --fidelity analytical", cli_out, sizeof cli_out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "unknown model 'nosuch'"));

    /* a graph too large to build is refused at once, pointing to the estimate */
    CU_ASSERT_EQUAL(test_cli("run --model megatron-gpt-1.7b --layout tp=8,pp=2,dp=64,gbs=10000000 --gpu h100 "
                             "--fidelity analytical --detail full", cli_out, sizeof cli_out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "use --fidelity estimate"));

    /* oversized: reported with the breakdown, not simulated, exit status 1 */
    const char *js = test_tmp("run.json");
    char args[512];
    snprintf(args, sizeof args, "run --model gpt3-175b --layout tp=8,pp=1,dp=1,gbs=1 --seq 2048 --gpu a100 "
                                "--fidelity analytical --json %s", js);
    CU_ASSERT_EQUAL(test_cli(args, cli_out, sizeof cli_out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(cli_out, "DOES NOT FIT"));
    CU_ASSERT_PTR_NOT_NULL(strstr(cli_out, "not simulated"));
    json_error_t je;
    json_t *j = json_load_file(js, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT(json_is_false(json_object_get(json_object_get(j, "memory"), "fits")));
    CU_ASSERT_PTR_NULL(json_object_get(j, "iteration_s"));
    json_decref(j);

    /* a run: the JSON's throughput is consistent with its iteration time */
    snprintf(args, sizeof args, "run --model megatron-gpt-1.7b --layout tp=2,pp=2,dp=4,gbs=64 --seq 2048 "
                                "--gpu a100 --fidelity analytical --json %s", js);
    CU_ASSERT_EQUAL(test_cli(args, cli_out, sizeof cli_out), 0);
    j = json_load_file(js, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    double it = json_number_value(json_object_get(j, "iteration_s"));
    double tok = json_number_value(json_object_get(j, "tokens_per_s"));
    CU_ASSERT(it > 0);
    CU_ASSERT_DOUBLE_EQUAL(tok, 64.0 * 2048 / it, 1e-6 * tok);
    json_t *bd = json_object_get(j, "breakdown_s");
    double sum = 0;
    const char *k;
    json_t *v;
    json_object_foreach(bd, k, v) sum += json_number_value(v);
    CU_ASSERT_DOUBLE_EQUAL(sum, it, 1e-6 * it); /* the breakdown covers the iteration */
    json_decref(j);
    remove(js);

    /* the SimGrid path on two DGX H100 nodes of the shipped cluster and the
     * analytical path, which takes its network figures from the same cluster and
     * costs each collective as the engine's pipelined fidelity runs it (same
     * algorithm and protocol choice, NVLS included), agree within 0.5%; the step
     * fidelity runs every schedule step after the previous one and cannot be faster */
    const char *lay = "--model megatron-gpt-1.7b --layout tp=8,pp=2,dp=1,gbs=8 --seq 2048 --detail full";
    double t[3];
    const char *fid[3] = {"pipelined", "step", "analytical"};
    double bub[3], pp[3];
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "run %s --platform dgx-h100-superpod --nodes 2 --fidelity %s --json %s", lay,
                 fid[i], js);
        CU_ASSERT_EQUAL(test_cli(args, cli_out, sizeof cli_out), 0);
        const char *p = strstr(cli_out, "iteration ");
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        t[i] = atof(p + 10);
        j = json_load_file(js, 0, &je);
        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        bub[i] = json_number_value(json_object_get(json_object_get(j, "breakdown_s"), "bubble"));
        pp[i] = json_number_value(json_object_get(json_object_get(j, "breakdown_s"), "pp"));
        json_decref(j);
    }
    CU_ASSERT(fabs(t[0] - t[2]) / t[2] < 0.005);
    CU_ASSERT(t[1] >= t[0] * (1 - 1e-9));
    /* waiting for a pipeline peer is bubble in both paths, the transfers themselves pp */
    CU_ASSERT(bub[2] > 0);
    CU_ASSERT(fabs(bub[0] - bub[2]) < 0.01 * t[2]);
    CU_ASSERT(fabs(pp[0] - pp[2]) < 0.01 * t[2]);
    remove(js);

    /* --timeline writes a Chrome trace; the same inputs give byte-identical JSON */
    const char *tl = test_tmp("run-tl.json"), *js2 = test_tmp("run2.json");
    char a2[512];
    snprintf(args, sizeof args, "run --model megatron-gpt-1.7b --layout tp=2,pp=2,dp=2,gbs=8 --gpu h100 "
                                "--fidelity analytical --timeline %s --json %s", tl, js);
    snprintf(a2, sizeof a2, "run --model megatron-gpt-1.7b --layout tp=2,pp=2,dp=2,gbs=8 --gpu h100 "
                            "--fidelity analytical --json %s", js2);
    CU_ASSERT_EQUAL(test_cli(args, cli_out, sizeof cli_out), 0);
    CU_ASSERT_EQUAL(test_cli(a2, cli_out, sizeof cli_out), 0);
    j = json_load_file(tl, 0, &je);
    CU_ASSERT_PTR_NOT_NULL(j);
    CU_ASSERT(json_array_size(json_object_get(j, "traceEvents")) > 100);
    json_decref(j);
    FILE *f1 = fopen(js, "r"), *f2 = fopen(js2, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f2);
    char b1[8192], b2[8192];
    size_t n1 = fread(b1, 1, sizeof b1, f1), n2 = fread(b2, 1, sizeof b2, f2);
    CU_ASSERT(n1 > 0 && n1 == n2 && memcmp(b1, b2, n1) == 0);
    fclose(f1);
    fclose(f2);
    remove(tl);
    remove(js);
    remove(js2);

    /* AxoNN 4D, context parallelism and interleaving run */
    CU_ASSERT_EQUAL(test_cli("run --model megatron-gpt-1.7b --layout gx=2,gy=2,gz=2,dp=2,gbs=8 --seq 2048 --gpu a100 "
                             "--fidelity analytical", cli_out, sizeof cli_out), 0);
    CU_ASSERT_EQUAL(test_cli("run --model llama3-8b --layout tp=2,cp=2,pp=2,dp=2,gbs=8,vpp=2,sp=on,recompute=selective --seq 8192 "
                             "--fidelity analytical", cli_out, sizeof cli_out), 0);
}

/* Every shipped model runs with a layout that fits on H100s. */
static void test_run_models(void)
{
    static const char *runs[][2] = {
        {"gpt3-175b", "tp=8,pp=8,dp=4,gbs=64,sp=on,recompute=selective,zero=1"},
        {"megatron-gpt-1.7b", "tp=1,pp=1,dp=8,gbs=64"},
        {"megatron-gpt-3.6b", "tp=2,pp=1,dp=8,gbs=64"},
        {"megatron-gpt-7.5b", "tp=4,pp=1,dp=8,gbs=64"},
        {"megatron-gpt-18b", "tp=8,pp=1,dp=8,gbs=64,sp=on,recompute=selective"},
        {"megatron-gpt-39b", "tp=8,pp=2,dp=4,gbs=64,sp=on,recompute=selective"},
        {"megatron-gpt-76b", "tp=8,pp=4,dp=2,gbs=64,sp=on,recompute=selective"},
        {"megatron-gpt-145b", "tp=8,pp=8,dp=2,gbs=64,sp=on,recompute=selective,zero=1"},
        {"megatron-gpt-310b", "tp=8,pp=16,dp=2,gbs=64,sp=on,recompute=full,zero=1"},
        {"megatron-gpt-530b", "tp=8,pp=35,dp=1,gbs=70,sp=on,recompute=full"},
        {"megatron-gpt-1t", "tp=8,pp=64,dp=1,gbs=128,sp=on,recompute=full"},
        {"llama3-8b", "tp=2,pp=1,dp=4,gbs=32,sp=on,recompute=selective,zero=1"},
        {"llama3-70b", "tp=8,pp=4,dp=2,gbs=32,sp=on,recompute=selective,zero=1"},
        {"llama3-405b", "tp=8,pp=18,dp=2,gbs=36,sp=on,recompute=full,zero=1"},
        {"gpt-neox-20b", "tp=4,pp=2,dp=2,gbs=32,sp=on,recompute=selective,zero=1"},
        {"mixtral-8x7b", "tp=2,pp=4,dp=2,ep=2,gbs=32,sp=on,recompute=full,zero=1"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "run --model %s --layout %s --gpu h100 --fidelity analytical", runs[i][0],
                 runs[i][1]);
        int rc = test_cli(args, cli_out, sizeof cli_out);
        if (rc != 0) fprintf(stderr, "\n%s\n%s\n", args, cli_out);
        CU_ASSERT_EQUAL(rc, 0);
        const char *p = strstr(cli_out, "MFU ");
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        double mfu = atof(p + 4);
        CU_ASSERT(mfu > 5 && mfu < 80);
    }
}

/* --opgraph writes the graph it ran: hand counts of its TP collectives and PP messages. */
static void test_run_opgraph(void)
{
    const char *path = test_tmp("run-opgraph.json");
    char args[512], err[256];
    /* 1.7B: 24 layers, hidden 2304; tp=2 pp=2 dp=2, 4 micro-batches of 1 x 1024 tokens, SP */
    snprintf(args, sizeof args, "run --model megatron-gpt-1.7b --layout tp=2,pp=2,dp=2,mbs=1,gbs=8,sp=on,"
                                "recompute=selective --seq 1024 --gpu h100 --fidelity analytical --detail full "
                                "--opgraph %s", path);
    CU_ASSERT_EQUAL_FATAL(test_cli(args, cli_out, sizeof cli_out), 0);
    og_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(og_read_file(path, &g, err, sizeof err), 0);
    CU_ASSERT_EQUAL(g->nranks, 8);
    int tp = 0, pp_send = 0;
    for (int i = 0; i < g->ranks[0].nops; i++) {
        const og_op *op = &g->ranks[0].ops[i];
        if (!og_label(g, op)) continue;
        if (op->kind == OG_COLL && strncmp(og_label(g, op), "tp.", 3) == 0) {
            tp++;
            CU_ASSERT_EQUAL(op->bytes, (int64_t)1024 * 2304 * 2); /* b s h bf16, the gathered tensor */
        }
        if (op->kind == OG_SEND && strncmp(og_label(g, op), "pp.", 3) == 0) {
            pp_send++;
            CU_ASSERT_EQUAL(op->bytes, (int64_t)1024 * 2304 * 2 / 2); /* b s h bf16 / t (SP) */
        }
    }
    /* per layer and micro-batch: forward 2 all-gathers + 2 reduce-scatters; backward 2 all-gathers of the
     * output gradient, 2 of the input again for the weight gradients, 2 reduce-scatters: 10 x 12 x 4 */
    CU_ASSERT_EQUAL(tp, 10 * 12 * 4);
    CU_ASSERT_EQUAL(pp_send, 4); /* stage 0 sends each micro-batch's activations forward once */
    og_free(g);
    remove(path);
}

/* DP bytes by label prefix on one rank of the graph `trainsim run ARGS --opgraph` writes. */
static int dp_bytes(const char *args, int rank, int64_t *rs, int64_t *ag)
{
    const char *path = test_tmp("run-posrows.json");
    char cmd[512], err[256];
    snprintf(cmd, sizeof cmd, "%s --opgraph %s", args, path);
    if (test_cli(cmd, cli_out, sizeof cli_out) != 0) return -1;
    og_graph *g = NULL;
    if (og_read_file(path, &g, err, sizeof err) < 0) return -1;
    *rs = *ag = 0;
    for (int i = 0; i < g->ranks[rank].nops; i++) {
        const og_op *op = &g->ranks[rank].ops[i];
        if (op->kind != OG_COLL || !og_label(g, op)) continue;
        if (strncmp(og_label(g, op), "dp.reduce_scatter.grads.", 24) == 0) *rs += op->bytes;
        if (strncmp(og_label(g, op), "dp.all_gather.params.", 21) == 0) *ag += op->bytes;
    }
    og_free(g);
    remove(path);
    return 0;
}

/* A learned position table covers the sequence trained (Megatron-LM asserts
 * max_position_embeddings >= seq_length): the 1.7B (2,048 positions) at sequence
 * 4,096 has 2,048 x 2,304 more first-stage parameters than at 1,024, so its
 * fp32 gradient reduce-scatters carry 4 bytes and its bf16 parameter gathers
 * 2 bytes more for each; the last stage holds no position table. */
static void test_run_position_rows(void)
{
    const char *fmt = "run --model megatron-gpt-1.7b --layout tp=2,pp=2,dp=2,mbs=1,gbs=4,sp=on,zero=1 --seq %d "
                      "--gpu h100 --fidelity analytical --detail full";
    char a[256];
    int64_t rs[2][2], ag[2][2];
    int seqs[2] = {1024, 4096}, ranks[2] = {0, 4};
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 2; r++) {
            snprintf(a, sizeof a, fmt, seqs[s]);
            CU_ASSERT_EQUAL_FATAL(dp_bytes(a, ranks[r], &rs[s][r], &ag[s][r]), 0);
        }
    const int64_t rows = 4096 - 2048, h = 2304;
    CU_ASSERT_EQUAL(rs[1][0] - rs[0][0], 4 * rows * h);
    /* gathers round each bucket up to a multiple of dp elements: a few bytes per bucket */
    CU_ASSERT(llabs(ag[1][0] - ag[0][0] - 2 * rows * h) <= 64);
    CU_ASSERT_EQUAL(rs[1][1], rs[0][1]);
    CU_ASSERT_EQUAL(ag[1][1], ag[0][1]);
}

void suite_run(void)
{
    test_add_suite("run", "trainsim run cli", test_run_cli, "every shipped model runs", test_run_models,
                   "--opgraph", test_run_opgraph, "learned position table covers --seq", test_run_position_rows,
                   NULL);
}

/* The direct estimate against the critical path of the full op graph. */
static void test_estimate(void)
{
    static const struct {
        const char *model, *layout;
        int seq;
        double tol;
    } cases[] = {
        {"gpt3-175b", "tp=8,pp=8,dp=16,gbs=1536,sp=on,recompute=selective,zero=1", 2048, 0.02},
        {"gpt3-175b", "tp=8,pp=8,dp=16,gbs=1536,sp=on,recompute=selective,zero=1,vpp=3", 2048, 0.02},
        {"gpt3-175b", "tp=8,pp=8,dp=16,gbs=1536,sp=on,recompute=selective,zero=1,schedule=zbh1", 2048, 0.02},
        {"gpt3-175b", "tp=4,pp=16,dp=16,gbs=512,recompute=full", 2048, 0.02},
        {"llama3-70b", "tp=8,pp=4,dp=8,gbs=256,sp=on,recompute=selective,zero=1", 8192, 0.02},
        {"mixtral-8x7b", "tp=2,pp=4,dp=8,ep=4,gbs=64,sp=on,recompute=full,zero=1", 8192, 0.02},
        {"llama3-8b", "tp=2,cp=2,pp=2,dp=4,gbs=32,sp=on,recompute=selective", 8192, 0.02},
        {"gpt-neox-20b", "tp=4,pp=4,dp=4,gbs=64,vpp=11,sp=on,recompute=selective,zero=1", 2048, 0.02},
        /* uneven stages: BLOOM's 5/6../6/5 (the ends are not the slowest) and GPT-3 with heavy ends */
        /* 1F1B and GPipe stages are walked (pipeline_walk), even splits too: the first and
         * last stages carry the embedding and the loss; 1.8-2.1% low on BLOOM's splits */
        {"bloom-176b", "tp=4,pp=12,dp=8,mbs=2,gbs=256,zero=1,recompute=full,pp_first=5,pp_last=5", 2048, 0.03},
        {"bloom-176b", "tp=4,pp=10,dp=8,mbs=2,gbs=256,zero=1,recompute=full", 2048, 0.02},
        {"bloom-176b", "tp=4,pp=12,dp=8,mbs=2,gbs=256,zero=1,recompute=full,pp_first=6,pp_last=4", 2048, 0.03},
        {"gpt3-175b", "tp=8,pp=10,dp=2,gbs=64,recompute=full,pp_first=16,pp_last=16", 2048, 0.02},
        {"megatron-gpt-1.7b", "tp=1,pp=1,dp=16,gbs=64,zero=3", 2048, 0.15},
        {"megatron-gpt-1.7b", "tp=1,pp=1,dp=16,gbs=64,zero=3,hpz=8", 2048, 0.15},
        {"megatron-gpt-1.7b", "tp=1,pp=1,dp=16,gbs=64,zero=3,hpz=8,qwz=on,qgz=on", 2048, 0.15},
        {"megatron-gpt-1.7b", "tp=1,pp=1,dp=16,gbs=64,zero=3,hpz=2,hgz=8", 2048, 0.15},
    };
    an_net net;
    CU_ASSERT_EQUAL_FATAL(an_net_default("H100", &net), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wl_model m;
        wl_layout l;
        cm_gpu gpu;
        wl_info info;
        char err[TS_ERRLEN];
        og_graph *g = build(cases[i].model, cases[i].layout, cases[i].seq, 1, 1, &info, &m, &l, &gpu, &net);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CU_ASSERT_EQUAL_FATAL(cm_gpu_find("h100", "configs/gpus", &gpu, err, sizeof err), 0);
        og_free(g);
        wl_opts o = {cases[i].seq, CM_BF16, &gpu, &net, 1, 1, NULL};
        CU_ASSERT_EQUAL_FATAL(wl_build(&m, &l, &o, &g, &info, err, sizeof err), 0);
        eng_result *res = NULL;
        CU_ASSERT_EQUAL_FATAL(an_run(g, &net, &res, err, sizeof err), 0);
        wl_est e;
        CU_ASSERT_EQUAL_FATAL(wl_estimate(&m, &l, &o, &e, err, sizeof err), 0);
        double rel = fabs(e.iter - res->makespan) / res->makespan;
        if (rel >= cases[i].tol)
            fprintf(stderr, "\n  %s %s: estimate %.4f s, graph %.4f s\n", cases[i].model, cases[i].layout, e.iter,
                    res->makespan);
        CU_ASSERT(rel < cases[i].tol);
        eng_result_free(res);
        og_free(g);
    }
}
