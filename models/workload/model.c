/* Model specs (HuggingFace config.json keys or trainsim's own), layouts
 * (Megatron-LM and AxoNN 4D), parameter and FLOP counts. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "workload/workload.h"

/* ---- model specs ---- */

/* o's member key, or a nested one: "ffn_config.moe_top_k" (MPT, DBRX). */
static json_t *member(json_t *o, const char *key)
{
    const char *dot = strchr(key, '.');
    if (!dot) return json_object_get(o, key);
    char outer[64];
    snprintf(outer, sizeof outer, "%.*s", (int)(dot - key), key);
    json_t *sub = json_object_get(o, outer);
    return json_is_object(sub) ? json_object_get(sub, dot + 1) : NULL;
}

/* The first of keys present in o as a positive integer; 0 when absent. */
static int get_int(json_t *o, const char *const *keys, const char *path, int *out, char *err, size_t errlen)
{
    *out = 0;
    for (; *keys; keys++) {
        json_t *v = member(o, *keys);
        if (!v || json_is_null(v)) continue;
        double d = json_number_value(v);
        if (!json_is_number(v) || d != floor(d) || d < 0 || d > 1e9)
            return ts_err(err, errlen, "%s: '%s' must be a non-negative integer", path, *keys);
        *out = (int)d;
        return 0;
    }
    return 0;
}

static int get_bool(json_t *o, const char *key, int dflt)
{
    json_t *v = member(o, key);
    return json_is_boolean(v) ? json_is_true(v) : json_is_integer(v) ? json_integer_value(v) != 0 : dflt;
}

/* Family defaults by HuggingFace model_type: a row per family. */
static const struct family {
    const char *type;
    int gated, tied, learned_pos, bias;
} families[] = {
    {"gpt2", 0, 1, 1, 1},    {"gpt", 0, 1, 1, 1},        {"gpt_neox", 0, 0, 0, 1},
    {"llama", 1, 0, 0, 0},   {"mistral", 1, 0, 0, 0},    {"mixtral", 1, 0, 0, 0},
    {"qwen2", 1, 0, 0, 0},   {"deepseek_v2", 1, 0, 0, 0}, {"deepseek_v3", 1, 0, 0, 0},
    {"qwen2_moe", 1, 0, 0, 0}, {"falcon", 0, 1, 0, 0},   {"RefinedWeb", 0, 1, 0, 0},
    {"RefinedWebModel", 0, 1, 0, 0}, {"mpt", 0, 1, 0, 0}, {"dbrx", 1, 0, 0, 0},
    {"bloom", 0, 1, 0, 1}, /* GeLU, tied embeddings, ALiBi (no position table), biases: HF BloomConfig */
};

/* Key/value heads when no key names them: Falcon's multi_query (one shared
 * key/value head) unless new_decoder_architecture, which reads num_kv_heads
 * (HF FalconConfig/FalconAttention); else one per query head. */
static int default_kv_heads(json_t *o, int heads)
{
    if (get_bool(o, "multi_query", 0) && !get_bool(o, "new_decoder_architecture", 0)) return 1;
    return heads;
}

/* MPT's expansion_ratio: the MLP width in multiples of d_model. */
static int ffn_from_ratio(json_t *o, int hidden)
{
    json_t *v = json_object_get(o, "expansion_ratio");
    double r = json_number_value(v);
    return json_is_number(v) && r > 0 && r * hidden < 1e9 ? (int)(r * hidden) : 0;
}

