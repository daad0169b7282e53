/* The software-stack presets: one row per framework generation, with its
 * sources (docs/compute.md describes every field and row). */
#include "workload/stack.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

static const char *const attn_names[WL_NATTN] = {"stack", "unfused", "flash", "flash2", "flash3"};

const char *wl_attn_name(wl_attn a) { return a < WL_NATTN ? attn_names[a] : "?"; }

int wl_attn_from_name(const char *s)
{
    for (int i = 1; i < WL_NATTN; i++)
        if (strcmp(s, attn_names[i]) == 0) return i;
    return -1;
}

/* Achieved fraction of the modelled bandwidth of DeepSpeed 2021's ZeRO-3
 * gathers and reduce-scatters: least squares of the relative errors of the
 * three GPT-3 175B ZeRO-3 rows of Narayanan et al. Table 2, checked on the
 * three 530B rows (docs/workload.md, "DeepSpeed 2021"). */
#define WL_DS2021_EFF 0.107

/* Megatron-Core's fused vocab-parallel cross-entropy (cross_entropy_loss_fusion,
 * on in the NeMo / Megatron-Bridge GPT configs; megatron/core/fusions/
 * fused_cross_entropy.py over tensor_parallel/cross_entropy.py), per logit:
 * forward: cast to fp32 with the row max (read 2, write 4), subtract the max,
 * exp and row sum (read 4, write 4: two kernels), softmax divide in place
 * (read 4, write 4) = 22 bytes, 4 kernels; backward: gradient times the loss
 * gradient in place (read 4, write 4), cast to bf16 for the output layer's
 * GEMMs (read 4, write 2) = 14 bytes, 2 kernels. PyTorch's F.cross_entropy: WL_CE_TORCH below. */
#define WL_CE_FUSED 22, 14, 4, 2
/* Megatron-LM 2021 (megatron/model/gpt_model.py: vocab_parallel_cross_entropy(output.float(), labels),
 * fp16_lm_cross_entropy off by default; megatron/mpu/cross_entropy.py): forward: the fp32 copy of the
 * logits (read 2, write 4), the row max (read 4), subtract it in place (read 4, write 4), exp in place
 * (read 4, write 4), the row sum (read 4), the softmax divide in place (read 4, write 4) = 38 bytes,
 * 6 kernels; backward: the saved softmax times the loss gradient in place (read 4, write 4), the
 * float() cast's backward to fp16 (read 4, write 2) = 14 bytes, 2 kernels. Megatron-DeepSpeed (2023-24)
 * runs the same code path: megatron/model/gpt_model.py post_language_model_processing calls
 * tensor_parallel.vocab_parallel_cross_entropy(output.float(), labels) unless --fp16-lm-cross-entropy,
 * and megatron/core/tensor_parallel/cross_entropy.py subtracts the max, exponentiates, sums and divides
 * as mpu/cross_entropy.py did (out of place where 2021 was in place: the same bytes). */
#define WL_CE_2021 38, 14, 6, 2
#define WL_CE_DEFAULT 0, 0, 0, 0
/* PyTorch's F.cross_entropy on the logits cast to fp32 (torchtitan: cross_entropy(pred.float(), labels);
 * under autocast cross_entropy runs in fp32 too): forward: the fp32 copy (read 2, write 4), log_softmax
 * (cunn_SoftMaxForward reads the row for its max and sum, then reads and writes it: 12) = 18 bytes, 2
 * kernels (nll_loss reads one value per row); backward: nll_loss's gradient zero-filled (write 4) then
 * scattered, log_softmax's backward (read the gradient and the output, write: 12), the copy's backward
 * to bf16 (read 4, write 2) = 22 bytes, 3 kernels. Measured on an H100 (configs/measurements/gpu/
 * h100_train_profile.csv, 8192 x 128256 logits): softmax forward 5.5 ms and backward 5.7 ms, the zero
 * fill and the two casts about 7 ms; 8 + 8 bytes gave 5.7 ms in all, these 40 bytes 14.2 ms. */
#define WL_CE_TORCH 18, 22, 2, 3

