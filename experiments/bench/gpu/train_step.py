"""One training step of a Llama model on one GPU, timed, as torchtitan runs it in eager PyTorch:
FSDP2 (fully_shard per block and at the root; param bf16, reduce fp32), RMSNorm and rotary
embedding as separate fp32 ops (torchtitan/models/norms.py, llama/model.py), SDPA attention
(FlashAttention-2 backend forced, the stack's attn=flash2), SwiGLU, the loss on fp32 logits,
gradient clipping at 1.0 and a fused AdamW step. Activation checkpointing 'full' wraps each block
in torch.utils.checkpoint as torchtitan's ac mode "full" does.

The point is a training figure whose software is known exactly, to check trainsim's compute
model on (docs/accuracy.md, "Measured here: one-GPU steps"): trainsim run --stack torchtitan on the
same model, layers, sequence and micro-batch.

Usage: python3 train_step.py NAME LAYERS SEQ MBS CKPT [plain]
  NAME: llama3-8b | llama2-7b (the architectures of configs/models/), LAYERS: blocks kept,
  CKPT: none | full, 'plain': no FSDP2, the model in fp32 under autocast(bf16).
Prints one CSV line: model,layers,seq,mbs,ckpt,mode,step_s,fwd_s,bwd_s,opt_s,peak_gib,tflops,steps
(step_s: median wall time of 10 steps after 3 untimed; fwd/bwd/opt: medians of CUDA-event
intervals; tflops: 6 N T + attention (causal, 6 b s^2 h L) over step_s, N = non-embedding
parameters plus the output layer)."""
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ARCH = {
    # hidden, ffn, heads, kv heads, vocab, rope theta (configs/models/*.json)
    "llama3-8b": (4096, 14336, 32, 8, 128256, 500000.0),
    "llama2-7b": (4096, 11008, 32, 32, 32000, 10000.0),
}


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        y = x.float()
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)
        return y.type_as(x) * self.weight


def rope_table(hd, seq, theta):
    f = 1.0 / (theta ** (torch.arange(0, hd, 2).float() / hd))
    t = torch.arange(seq).float()
    return torch.polar(torch.ones(seq, hd // 2), torch.outer(t, f))


def rope(x, freqs):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs.view(1, x.shape[1], 1, -1)).flatten(3).type_as(x)


class Block(nn.Module):
    def __init__(self, h, ffn, heads, kv):
        super().__init__()
        self.heads, self.kv, self.hd = heads, kv, h // heads
        self.wq = nn.Linear(h, h, bias=False)
        self.wk = nn.Linear(h, kv * self.hd, bias=False)
        self.wv = nn.Linear(h, kv * self.hd, bias=False)
        self.wo = nn.Linear(h, h, bias=False)
        self.w1 = nn.Linear(h, ffn, bias=False)
        self.w2 = nn.Linear(ffn, h, bias=False)
        self.w3 = nn.Linear(h, ffn, bias=False)
        self.attn_norm, self.ffn_norm = RMSNorm(h), RMSNorm(h)

    def forward(self, x, freqs):
        b, s, _ = x.shape
        y = self.attn_norm(x)
        q = rope(self.wq(y).view(b, s, self.heads, self.hd), freqs)
        k = rope(self.wk(y).view(b, s, self.kv, self.hd), freqs)
        v = self.wv(y).view(b, s, self.kv, self.hd)
        rep = self.heads // self.kv
        if rep > 1:  # torchtitan's repeat_kv: expand then reshape (a copy)
            k = k[:, :, :, None, :].expand(b, s, self.kv, rep, self.hd).reshape(b, s, self.heads, self.hd)
            v = v[:, :, :, None, :].expand(b, s, self.kv, rep, self.hd).reshape(b, s, self.heads, self.hd)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.wo(o.transpose(1, 2).reshape(b, s, -1))
        y = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(y)) * self.w3(y))