int wl_model_load(const char *path, wl_model *m, char *err, size_t errlen)
{
    json_error_t je;
    int text = ts_is_json_text(path); /* model JSON text: messages name it "model JSON" */
    json_t *o = text ? json_loads(path, JSON_REJECT_DUPLICATES, &je) : json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (text) path = "model JSON";
    if (!o) return ts_err(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    memset(m, 0, sizeof *m);
    int rc = -1;
    if (!json_is_object(o)) {
        ts_err(err, errlen, "%s: not a JSON object", path);
        goto out;
    }
    static const char *k_h[] = {"hidden_size", "n_embd", "d_model", "hidden", NULL};
    static const char *k_l[] = {"num_hidden_layers", "n_layer", "n_layers", "num_layers", "layers", NULL};
    static const char *k_a[] = {"num_attention_heads", "n_head", "n_heads", "heads", NULL};
    static const char *k_kv[] = {"num_key_value_heads", "num_kv_heads", "n_head_kv", "attn_config.kv_n_heads",
                                 "kv_heads", NULL};
    static const char *k_f[] = {"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_config.ffn_hidden_size",
                                "ffn", NULL};
    static const char *k_v[] = {"vocab_size", "padded_vocab_size", "vocab", NULL};
    static const char *k_s[] = {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "max_seq",
                                NULL};
    static const char *k_e[] = {"num_local_experts", "n_routed_experts", "num_experts", "ffn_config.moe_num_experts",
                                "experts", NULL};
    static const char *k_k[] = {"num_experts_per_tok", "moe_topk", "ffn_config.moe_top_k", "topk", NULL};
    static const char *k_mf[] = {"moe_intermediate_size", "moe_ffn", NULL};
    static const char *k_se[] = {"n_shared_experts", "shared_experts", NULL};
    static const char *k_sf[] = {"shared_expert_intermediate_size", NULL};
    static const char *k_dl[] = {"first_k_dense_replace", "dense_layers", NULL};
    static const char *k_ql[] = {"q_lora_rank", NULL}, *k_kl[] = {"kv_lora_rank", NULL};
    static const char *k_rd[] = {"qk_rope_head_dim", NULL}, *k_nd[] = {"qk_nope_head_dim", NULL};
    static const char *k_vd[] = {"v_head_dim", NULL};
    if (get_int(o, k_h, path, &m->hidden, err, errlen) < 0 || get_int(o, k_l, path, &m->layers, err, errlen) < 0 ||
        get_int(o, k_a, path, &m->heads, err, errlen) < 0 || get_int(o, k_kv, path, &m->kv_heads, err, errlen) < 0 ||
        get_int(o, k_f, path, &m->ffn, err, errlen) < 0 || get_int(o, k_v, path, &m->vocab, err, errlen) < 0 ||
        get_int(o, k_s, path, &m->max_seq, err, errlen) < 0 || get_int(o, k_e, path, &m->experts, err, errlen) < 0 ||
        get_int(o, k_k, path, &m->topk, err, errlen) < 0 || get_int(o, k_mf, path, &m->moe_ffn, err, errlen) < 0 ||
        get_int(o, k_se, path, &m->shared_experts, err, errlen) < 0 ||
        get_int(o, k_dl, path, &m->dense_layers, err, errlen) < 0 ||
        get_int(o, k_sf, path, &m->shared_ffn, err, errlen) < 0 || get_int(o, k_ql, path, &m->q_lora, err, errlen) < 0 ||
        get_int(o, k_kl, path, &m->kv_lora, err, errlen) < 0 || get_int(o, k_rd, path, &m->rope_dim, err, errlen) < 0 ||
        get_int(o, k_nd, path, &m->nope_dim, err, errlen) < 0 || get_int(o, k_vd, path, &m->v_dim, err, errlen) < 0)
        goto out;
    if (m->kv_lora && (!m->rope_dim || !m->nope_dim || !m->v_dim)) {
        ts_err(err, errlen, "%s: kv_lora_rank %d (latent attention) needs qk_rope_head_dim, qk_nope_head_dim and "
               "v_head_dim", path, m->kv_lora);
        goto out;
    }
    if (!m->kv_lora) m->q_lora = m->rope_dim = m->nope_dim = m->v_dim = 0;
    if (!m->hidden || !m->layers || !m->heads || !m->vocab) {
        ts_err(err, errlen, "%s: needs hidden_size, num_hidden_layers, num_attention_heads and vocab_size "
               "(or n_embd, n_layer, n_head, vocab_size)", path);
        goto out;
    }
    if (m->hidden % m->heads) {
        ts_err(err, errlen, "%s: hidden size %d not divisible by %d heads", path, m->hidden, m->heads);
        goto out;
    }
    if (!m->kv_heads) m->kv_heads = default_kv_heads(o, m->heads);
    if (m->heads % m->kv_heads) {
        ts_err(err, errlen, "%s: %d heads not a multiple of %d key/value heads", path, m->heads, m->kv_heads);
        goto out;
    }
    if (!m->ffn) m->ffn = ffn_from_ratio(o, m->hidden);
    if (!m->ffn) m->ffn = 4 * m->hidden;
    if (!m->max_seq) m->max_seq = 2048;
    const char *type = json_string_value(json_object_get(o, "model_type"));
    const char *act = json_string_value(json_object_get(o, "hidden_act"));
    struct family fam = {"", act && (strcmp(act, "silu") == 0 || strcmp(act, "swiglu") == 0), 0, 0, 1};
    for (size_t i = 0; type && i < sizeof families / sizeof families[0]; i++)
        if (strcmp(type, families[i].type) == 0) fam = families[i];
    m->gated = get_bool(o, "gated", fam.gated);
    m->tied = get_bool(o, "tie_word_embeddings", get_bool(o, "tied", fam.tied));
    m->learned_pos = get_bool(o, "learned_pos", fam.learned_pos);
    m->bias = get_bool(o, "bias", fam.bias);
    if (get_bool(o, "no_bias", 0)) m->bias = 0; /* MPT */
    if (m->experts) {
        if (!m->topk || m->topk > m->experts) {
            ts_err(err, errlen, "%s: %d experts need 1 to %d experts per token, not %d", path, m->experts,
                   m->experts, m->topk);
            goto out;
        }
        if (!m->moe_ffn) m->moe_ffn = m->ffn;
        if (!m->shared_ffn) m->shared_ffn = m->shared_experts * m->moe_ffn;
        if (m->dense_layers >= m->layers) {
            ts_err(err, errlen, "%s: %d dense layers of %d leave no MoE layer", path, m->dense_layers, m->layers);
            goto out;
        }
    } else {
        m->topk = m->moe_ffn = m->shared_experts = m->shared_ffn = m->dense_layers = 0;
    }
    const char *name = json_string_value(json_object_get(o, "name"));
    if (!name) {
        name = text ? "model" : strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    char *dot = strstr(m->name, ".json");
    if (dot && !dot[5]) *dot = 0;
    rc = 0;
out:
    json_decref(o);
    return rc;
}

int wl_model_find(const char *name, const char *dir, wl_model *m, char *err, size_t errlen)
{
    char path[1024];
    if (ts_is_json_text(name)) return wl_model_load(name, m, err, errlen);
    if (ts_config_path(name, dir, path, sizeof path) < 0) {
        size_t n;
        char **names = ts_json_names(dir, &n);
        const char *near = ts_closest(name, (const char *const *)names, n);
        if (near)
            ts_err(err, errlen, "unknown model '%s'; did you mean '%s'? (no %s; give a path or a name from %s/)",
                   name, near, path, dir);
        else
            ts_err(err, errlen, "unknown model '%s' (no %s; give a path or a name from %s/)", name, path, dir);
        ts_names_free(names, n);
        return -1;
    }
    return wl_model_load(path, m, err, errlen);
}

void wl_model_fit_seq(wl_model *m, int seq)
{
    if (m->learned_pos && seq > m->max_seq) m->max_seq = seq;
}

/* ---- layouts ---- */

static const char *sched_names[WL_NSCHEDULES] = {"gpipe", "1f1b", "interleaved", "zbh1"};
static const char *rc_names[WL_NRECOMPUTE] = {"none", "selective", "full", "op"};

const char *wl_schedule_name(wl_schedule s) { return s < WL_NSCHEDULES ? sched_names[s] : "?"; }
const char *wl_recompute_name(wl_recompute r) { return r < WL_NRECOMPUTE ? rc_names[r] : "?"; }

/* The integer keys of a layout: a row each. */
static const struct lkey {
    const char *key;
    size_t off;
    int min;
} int_keys[] = {
    {"tp", offsetof(wl_layout, tp), 1},     {"pp", offsetof(wl_layout, pp), 1},
    {"dp", offsetof(wl_layout, dp), 1},     {"cp", offsetof(wl_layout, cp), 1},
    {"ep", offsetof(wl_layout, ep), 1},     {"vpp", offsetof(wl_layout, vpp), 1},
    {"mbs", offsetof(wl_layout, mbs), 1},   {"gbs", offsetof(wl_layout, gbs), 1},
    {"zero", offsetof(wl_layout, zero), 0}, {"gx", offsetof(wl_layout, gx), 1},
    {"gy", offsetof(wl_layout, gy), 1},     {"gz", offsetof(wl_layout, gz), 1},
    {"hpz", offsetof(wl_layout, hpz), 1},   {"hgz", offsetof(wl_layout, hgz), 1},
    {"prefetch", offsetof(wl_layout, prefetch), 1},
    {"pp_first", offsetof(wl_layout, pp_first), 1}, {"pp_last", offsetof(wl_layout, pp_last), 1},
};

/* The on/off keys: a row each; neg: the field holds the opposite. */
static const struct okey {
    const char *key;
    size_t off;
    int neg;
} onoff_keys[] = {
    {"sp", offsetof(wl_layout, sp), 0},
    {"qwz", offsetof(wl_layout, qwz), 0},
    {"qgz", offsetof(wl_layout, qgz), 0},
    {"overlap", offsetof(wl_layout, ax_serial), 1},
    {"overlap_grad", offsetof(wl_layout, grad_serial), 1},
    {"overlap_param", offsetof(wl_layout, param_overlap), 0},
    {"reshard", offsetof(wl_layout, keep_params), 1},
    {"tp_overlap", offsetof(wl_layout, tp_overlap), 0},
    {"gaf", offsetof(wl_layout, no_gaf), 1},
    {"pp_sg", offsetof(wl_layout, pp_nosg), 1},
    {"pp_grad_sg", offsetof(wl_layout, pp_grad_whole), 1},
    {"p2p_overlap", offsetof(wl_layout, p2p_overlap), 0},
    {"f8ag", offsetof(wl_layout, fp8_gather), 0},
    {"async_tp", offsetof(wl_layout, async_tp), 0},
};

/* on/1/true: 1, off/0/false: 0, else -1 */
static int on_off(const char *v)
{
    if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "true")) return 1;
    if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false")) return 0;
    return -1;
}