/* Megatron-LM's fp16/bf16 optimizer of 2021-22 (megatron/optimizer/optimizer.py,
 * Float16OptimizerWithFloat16Params; clip_grads.py; apex FusedAdam), per parameter
 * with 16-bit weights and fp32 main weights, in the order step() runs them:
 * - _copy_model_grads_to_main_grads: main_param.grad = grad.float(), one kernel per
 *   tensor (read 2, write 4) = 6;
 * - _unscale_main_grads_and_check_for_nan: torch._amp_foreach_non_finite_check_and_
 *   unscale_ (read 4, write 4) = 8;
 * - clip_grad_norm_fp32: amp_C.multi_tensor_l2norm (read 4), then multi_tensor_scale
 *   by the clip coefficient (read 4, write 4) = 12;
 * - apex FusedAdam (multi_tensor_adam): read grad, param, m, v (16), write param, m,
 *   v (12) = 28;
 * - _copy_main_params_to_model_params: multi_tensor_scale fp32 -> fp16 (read 4,
 *   write 2) = 6;
 * - the next step's zero_grad_buffer (local DDP's 16-bit gradient buffer) = 2.
 * 62 bytes in 6 multi-tensor passes plus one copy per tensor. */
#define WL_OPT_MEGATRON_FP16 62, 6, 1
/* The step as Megatron-Core and DeepSpeed run it: Adam reads the fp32 gradient, master weight, m and v
 * (16) and writes master, m, v and the 16-bit weights (14); the global gradient norm reads the
 * gradients (4); the gradient buffer is zeroed for the next step (4): 38 bytes, 3 kernels (the clip
 * scales only when the norm exceeds the threshold: not counted). */
#define WL_OPT_DEFAULT 38, 3, 0
/* PyTorch's (fsdp2, torchtitan): clip_grad_norm_ (the foreach norm reads the gradients: 4; the clip
 * coefficient multiplies every gradient, clipping or not: read and write 8; torch/nn/utils/clip_grad.py)
 * and torch.optim.AdamW(fused=True) over the fp32 parameters (read 16, write 12; no 16-bit copy: FSDP
 * casts at its copy-in, autocast at each use): 40 bytes, 3 kernels. Measured on an H100 (configs/
 * measurements/gpu/h100_train_profile.csv, 1.92e9 parameters): norm 2.9 ms, multiply 5.7 ms, AdamW
 * 21.5 ms = 30.0 ms; modelled 31.9 ms. */
#define WL_OPT_TORCH 40, 3, 0
/* Composer's (fsdp1, llm-foundry's yamls: optimizer decoupled_adamw with weight_decay 0.0, algorithm
 * gradient_clipping by norm): FSDP1's clip_grad_norm_ (torch/distributed/fsdp/fully_sharded_data_parallel.py,
 * _get_grad_norm: one torch.linalg.vector_norm per gradient, read 4; the norms stacked and reduced, all-reduced
 * over the group, the clip coefficient clamped; then one grad.mul_ per gradient, read and write 8), then
 * DecoupledAdamW.adamw (composer/optim/decoupled_weight_decay.py), a Python loop over the tensors with eager
 * in-place ops on fp32 tensors: exp_avg.mul_ (8), .add_(grad) (12), exp_avg_sq.mul_ (8), .addcmul_(grad, grad)
 * (12), sqrt (8), division by the bias correction (8), .add_(eps) (8), param.addcdiv_ (16): 80 (the decay's
 * param.mul_ is skipped at weight_decay 0). 92 bytes; per tensor 2 + 8 kernels; 4 kernels for the norm's
 * scalars. */
#define WL_OPT_COMPOSER 92, 4, 10

