"""One MPT block (llm-foundry's pretrain configs: pre-LN, LayerNorm without bias in bf16, fused
Wqkv, no biases, GELU MLP x4) run eagerly in bf16, forward + backward, on one GPU: the compute
that trainsim's fsdp2 stack charges per layer for the llm-foundry rows without activation
checkpointing (docs/accuracy.md, "llm-foundry without checkpointing"). No FSDP, no collectives:
this separates the per-layer compute from whatever the FSDP1 runs add. Timed after SUSTAIN
seconds of back-to-back steps (the clock under sustained load, docs/compute.md).
Prints 'model,d,heads,mbs,seq,ms_per_block_fwd,ms_per_block_fwdbwd,sm_clock_mhz'.
Usage: python3 mpt_block.py [--sustain S] [--blocks N]"""
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SUSTAIN = float(sys.argv[sys.argv.index("--sustain") + 1]) if "--sustain" in sys.argv else 4.0
NBLK = int(sys.argv[sys.argv.index("--blocks") + 1]) if "--blocks" in sys.argv else 4
dev = "cuda"
dt = torch.bfloat16


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d, bias=False)
        self.wqkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        self.ln2 = nn.LayerNorm(d, bias=False)
        self.up = nn.Linear(d, 4 * d, bias=False)
        self.down = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.wqkv(self.ln1(x)).chunk(3, dim=2)
        q, k, v = (t.view(b, s, self.h, d // self.h).transpose(1, 2) for t in (q, k, v))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(o.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def sm_clock():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, timeout=10)
        return r.stdout.strip().split("\n")[0]
    except Exception:
        return "?"


def run(name, d, h, mbs, seq):
    blocks = nn.Sequential(*[Block(d, h) for _ in range(NBLK)]).to(dev, dt)
    x = torch.randn(mbs, seq, d, device=dev, dtype=dt, requires_grad=True)

    def fwd():
        with torch.no_grad():
            blocks(x)

    def step():
        blocks(x).sum().backward()

    def timed(fn, secs):
        fn()
        torch.cuda.synchronize()
        t0 = time.time()
        n = 0
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        while True:
            fn()
            n += 1
            if n % 4 == 0:
                torch.cuda.synchronize()
                if time.time() - t0 > secs:
                    break
        b.record()
        b.synchronize()
        return a.elapsed_time(b) / n / NBLK

    timed(step, SUSTAIN)  # reach the sustained clock
    t_step = timed(step, 2.0)
    t_fwd = timed(fwd, 1.0)
    clk = sm_clock()
    print(f"{name},{d},{h},{mbs},{seq},{t_fwd:.3f},{t_step:.3f},{clk}", flush=True)
    del blocks, x
    torch.cuda.empty_cache()


print("model,d,heads,mbs,seq,ms_per_block_fwd,ms_per_block_fwdbwd,sm_clock_mhz")
print("#", torch.cuda.get_device_name(), torch.__version__, flush=True)
for cfg in [("mpt-13b", 5120, 40, 2, 2048), ("mpt-7b", 4096, 32, 6, 2048),
            ("mpt-3b", 2560, 20, 10, 2048), ("mpt-1b", 2048, 16, 14, 2048)]:
    run(*cfg)