static size_t onoff_index(const char *k)
{
    size_t i;
    for (i = 0; i < sizeof onoff_keys / sizeof onoff_keys[0]; i++)
        if (!strcmp(k, onoff_keys[i].key)) break;
    return i;
}

int wl_layout_parse(const char *s, wl_layout *l, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    l->tp = l->pp = l->cp = l->ep = l->vpp = l->mbs = 1;
    l->gx = l->gy = l->gz = 1;
    l->schedule = WL_NSCHEDULES;    /* unset: 1f1b, or interleaved when vpp > 1 */
    char *copy = ts_strdup(s), *save = NULL;
    char seen[256] = "";
    int rc = -1;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1]) {
            ts_err(err, errlen, "layout: '%s' is not key=value", tok);
            goto out;
        }
        *eq = 0;
        const char *k = tok, *v = eq + 1;
        char mark[16];
        snprintf(mark, sizeof mark, "|%s|", k);
        if (strstr(seen, mark)) {
            ts_err(err, errlen, "layout: '%s' given twice", k);
            goto out;
        }
        if (strlen(seen) + strlen(mark) < sizeof seen) strcat(seen, mark);
        size_t i;
        for (i = 0; i < sizeof int_keys / sizeof int_keys[0]; i++)
            if (strcmp(k, int_keys[i].key) == 0) break;
        if (i < sizeof int_keys / sizeof int_keys[0]) {
            char *end;
            long x = strtol(v, &end, 10);
            if (*end || x < int_keys[i].min || x > 10000000) {
                ts_err(err, errlen, "layout: %s=%s is not an integer >= %d", k, v, int_keys[i].min);
                goto out;
            }
            *(int *)((char *)l + int_keys[i].off) = (int)x;
            if (k[0] == 'g' && k[1] != 'b') l->axonn = 1;
        } else if ((i = onoff_index(k)) < sizeof onoff_keys / sizeof onoff_keys[0]) {
            int on = on_off(v);
            if (on < 0) {
                ts_err(err, errlen, "layout: %s=%s (valid: on, off)", k, v);
                goto out;
            }
            *(int *)((char *)l + onoff_keys[i].off) = onoff_keys[i].neg ? !on : on;
            if (!strcmp(k, "overlap")) l->axonn = 1;
            if (!strcmp(k, "overlap_grad")) l->grad_overlap = on;
        } else if (strcmp(k, "attn") == 0) {
            int a = wl_attn_from_name(v);
            if (a < 0) {
                ts_err(err, errlen, "layout: attn=%s (valid: flash3, flash2, flash, unfused)", v);
                goto out;
            }
            l->attn = a;
        } else if (strcmp(k, "recompute") == 0) {
            int r;
            for (r = 0; r < WL_NRECOMPUTE && strcmp(v, rc_names[r]); r++) {}
            if (r == WL_NRECOMPUTE) {
                ts_err(err, errlen, "layout: recompute=%s (valid: none, selective, full, op)", v);
                goto out;
            }
            l->recompute = r;
        } else if (strcmp(k, "schedule") == 0) {
            int r;
            for (r = 0; r < WL_NSCHEDULES && strcmp(v, sched_names[r]); r++) {}
            if (r == WL_NSCHEDULES && (!strcmp(v, "zb-h1") || !strcmp(v, "zb"))) r = WL_ZBH1;
            if (r == WL_NSCHEDULES) {
                ts_err(err, errlen, "layout: schedule=%s (valid: gpipe, 1f1b, interleaved, zbh1)", v);
                goto out;
            }
            l->schedule = r;
        } else if (strcmp(k, "order") == 0) {
            /* a permutation of tp, cp, dp, pp separated by '-', innermost first (Megatron's --order) */
            static const char *dims[4] = {"tp", "cp", "dp", "pp"};
            char *oc = ts_strdup(v), *os = NULL;
            int n = 0, used = 0, okk = 1;
            for (char *d = strtok_r(oc, "-", &os); d && okk; d = strtok_r(NULL, "-", &os)) {
                int j;
                for (j = 0; j < 4 && strcmp(d, dims[j]); j++) {}
                if (j == 4 || (used & (1 << j)) || n == 4) okk = 0;
                else used |= 1 << j, l->order[n++] = j;
            }
            free(oc);
            if (!okk || n != 4) {
                ts_err(err, errlen, "layout: order=%s is not a permutation of tp-cp-dp-pp (innermost first)", v);
                goto out;
            }
        } else if (strcmp(k, "bucket") == 0) {
            char *end;
            double x = strtod(v, &end);
            if (*end || !(x >= 1) || x > 1e13) {
                ts_err(err, errlen, "layout: bucket=%s is not a parameter count >= 1", v);
                goto out;
            }
            l->bucket = x;
        } else {
            ts_err(err, errlen, "layout: unknown key '%s' (valid: tp, pp, dp, cp, ep, vpp, mbs, gbs, zero, sp, "
                   "recompute, schedule, bucket, order, attn, overlap_grad, overlap_param, prefetch, reshard, tp_overlap, "
                   "gaf, pp_sg, p2p_overlap, f8ag, async_tp, pp_first, pp_last, hpz, hgz, qwz, qgz; AxoNN: gx, gy, gz, dp, overlap)", k);
            goto out;
        }
    }
    if (l->axonn && (l->tp > 1 || l->pp > 1 || l->cp > 1 || l->ep > 1 || l->vpp > 1 || l->sp || l->hpz > 1 ||
                     l->hgz > 1 || l->qwz || l->qgz)) {
        ts_err(err, errlen, "layout: the AxoNN 4D layout (gx, gy, gz, dp) takes no tp, pp, cp, ep, vpp, sp, hpz, hgz, "
               "qwz or qgz");
        goto out;
    }
    if (l->zero > 3) {
        ts_err(err, errlen, "layout: zero=%d (valid: 0, 1, 2, 3)", l->zero);
        goto out;
    }
    /* ZeRO++ and hierarchical partitioning refine ZeRO-3's parameter and gradient sharding */
    if (l->zero != 3 && (l->hpz > 1 || l->hgz > 1 || l->qwz || l->qgz)) {
        char what[32];
        if (l->hpz > 1) snprintf(what, sizeof what, "hpz=%d", l->hpz);
        else if (l->hgz > 1) snprintf(what, sizeof what, "hgz=%d", l->hgz);
        else snprintf(what, sizeof what, "%s=on", l->qwz ? "qwz" : "qgz");
        ts_err(err, errlen, "layout: %s needs zero=3 (it refines ZeRO-3's sharding), not zero=%d", what, l->zero);
        goto out;
    }
    /* the frameworks' overlaps belong to one kind of data parallelism each */
    if ((l->param_overlap && l->zero != 1 && l->zero != 2) || (l->grad_serial && l->zero == 3) ||
        ((l->prefetch || l->keep_params) && l->zero != 3)) {
        const char *what = l->param_overlap && l->zero != 1 && l->zero != 2 ? "overlap_param=on needs zero=1 or 2 "
                           "(the distributed optimizer's parameter all-gather)"
                           : l->grad_serial && l->zero == 3 ? "overlap_grad=off needs zero<3 (ZeRO-3 reduces "
                           "every layer's gradients as its backward ends)"
                           : "prefetch and reshard need zero=3 (sharded parameters)";
        ts_err(err, errlen, "layout: %s, not zero=%d", what, l->zero);
        goto out;
    }
    if (l->p2p_overlap && (l->pp < 2 || l->vpp < 2)) {
        ts_err(err, errlen, "layout: p2p_overlap=on needs pp >= 2 and vpp >= 2 (Megatron-Core overlaps the "
               "pipeline's receives only in the interleaved schedule), not pp=%d, vpp=%d", l->pp, l->vpp);
        goto out;
    }
    if (l->tp_overlap && (!l->sp || l->tp < 2)) {
        ts_err(err, errlen, "layout: tp_overlap=on needs sp=on and tp >= 2 (Transformer Engine overlaps the "
               "sequence-parallel all-gathers and reduce-scatters), not sp=%s, tp=%d", l->sp ? "on" : "off", l->tp);
        goto out;
    }
    if (l->axonn && l->recompute == WL_RC_OP) {
        ts_err(err, errlen, "layout: recompute=op (torchtitan's selective op checkpointing) is modelled for "
               "Megatron-style layouts, not the AxoNN 4D grid");
        goto out;
    }
    if (l->fp8_gather && l->zero != 3) {
        ts_err(err, errlen, "layout: f8ag=on needs zero=3 (FSDP2's float8 all-gather of the sharded weights), not zero=%d",
               l->zero);
        goto out;
    }
    if (l->async_tp && (!l->sp || l->tp < 2 || l->tp_overlap)) {
        ts_err(err, errlen, "layout: async_tp=on needs sp=on and tp >= 2, and not tp_overlap=on (PyTorch's micro-"
               "pipelined TP and Transformer Engine's userbuffers are two ways to the same overlap), not sp=%s, tp=%d%s",
               l->sp ? "on" : "off", l->tp, l->tp_overlap ? ", tp_overlap=on" : "");
        goto out;
    }
    if (l->qgz && l->hgz > 1) {
        ts_err(err, errlen, "layout: qgz=on with hgz=%d (the int4 all-to-all gradient path is modelled for "
               "ZeRO-3/ZeRO++ only)", l->hgz);
        goto out;
    }
    if (l->schedule == WL_NSCHEDULES) l->schedule = l->vpp > 1 ? WL_INTERLEAVED : WL_1F1B;
    rc = 0;