static const wl_stack stacks[] = {
    {"megatron-core", "Megatron-Core with Transformer Engine (2024-): TE's attention (cuDNN fused attention, "
                      "FA3-class, on Hopper; FlashAttention-2 before), fused kernels, TE FP8, overlapped DP",
     "Megatron-Core docs (distributed optimizer, --overlap-grad-reduce, --overlap-param-gather); "
     "Transformer Engine docs (FP8 delayed scaling) and its backend selection (FusedAttention preferred "
     "on sm90+, dot_product_attention/utils.py); FlashAttention-2/3 papers",
     WL_ATTN_FLASH3, 1, WL_GEMM_CURRENT, 1, 1, 1, WL_CE_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, WL_OPT_DEFAULT, 0, 0, 0, 0, 0, 0, 0, 0},
    {"megatron-2021", "Megatron-LM April 2021 (SC'21 paper): unfused attention with the fused scaled-masked "
                      "softmax kernel, fused bias-GeLU and bias-dropout-add, cuBLAS 11 of 2021, fp16",
     "Narayanan et al. SC'21 (arXiv 2104.04473); Megatron-LM commit 50a4b5fa (2021-04-08) README; megatron/optimizer/"
     "optimizer.py (Float16OptimizerWithFloat16Params) and clip_grads.py; examples/sc21 (--DDP-impl torch: PyTorch's "
     "reducer.cpp copy_grad_to_bucket, finalize_backward)",
     WL_ATTN_UNFUSED, 1, WL_GEMM_2021, 0, 0, 0, WL_CE_2021, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0,
     WL_OPT_MEGATRON_FP16, 1, 0, 0, 0, 0, 0, 1, 0}, /* 2021's DDP all-reduced the gradient buffer after the backward */
    /* megatron-2021 and what Megatron-LM had turned on by default by spring 2022 (docs/compute.md,
     * "megatron-2022"): the column-parallel backward's all-reduce (reduce-scatter with sequence parallelism)
     * beside the weight-gradient GEMM, and the weight gradient accumulated by the GEMM itself */
    {"megatron-2022", "Megatron-LM of spring 2022 (Korthikanti et al., sequence parallelism): the megatron-2021 "
                      "kernels, with the column-parallel backward's TP collective asynchronous beside the weight-"
                      "gradient GEMM and gradient-accumulation fusion (both on by default)",
     "Korthikanti et al. 2022 (arXiv 2205.05198); Megatron-LM megatron/arguments.py of the --sequence-parallel era: "
     "--no-async-tensor-model-parallel-allreduce and --no-gradient-accumulation-fusion are store_false flags "
     "(default on); megatron/mpu/layers.py LinearWithGradAccumulationAndAsyncCommunication; megatron/optimizer/optimizer.py",
     WL_ATTN_UNFUSED, 1, WL_GEMM_2021, 0, 1, 1, WL_CE_2021, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, WL_OPT_MEGATRON_FP16, 1, 0, 0, 0, 0, 0, 1, 0},
    {"deepspeed-2021", "DeepSpeed ZeRO-3 of spring 2021 (v0.3.13-0.3.16) on Megatron-LM's 2021 model code: the "
                       "megatron-2021 kernels, per-weight gathers and reduce-scatters with host synchronisation",
     "Narayanan et al. SC'21 Table 2; microsoft/DeepSpeed deepspeed/runtime/zero/stage3.py and "
     "partition_parameters.py of v0.3.13-0.3.16; deepspeed/runtime/pipe/schedule.py (TrainSchedule), engine.py and "
     "p2p.py of v0.4-0.5 (docs/workload.md)",
     WL_ATTN_UNFUSED, 1, WL_GEMM_2021, 0, 0, 0, WL_CE_2021, 1, 0, 1, WL_DS2021_EFF, 1, 0, 1, 0, 1, 1, WL_OPT_DEFAULT, 0, 0, 0, 0, 0, 0, 1, 1}, /* overlap_comm: reduce-scatters on their own stream; 2021 pipeline engine: ReduceGrads by buffered_allreduce_fallback */
    {"deepspeed", "DeepSpeed ZeRO with PyTorch modules: FlashAttention-2 through PyTorch SDPA, unfused "
                  "elementwise kernels, overlapped communication",
     "DeepSpeed ZeRO docs (overlap_comm, stage3_prefetch_bucket_size); PyTorch SDPA docs",
     WL_ATTN_FLASH2, 0, WL_GEMM_CURRENT, 1, 0, 0, WL_CE_TORCH, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, WL_OPT_DEFAULT, 0, 0, 0, 0, 0, 0, 1, 0}, /* ZeRO-1/2 all-gather the updated parameters in step() */
    {"megatron-deepspeed", "Megatron-DeepSpeed (2023-24, CUDA or ROCm): Megatron-LM's model code with its fused "
                           "kernels and FlashAttention-2 (--use-flash-attn), DeepSpeed ZeRO-1/2 and pipeline engine "
                           "with the template's defaults (overlap_comm off: gradients reduced after the backward)",
     "microsoft/Megatron-DeepSpeed examples_deepspeed/rebase (ds_config_gpt_TEMPLATE.json: zero_optimization names only "
     "the stage; --no-gradient-accumulation-fusion, --use-flash-attn in the LUMI script); DeepSpeed ZeRO docs "
     "(overlap_comm default false); deepspeed/runtime/pipe/schedule.py TrainSchedule and p2p.py (ds_pipe)",
     WL_ATTN_FLASH2, 1, WL_GEMM_CURRENT, 0, 0, 0, WL_CE_2021, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, WL_OPT_DEFAULT, 0, 0, 0, 0, 0, 0, 1, 0},
    {"fsdp2", "PyTorch FSDP2: FlashAttention-2 through SDPA, unfused elementwise kernels (no torch.compile), "
              "prefetched all-gathers",
     "torchtitan docs and benchmarks; PyTorch FSDP2 (fully_shard) docs",
     WL_ATTN_FLASH2, 0, WL_GEMM_CURRENT, 1, 0, 0, WL_CE_TORCH, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, WL_OPT_TORCH, 0, 0, 1, 0, 0, 0, 1, 0},
    /* fsdp2's kernels; FSDP1's flat gradient path instead of a main-gradient accumulation pass
     * (grad_accum_fused 1: the weight-gradient GEMMs write fresh gradients, nothing accumulates
     * at full size) */
    {"fsdp1", "PyTorch FSDP1 (FlatParameter, PyTorch 2.0-2.1) as Composer / llm-foundry ran it in 2023: fsdp2's "
              "kernels, the flat gradient assembled, cast to the fp32 reduce dtype and pre-divided before each "
              "reduce-scatter; every micro-batch the shard cast before each gather, the shard's post-divide and "
              "accumulation, the root unit gathered and reduced; Composer's DecoupledAdamW step",
     "PyTorch torch/distributed/fsdp/_runtime_utils.py of 2.0-2.1 (_post_backward_hook: grad.to(reduce_dtype), "
     "_saved_grad_shard), torch/distributed/algorithms/_comm_hooks/default_hooks.py "
     "(DefaultState's gradient pre- and post-divide factors, reduce_scatter_hook); Composer mosaic_fsdp_utils.py get_mixed_precision (DEFAULT: bf16 "
     "parameters, fp32 reduction); llm-foundry scripts/train/benchmarking (its runs' FSDP settings); FlatParamHandle "
     "pre_unshard/_use_low_precision_shard and _FreeEventQueue; Composer trainer/dist_strategy.py (ddp_sync_context: "
     "no no_sync for FSDP; use_orig_params default True), optim/decoupled_weight_decay.py (DecoupledAdamW); llm-foundry "
     "yamls/pretrain (decoupled_adamw, gradient_clipping)",
     WL_ATTN_FLASH2, 0, WL_GEMM_CURRENT, 1, 1, 0, WL_CE_TORCH, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, WL_OPT_COMPOSER, 0, 1, 1, 1, 0, 0, 1, 0},
    {"torchtitan", "torchtitan's Llama on FSDP2 in eager PyTorch (no torch.compile): as fsdp2, and its RMSNorm "
                   "and rotary embedding run as separate fp32 ops, one kernel each",
     "torchtitan torchtitan/models/norms.py (RMSNorm: x.float(), pow, mean, rsqrt, mul, type_as, weight), "
     "torchtitan/models/llama/model.py (apply_rotary_emb via view_as_complex on xq.float(); repeat_kv; separate "
     "wq/wk/wv, w1/w3), torchtitan/distributed/utils.py (maybe_enable_amp), its A100 train "
     "configs (norm_type = \"rmsnorm\", not fused_rmsnorm; compile = false); PyTorch FSDP2 (fully_shard) docs",
     WL_ATTN_FLASH2, 0, WL_GEMM_CURRENT, 1, 0, 0, WL_CE_TORCH, 1, 1, 0, 0, 0, WL_EAGER, 0, 1, 0, 0, WL_OPT_TORCH, 0, 0, 1, 0, 1, 1, 1, 0},
    /* torchtitan with training.compile = true: each TransformerBlock compiled with torch.compile (Inductor),
     * so the eager model code's ops are fused into Triton kernels: RMSNorm one kernel each way, SwiGLU one
     * pass, the residual add one pass, rotary embedding and repeat_kv folded into the kernels around them;
     * GEMMs (extern cuBLAS calls), SDPA, the loss, FSDP2 and the optimizer as torchtitan (docs/compute.md,
     * "torch.compile") */
    {"torchtitan-compile", "torchtitan's Llama with torch.compile per TransformerBlock (Inductor): torchtitan's "
                           "FSDP2, loss and optimizer, the block's elementwise ops fused into Triton kernels; "
                           "--dtype fp8 as torchao's float8 (tensorwise)",
     "torchtitan torchtitan/parallelisms/parallelize_llama.py (apply_compile: torch.compile(transformer_block, "
     "fullgraph=True) per block, after AC, before FSDP); torchtitan docs/performance.md (H100: FSDP, FSDP + "
     "torch.compile, + Float8); torchao torchao/testing/float8/roofline_utils.py (tensorwise casts, fused amax); "
     "PyTorch Inductor (pointwise and reduction fusion, mm and SDPA as extern kernels)",
     WL_ATTN_FLASH2, 1, WL_GEMM_CURRENT, 1, 0, 0, WL_CE_TORCH, 1, 1, 0, 0, 0, WL_COMPILED, 0, 1, 0, 0, WL_OPT_TORCH, 0, 0, 1, 0, 1, 1, 1, 0},
    /* megatron-core but for the attention: the launcher's environment turns TE's cuDNN fused
     * attention off, so TE 1.x runs FlashAttention-2 (docs/compute.md, "nemo-24.07") */
    {"nemo-24.07", "NeMo Framework Launcher runs of 2024 (NeMo 1.0 containers such as 24.07: TE 1.8, Megatron-Core "
                   "0.8): megatron-core, with TE's cuDNN fused attention disabled (NVTE_FUSED_ATTN=0), so "
                   "attention runs FlashAttention-2",
     "NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/config.yaml env_vars (NVTE_FUSED_ATTN: 0, \"Disable cudnn "
     "FA until we've tested it more\"); NeMo 24.07 software component versions (TE 1.8.0.dev0, Megatron Core 0.8); "
     "Transformer Engine 1.x DotProductAttention backend selection (NVTE_FUSED_ATTN, NVTE_FLASH_ATTN); "
     "FlashAttention-3 paper (Shah et al. 2024) FA2 H100 figures",
     WL_ATTN_FLASH2, 1, WL_GEMM_CURRENT, 1, 1, 1, WL_CE_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, WL_OPT_DEFAULT, 0, 0, 0, 0, 0, 0, 0, 0},
};

#define NSTACKS ((int)(sizeof stacks / sizeof *stacks))

const wl_stack *wl_stack_default(void) { return &stacks[0]; }
int wl_stack_count(void) { return NSTACKS; }
const wl_stack *wl_stack_at(int i) { return i >= 0 && i < NSTACKS ? &stacks[i] : NULL; }

void wl_stack_names(char *buf, size_t n)
{
    if (!n) return;
    buf[0] = 0;
    for (int i = 0; i < NSTACKS; i++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? ", " : "", stacks[i].name);
}

const wl_stack *wl_stack_find(const char *name, char *err, size_t errlen)
{
    for (int i = 0; i < NSTACKS; i++)
        if (strcmp(name, stacks[i].name) == 0) return &stacks[i];
    char names[256];
    wl_stack_names(names, sizeof names);
    ts_err(err, errlen, "unknown stack '%s' (valid: %s)", name, names);
    return NULL;
}