class Llama(nn.Module):
    def __init__(self, arch, layers, seq, ckpt):
        super().__init__()
        h, ffn, heads, kv, vocab, theta = arch
        self.ckpt = ckpt
        self.tok = nn.Embedding(vocab, h)
        self.layers = nn.ModuleList(Block(h, ffn, heads, kv) for _ in range(layers))
        self.norm = RMSNorm(h)
        self.out = nn.Linear(h, vocab, bias=False)
        self.register_buffer("freqs", rope_table(h // heads, seq, theta), persistent=False)

    def forward(self, tokens):
        x = self.tok(tokens)
        for blk in self.layers:
            if self.ckpt == "full":
                x = torch.utils.checkpoint.checkpoint(blk, x, self.freqs, use_reentrant=False)
            else:
                x = blk(x, self.freqs)
        return self.out(self.norm(x))


def args():
    """NAME LAYERS SEQ MBS CKPT [plain], checked; a usage line and exit 2 on anything else."""
    a = sys.argv[1:]
    try:
        ok = len(a) in (5, 6) and a[0] in ARCH and a[4] in ("none", "full") and (len(a) == 5 or a[5] == "plain")
        nums = [int(x) for x in a[1:4]] if ok else []
        ok = ok and all(n > 0 for n in nums) and nums[1] % 2 == 0
    except ValueError:
        ok = False
    if not ok:
        sys.exit("usage: train_step.py llama3-8b|llama2-7b LAYERS SEQ MBS none|full [plain] "
                 "(LAYERS, SEQ, MBS positive integers, SEQ even); got: " + " ".join(a))
    return a[0], nums[0], nums[1], nums[2], a[4], len(a) == 6


def main():
    name, layers, seq, mbs, ckpt, plain = args()
    arch = ARCH[name]
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    with torch.device("meta"):
        model = Llama(arch, layers, seq, ckpt)
    model.to_empty(device=dev)
    for p in model.parameters():
        nn.init.normal_(p, std=0.02) if p.dim() > 1 else nn.init.ones_(p)
    model.freqs = rope_table(arch[0] // arch[2], seq, arch[5]).to(dev)
    mode = "plain-autocast"
    if not plain:
        import torch.distributed as dist
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=dev)
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for blk in model.layers:
            fully_shard(blk, mp_policy=mp, reshard_after_forward=True)
        fully_shard(model, mp_policy=mp, reshard_after_forward=True)
        mode = "fsdp2"
    try:
        opt = torch.optim.AdamW(model.parameters(), lr=8e-4, weight_decay=0.1, fused=True)
    except Exception:  # fused AdamW refuses some parameter types: torchtitan falls back to foreach
        opt = torch.optim.AdamW(model.parameters(), lr=8e-4, weight_decay=0.1, foreach=True)
        mode += "+foreach"
    vocab = arch[4]
    tokens = torch.randint(0, vocab, (mbs, seq), device=dev)
    labels = torch.randint(0, vocab, (mbs, seq), device=dev)

    def step(ev):
        ev[0].record()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=plain):
            logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))
        ev[1].record()
        loss.backward()
        ev[2].record()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        opt.step()
        opt.zero_grad(set_to_none=True)
        ev[3].record()

    walls, fw, bw, op = [], [], [], []
    for i in range(13):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step(ev)
        torch.cuda.synchronize()
        if i >= 3:
            walls.append(time.perf_counter() - t0)
            fw.append(ev[0].elapsed_time(ev[1]) * 1e-3)
            bw.append(ev[1].elapsed_time(ev[2]) * 1e-3)
            op.append(ev[2].elapsed_time(ev[3]) * 1e-3)
    h, ffn, heads, kv, vocab, _ = arch
    hd = h // heads
    per_layer = h * h * 2 + 2 * h * kv * hd + 3 * h * ffn
    n = layers * per_layer + h * vocab
    tok = mbs * seq
    flops = 6 * n * tok + 6 * mbs * seq * seq * h * layers  # model FLOPs; causal attention: half of 12 b s^2 h
    step_s = statistics.median(walls)
    print(f"{name},{layers},{seq},{mbs},{ckpt},{mode},{step_s:.5f},{statistics.median(fw):.5f},"
          f"{statistics.median(bw):.5f},{statistics.median(op):.5f},"
          f"{torch.cuda.max_memory_allocated() / 2**30:.2f},{flops / step_s / 1e12:.1f},{len(walls)}", flush=True)
    sustain = float(os.environ.get("SUSTAIN_S", "0"))
    if sustain > 0:  # the same step after S seconds back to back: the clock a training run holds
        t_end = time.perf_counter() + sustain
        while time.perf_counter() < t_end:
            step([torch.cuda.Event(enable_timing=True) for _ in range(4)])
        torch.cuda.synchronize()
        late = []
        for _ in range(10):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            step([torch.cuda.Event(enable_timing=True) for _ in range(4)])
            torch.cuda.synchronize()
            late.append(time.perf_counter() - t0)
        print(f"{name},{layers},{seq},{mbs},{ckpt},{mode}-after-{sustain:g}s,{statistics.median(late):.5f},,,,"
              f"{torch.cuda.max_memory_allocated() / 2**30:.2f},{flops / statistics.median(late) / 1e12:.1f},{len(late)}",
              flush=True)
    if os.environ.get("PROFILE_OUT"):
        profile(step, os.environ["PROFILE_OUT"], step_s)
    if not plain:
        import torch.distributed as dist
        dist.destroy_process_group()


def kernel_class(name):
    n = name.lower()
    if "flash" in n or "fmha" in n or "attention" in n:
        return "attention"
    if any(k in n for k in ("gemm", "xmma", "cutlass", "nvjet", "cublas", "sm90_", "sm80_")):
        return "gemm"
    if "adam" in n or "multi_tensor" in n or "foreach" in n or "l2norm" in n or "norm_kernel" in n:
        return "optimizer/foreach"
    if "nccl" in n:
        return "nccl"
    if "memcpy" in n or "memset" in n:
        return "memcpy/memset"
    return "elementwise/reduce"


def profile(step, path, step_s):
    """Two steps under torch.profiler: GPU time per kernel (summed over the steps, halved),
    written as CSV 'class,kernel,calls,us_per_step'; a last line gives the step's wall time and
    the GPU-busy total (their difference: time the GPU waited on the host)."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as tprof
    with tprof(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(2):
            step([torch.cuda.Event(enable_timing=True) for _ in range(4)])
        torch.cuda.synchronize()
    rows = {}
    for e in prof.events():
        if not str(e.device_type).endswith("CUDA"):
            continue
        r = rows.setdefault(e.name, [0, 0.0])
        r[0] += 1
        r[1] += e.time_range.elapsed_us()
    busy = 0.0
    with open(path, "w") as f:
        f.write("class,kernel,calls,us_per_step\n")
        for name, (calls, us) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
            busy += us / 2
            f.write('%s,"%s",%d,%.1f\n' % (kernel_class(name), name.replace('"', "'")[:160], calls // 2, us / 2))
        f.write("# step wall %.1f us (untraced median), GPU busy %.1f us per step\n" % (step_s * 1e6, busy))


if __name__ == "__main__":
    main()