out:
    free(copy);
    return rc;
}

int wl_layout_ngpus(const wl_layout *l)
{
    if (l->axonn) return l->gx * l->gy * l->gz * l->dp;
    return l->tp * l->pp * l->cp * l->dp;
}

int wl_layout_micro(const wl_layout *l) { return l->dp && l->mbs ? l->gbs / (l->mbs * l->dp) : 0; }

int wl_layout_check(wl_layout *l, const wl_model *m, int seq, int ngpus, char *err, size_t errlen)
{
    double prod = l->axonn ? (double)l->gx * l->gy * l->gz * (l->dp ? l->dp : 1)
                           : (double)l->tp * l->pp * l->cp * (l->dp ? l->dp : 1);
    if (prod > 1e8 || (double)l->mbs * (l->dp ? l->dp : 1) > 1e9)
        return ts_err(err, errlen, "layout: %.3g gpus or micro-batch x dp beyond any machine", prod);
    int mp = l->axonn ? l->gx * l->gy * l->gz : l->tp * l->pp * l->cp;
    if (!l->dp) {
        if (ngpus <= 0) return ts_err(err, errlen, "layout: dp not given and no gpu count to derive it from");
        if (ngpus % mp)
            return ts_err(err, errlen, "layout: %d gpus not divisible by %s = %d", ngpus,
                          l->axonn ? "gx*gy*gz" : "tp*pp*cp", mp);
        l->dp = ngpus / mp;
    }
    if (ngpus > 0 && wl_layout_ngpus(l) != ngpus)
        return ts_err(err, errlen, "layout: %s*dp = %d*%d = %d gpus, but the platform has %d",
                      l->axonn ? "gx*gy*gz" : "tp*pp*cp", mp, l->dp, wl_layout_ngpus(l), ngpus);
    if (seq < 1) return ts_err(err, errlen, "sequence length %d must be positive", seq);
    if (!l->gbs) l->gbs = l->mbs * l->dp;
    if (l->gbs % (l->mbs * l->dp))
        return ts_err(err, errlen, "layout: gbs=%d not divisible by mbs*dp = %d*%d", l->gbs, l->mbs, l->dp);
    int m_count = wl_layout_micro(l);
    int kvd = m->kv_heads * (m->hidden / m->heads);
    if (l->axonn) {
        int gs[3] = {l->gx, l->gy, l->gz};
        const char *gn[3] = {"gx", "gy", "gz"};
        for (int i = 0; i < 2; i++) {
            if (m->hidden % gs[i] || m->ffn % gs[i] || kvd % gs[i])
                return ts_err(err, errlen, "layout: %s=%d does not divide hidden %d, ffn %d and kv width %d",
                              gn[i], gs[i], m->hidden, m->ffn, kvd);
        }
        if ((l->mbs * seq) % l->gz)
            return ts_err(err, errlen, "layout: gz=%d does not divide the %d tokens of a micro-batch", l->gz,
                          l->mbs * seq);
        if (m->heads % l->gy)
            return ts_err(err, errlen, "layout: gy=%d does not divide %d heads", l->gy, m->heads);
        if (m->experts) return ts_err(err, errlen, "layout: the AxoNN 4D layout is for dense models");
        if (l->zero == 3)
            return ts_err(err, errlen, "layout: zero=3 with the AxoNN 4D layout (its data parallelism all-reduces "
                          "whole gradient shards; parameters sharded over dp are not modelled)");
        return 0;
    }
    if (m->heads % l->tp)
        return ts_err(err, errlen, "layout: tp=%d does not divide %d attention heads", l->tp, m->heads);
    if (m->kv_heads % l->tp)
        return ts_err(err, errlen, "layout: tp=%d does not divide %d key/value heads", l->tp, m->kv_heads);
    if (m->ffn % l->tp || (m->moe_ffn && m->moe_ffn % l->tp))
        return ts_err(err, errlen, "layout: tp=%d does not divide the ffn size %d", l->tp, m->ffn);
    if (l->pp_first || l->pp_last) {
        int ends = (l->pp_first > 0) + (l->pp_last > 0), mid = l->pp - ends;
        int rest = m->layers - l->pp_first - l->pp_last;
        if (l->pp < 2)
            return ts_err(err, errlen, "layout: pp_first/pp_last need pp >= 2, not pp=%d", l->pp);
        if (l->pp == 2 && ends == 2 && rest)
            return ts_err(err, errlen, "layout: pp_first=%d + pp_last=%d with pp=2 must be the %d layers",
                          l->pp_first, l->pp_last, m->layers);
        if (rest < mid || (mid && rest % mid))
            return ts_err(err, errlen, "layout: the %d layers left after pp_first=%d, pp_last=%d do not split "
                          "evenly over the other %d stages", rest, l->pp_first, l->pp_last, mid);
        if (l->vpp > 1)
            return ts_err(err, errlen, "layout: pp_first/pp_last with vpp=%d (uneven stages are modelled "
                          "without interleaving)", l->vpp);
    } else if (m->layers % l->pp)
        return ts_err(err, errlen, "layout: pp=%d does not divide %d layers (pp_first/pp_last set uneven "
                      "stages)", l->pp, m->layers);
    if (l->vpp > 1 && m->layers % (l->pp * l->vpp))
        return ts_err(err, errlen, "layout: pp*vpp = %d*%d does not divide %d layers", l->pp, l->vpp, m->layers);
    if (l->vpp > 1 && l->schedule != WL_INTERLEAVED)
        return ts_err(err, errlen, "layout: vpp=%d needs schedule=interleaved, not %s", l->vpp,
                      wl_schedule_name(l->schedule));
    if (l->schedule == WL_INTERLEAVED && l->vpp < 2)
        return ts_err(err, errlen, "layout: schedule=interleaved needs vpp >= 2");
    if (l->schedule == WL_INTERLEAVED && m_count % l->pp)
        return ts_err(err, errlen, "layout: interleaved schedule needs the %d micro-batches to be a multiple of "
                      "pp=%d (Megatron-LM's rule)", m_count, l->pp);
    if (seq % l->cp || (l->cp > 1 && seq % (2 * l->cp)))
        return ts_err(err, errlen, "layout: cp=%d needs the sequence %d divisible by 2*cp", l->cp, seq);
    if (l->sp && l->tp < 2) return ts_err(err, errlen, "layout: sp=on needs tp >= 2");
    if (l->sp && (seq / l->cp) % l->tp)
        return ts_err(err, errlen, "layout: sp=on needs tp=%d to divide the sequence %d per cp rank", l->tp,
                      seq / l->cp);
    if (l->ep > 1 && !m->experts) return ts_err(err, errlen, "layout: ep=%d for a dense model", l->ep);
    if (m->experts && m->experts % l->ep)
        return ts_err(err, errlen, "layout: ep=%d does not divide %d experts", l->ep, m->experts);
    if (l->dp % l->ep) return ts_err(err, errlen, "layout: ep=%d does not divide dp=%d", l->ep, l->dp);
    if (l->zero == 3 && l->pp > 1)
        return ts_err(err, errlen, "layout: zero=3 with pp=%d (ZeRO-3 shards parameters across the whole model; "
                      "DeepSpeed does not combine it with pipeline parallelism)", l->pp);
    int D = l->dp * l->cp;
    if (l->hpz > 1 && D % l->hpz)
        return ts_err(err, errlen, "layout: hpz=%d does not divide the data-parallel group dp*cp = %d", l->hpz, D);
    if (l->hgz > 1 && D % l->hgz)
        return ts_err(err, errlen, "layout: hgz=%d does not divide the data-parallel group dp*cp = %d", l->hgz, D);
    if (l->hpz > 1 && l->hgz > 1 && l->hgz % l->hpz)
        return ts_err(err, errlen, "layout: hpz=%d does not divide hgz=%d (the levels nest)", l->hpz, l->hgz);
    return 0;
}

/* A layout's text as snprintf writes it (truncated to n - 1 characters, the
 * full length counted): snprintf's "%d" costs about 5,000 instructions a
 * layout, and a search formats every candidate (13,728 in the 4D search). */
typedef struct {
    char *b;
    size_t n, len;
} lbuf;

static void lb_str(lbuf *o, const char *s)
{
    for (; *s; s++, o->len++)
        if (o->len + 1 < o->n) o->b[o->len] = *s;
}

/* "key=value" for an int, then the separator sep (NULL: none). */
static void lb_int(lbuf *o, const char *key, int v, const char *sep)
{
    char d[16], *e = d + sizeof d, *q = e;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do *--q = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--q = '-';
    lb_str(o, key);
    for (; q < e; q++, o->len++)
        if (o->len + 1 < o->n) o->b[o->len] = *q;
    if (sep) lb_str(o, sep);
}

static int lb_end(lbuf *o)
{
    if (o->n > 0) o->b[o->len < o->n ? o->len : o->n - 1] = 0;
    return (int)o->len;
}

void wl_layout_format(const wl_layout *l, char *buf, size_t n)
{
    lbuf o = {buf, n, 0};
    if (l->axonn) {
        lb_int(&o, "gx=", l->gx, ","), lb_int(&o, "gy=", l->gy, ","), lb_int(&o, "gz=", l->gz, ",");
        lb_int(&o, "dp=", l->dp, ","), lb_int(&o, "mbs=", l->mbs, ","), lb_int(&o, "gbs=", l->gbs, ",");
        lb_int(&o, "zero=", l->zero, ",recompute="), lb_str(&o, wl_recompute_name(l->recompute));
        lb_str(&o, ",overlap="), lb_str(&o, l->ax_serial ? "off" : "on");
        lb_end(&o);
    } else {
        lb_int(&o, "tp=", l->tp, ","), lb_int(&o, "pp=", l->pp, ","), lb_int(&o, "dp=", l->dp, ",");
        lb_int(&o, "cp=", l->cp, ","), lb_int(&o, "ep=", l->ep, ","), lb_int(&o, "vpp=", l->vpp, ",");
        lb_int(&o, "mbs=", l->mbs, ","), lb_int(&o, "gbs=", l->gbs, ","), lb_int(&o, "zero=", l->zero, ",sp=");
        lb_str(&o, l->sp ? "on" : "off"), lb_str(&o, ",recompute="), lb_str(&o, wl_recompute_name(l->recompute));
        lb_str(&o, ",schedule="), lb_str(&o, wl_schedule_name(l->schedule));
        int k = lb_end(&o);
        /* the ZeRO++ / hierarchical keys only when set: existing outputs keep their form */
        if (k > 0 && (size_t)k < n && (l->hpz > 1 || l->hgz > 1 || l->qwz || l->qgz))
            k += snprintf(buf + k, n - k, ",hpz=%d,hgz=%d,qwz=%s,qgz=%s", l->hpz > 1 ? l->hpz : 1,
                          l->hgz > 1 ? l->hgz : 1, l->qwz ? "on" : "off", l->qgz ? "on" : "off");
        if (k > 0 && (size_t)k < n && l->attn) snprintf(buf + k, n - k, ",attn=%s", wl_attn_name(l->attn));
        /* likewise the frameworks' overlap keys that differ from the defaults */
        const struct { int set; const char *text; } extra[] = {
            {l->grad_serial, ",overlap_grad=off"}, {l->grad_overlap, ",overlap_grad=on"},
            {l->param_overlap, ",overlap_param=on"},
            {l->keep_params, ",reshard=off"}, {l->tp_overlap, ",tp_overlap=on"}, {l->no_gaf, ",gaf=off"},
            {l->pp_nosg, ",pp_sg=off"}, {l->pp_grad_whole, ",pp_grad_sg=off"}, {l->p2p_overlap, ",p2p_overlap=on"},
            {l->fp8_gather, ",f8ag=on"}, {l->async_tp, ",async_tp=on"},
        };
        for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
            if (extra[i].set && strlen(buf) + strlen(extra[i].text) < n) strcat(buf, extra[i].text);
        if (l->pp_first && strlen(buf) + 24 < n)
            snprintf(buf + strlen(buf), n - strlen(buf), ",pp_first=%d", l->pp_first);
        if (l->pp_last && strlen(buf) + 24 < n)
            snprintf(buf + strlen(buf), n - strlen(buf), ",pp_last=%d", l->pp_last);
        if (l->prefetch > 1 && strlen(buf) + 16 < n)
            snprintf(buf + strlen(buf), n - strlen(buf), ",prefetch=%d", l->prefetch);
    }
}

void wl_layout_apply_stack(wl_layout *l, const wl_stack *s)
{
    if (!s) s = wl_stack_default();
    if (l->attn == WL_ATTN_STACK) l->attn = s->attn;
    /* the data-parallel overlaps the stack runs with (a layout's overlap_grad=on|off and
     * overlap_param=on stand whatever the stack) */
    if (!s->overlap_grad_reduce && l->zero < 3 && !l->grad_overlap) l->grad_serial = 1;
    if (s->overlap_param_gather && (l->zero == 1 || l->zero == 2)) l->param_overlap = 1;
    l->ds_optim = s->ds_zero_optim;
    l->ds_bf16 = s->ds_bf16_optim && s->ds_pipe;
    l->tt_mem = s->eager_ops != 0;
    l->cp_torch = s->cp_torch;
}

int wl_padded_vocab(const wl_model *m, const wl_layout *l)
{
    int mult = 128 * (l->axonn ? 1 : l->tp);
    return (m->vocab + mult - 1) / mult * mult;
}

/* ---- parameter counts ---- */

static int is_moe_layer(const wl_model *m, int layer) { return m->experts && layer >= m->dense_layers; }

/* Attention projection weights of one layer: q, k, v and output (grouped
 * query heads share k and v), or DeepSeek's latent attention (q through a
 * q_lora-rank bottleneck, k and v through one kv_lora-rank latent plus a
 * shared rotary key, each bottleneck normalized), as in HF's DeepseekV3Attention. */
static double attn_weights(const wl_model *m)
{
    double h = m->hidden;
    if (!m->kv_lora) {
        double kvd = (double)m->kv_heads * (m->hidden / m->heads);
        return h * (h + 2 * kvd) + h * h;
    }
    double qd = (double)m->heads * (m->nope_dim + m->rope_dim);
    double q = m->q_lora ? h * m->q_lora + m->q_lora + (double)m->q_lora * qd : h * qd;
    double kv = h * (m->kv_lora + m->rope_dim) + m->kv_lora + (double)m->kv_lora * m->heads * (m->nope_dim + m->v_dim);
    return q + kv + (double)m->heads * m->v_dim * h;
}

/* One layer's parameters, split into: tensor-parallel (divided by tp),
 * replicated (row-parallel biases, norms, router) and expert (by ep*tp). */
static void layer_params(const wl_model *m, int layer, double *tpsplit, double *repl, double *expert)
{
    double h = m->hidden, kvd = (double)m->kv_heads * (m->hidden / m->heads), nmat = m->gated ? 3 : 2;
    *tpsplit = attn_weights(m);
    *repl = (m->bias ? 4 : 2) * h;
    *expert = 0;
    if (m->bias) *tpsplit += h + 2 * kvd, *repl += h;
    if (is_moe_layer(m, layer)) {
        *repl += h * m->experts;
        *expert = (double)m->experts * nmat * h * m->moe_ffn;
        *tpsplit += nmat * h * m->shared_ffn;
    } else {
        *tpsplit += nmat * h * m->ffn;
        if (m->bias) *tpsplit += (m->gated ? 2 : 1) * (double)m->ffn, *repl += h;
    }
}

void wl_layer_params(const wl_model *m, const wl_layout *l, int layer, double *dense, double *expert)
{
    double a, b, c;
    int t = l->axonn ? l->gx * l->gy * l->gz : l->tp;
    layer_params(m, layer, &a, &b, &c);
    *dense = a / t + b;
    *expert = c / ((double)l->ep * t);
}

double wl_model_params(const wl_model *m, int vocab)
{
    double total = (double)vocab * m->hidden * (m->tied ? 1 : 2) + (m->bias ? 2 : 1) * m->hidden;
    if (m->learned_pos) total += (double)m->max_seq * m->hidden;
    for (int i = 0; i < m->layers; i++) {
        double a, b, c;
        layer_params(m, i, &a, &b, &c);
        total += a + b + c;
    }
    return total;
}

int wl_stage_layers(const wl_model *m, const wl_layout *l, int stage, int *first)
{
    int pp = l->axonn ? 1 : l->pp, f = 0, n;
    if (l->axonn || (!l->pp_first && !l->pp_last) || pp < 2) {
        n = m->layers / pp;
        f = stage * n;
    } else {
        int ends = (l->pp_first > 0) + (l->pp_last > 0), mid = pp - ends;
        int even = mid ? (m->layers - l->pp_first - l->pp_last) / mid : 0;
        int n0 = l->pp_first ? l->pp_first : even;
        int nl = l->pp_last ? l->pp_last : even;
        n = stage == 0 ? n0 : stage == pp - 1 ? nl : even;
        f = stage == 0 ? 0 : n0 + (stage - 1) * even;
    }
    if (first) *first = f;
    return n;
}

/* The per-layer sums of wl_stage_params over layers lo .. lo + per - 1: a
 * pure function of those layers' kinds (MoE from moe_from on), each kind's
 * layer_params figures (kp, bit for bit), t and ep. A search asks for the
 * same few (one per grid shape) at every estimate and memory check: the
 * last ones are kept. */
typedef struct {
    int t, ep, lo, per, moe_from, used;
    double kp[2][3], dense, expert, layer;
} spmemo;
static spmemo sp_memo[16];
static int sp_memo_on = 1;

void wl_stage_params_memo(int on)
{
    sp_memo_on = on;
    memset(sp_memo, 0, sizeof sp_memo);
}

static void layer_sums(const wl_model *m, const wl_layout *l, int t, int lo, int per, wl_rank_params *out)
{
    /* layer_params depends on the layer only through whether it is an MoE
     * layer: computed once for each kind, summed layer by layer as before */
    double kp[2][3] = {{0}};
    int moe_from = m->experts ? (m->dense_layers > lo ? m->dense_layers : lo) : lo + per;
    if (moe_from > lo + per) moe_from = lo + per;
    if (moe_from > lo) layer_params(m, lo, &kp[0][0], &kp[0][1], &kp[0][2]);
    if (moe_from < lo + per) layer_params(m, moe_from, &kp[1][0], &kp[1][1], &kp[1][2]);
    uint32_t h = (uint32_t)t * 0x9E3779B1u ^ (uint32_t)lo * 0x85EBCA6Bu ^ (uint32_t)per * 0xC2B2AE35u;
    h ^= h >> 15;
    spmemo *e = &sp_memo[h % (sizeof sp_memo / sizeof sp_memo[0])];
    if (sp_memo_on && e->used && e->t == t && e->ep == l->ep && e->lo == lo && e->per == per &&
        e->moe_from == moe_from && memcmp(e->kp, kp, sizeof kp) == 0) {
        out->dense = e->dense, out->expert = e->expert, out->layer = e->layer;
        return;
    }
    for (int i = lo; i < lo + per; i++) {
        int k = i >= moe_from;
        double a = kp[k][0], b = kp[k][1], c = kp[k][2];
        double dense = a / t + b, expert = c / ((double)l->ep * t);
        out->dense += dense;
        out->expert += expert;
        if (dense + expert > out->layer) out->layer = dense + expert;
    }
    *e = (spmemo){t, l->ep, lo, per, moe_from, 1, {{0}}, out->dense, out->expert, out->layer};
    memcpy(e->kp, kp, sizeof kp);
}

void wl_stage_params(const wl_model *m, const wl_layout *l, int stage, wl_rank_params *out)
{
    int t = l->axonn ? l->gx * l->gy : l->tp, pp = l->axonn ? 1 : l->pp, lo, per = wl_stage_layers(m, l, stage, &lo);
    double V = wl_padded_vocab(m, l), h = m->hidden;
    memset(out, 0, sizeof *out);
    out->stage = stage;
    layer_sums(m, l, t, lo, per, out);
    if (stage == 0) {
        out->dense += V * h / t;
        if (m->learned_pos) out->dense += (double)m->max_seq * h;
    }
    if (stage == pp - 1) {
        out->dense += (m->bias ? 2 : 1) * h;                /* final norm */
        if (!m->tied || pp > 1) out->dense += V * h / t;    /* output layer (a copy when tied) */
    }
    if (l->axonn) out->dense /= l->gz, out->layer /= l->gz; /* AxoNN shards weights over gz too */
    out->total = out->dense + out->expert;
}

/* ---- FLOPs ---- */

double wl_iteration_flops(const wl_model *m, const wl_layout *l, int seq, int model_only)
{
    double h = m->hidden, s = seq, nmat = m->gated ? 3 : 2;
    double V = wl_padded_vocab(m, l), tokens = (double)l->gbs * seq;
    double fwd = 0, attn_core = 0, op_rc = 0;
    /* scores and weighted values: q.k over the query-key width, p.v over the value width */
    double core = m->kv_lora ? 2 * s * m->heads * (double)(m->nope_dim + m->rope_dim + m->v_dim) : 4 * s * h;
    if (model_only == WL_FLOPS_MODEL_CAUSAL) core /= 2; /* a causal mask: each query sees half the keys on average */
    for (int i = 0; i < m->layers; i++) {
        double f = 2 * attn_weights(m) + core;
        if (is_moe_layer(m, i))
            f += 2 * h * m->experts + 2 * nmat * h * ((double)m->topk * m->moe_ffn + m->shared_ffn);
        else
            f += 2 * nmat * h * m->ffn;
        fwd += f;
        attn_core += core;
        /* recompute=op: wk, wo and w3 (graph.c layer_recompute_op; dense layers) */
        if (!is_moe_layer(m, i))
            op_rc += 2 * h * ((double)m->kv_heads * (m->hidden / m->heads) + h + (m->gated ? m->ffn : 0));
    }
    double logits = 2 * h * V;
    double per_token = 3 * (fwd + logits);
    if (!model_only && l->recompute == WL_RC_FULL) per_token += fwd;
    if (!model_only && l->recompute == WL_RC_SELECTIVE) per_token += attn_core;
    if (!model_only && l->recompute == WL_RC_OP) per_token += op_rc;
    return per_token * tokens;
}
