"""Kernel timings on a real GPU through PyTorch, for the compute model's non-GEMM classes:
attention by kernel (SDPA's flash, cuDNN and math backends), memory-bound kernels, the
per-kernel launch cost. GEMMs are measured in C by validate/bench_gemm.c (trainsim-gemm).
Writes CSV rows 'kind,kernel,b,h,s,d,dtype,pass,seconds,tflops_or_gbs' to stdout.
Usage: python3 kernels.py [--reps N] [--sustain S]
--sustain S: attention only (FA2 and cuDNN at 4K and 8K), each timed cold and after S seconds of
back-to-back runs (the clock under sustained load, docs/compute.md), as 'attn-sustained' rows."""
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

REPS = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 20
SUSTAIN = float(sys.argv[sys.argv.index("--sustain") + 1]) if "--sustain" in sys.argv else 0
dev = "cuda"


def median_time(fn, reps=REPS, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e-3)
    ts.sort()
    return ts[len(ts) // 2]


def hold(fn, seconds):
    """Run fn back to back for the given seconds (the card settles at its power limit)."""
    import time
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()


def attention(backend, name, b, h, s, d, causal=True, sustain=0):
    q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    do = torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16)
    # reference on a slice, in float32, for the output check
    with sdpa_kernel(backend):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    ref = F.scaled_dot_product_attention(q[:1, :1].float(), k[:1, :1].float(), v[:1, :1].float(), is_causal=causal)
    err = ((o[:1, :1].float() - ref).norm() / ref.norm()).item()
    if not err < 2e-2:
        raise SystemExit(f"{name}: output off by {err:.3g} against float32")

    def fwd():
        with sdpa_kernel(backend), torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def fwdbwd():
        with sdpa_kernel(backend):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o.backward(do)

    tf, tb = median_time(fwd), median_time(fwdbwd)
    kind = "attn"
    if sustain:
        hold(fwdbwd, sustain)
        tf, tb, kind = median_time(fwd), median_time(fwdbwd), "attn-sustained"
    mega = 4 * b * s * s * h * d  # Megatron's count: 2 GEMMs of 2 b s^2 (h d), non-causal
    for pas, t, fl in (("fwd", tf, mega), ("fwd+bwd", tb, 3 * mega)):
        print(f"{kind},{name},{b},{h},{s},{d},bf16,{pas},{t:.9g},{fl / t / 1e12:.2f}")
    sys.stdout.flush()


def memkernels(tokens, hidden):
    x = torch.randn(tokens, hidden, device=dev, dtype=torch.bfloat16)
    w = torch.randn(hidden, device=dev, dtype=torch.bfloat16)
    nbytes = x.numel() * 2
    rows = [
        ("layernorm", lambda: F.layer_norm(x, (hidden,), w, w), 2 * nbytes),
        ("rmsnorm", lambda: F.rms_norm(x, (hidden,), w), 2 * nbytes),
        ("gelu", lambda: F.gelu(x, approximate="tanh"), 2 * nbytes),
        ("add", lambda: x + x, 3 * nbytes),
        ("copy", lambda: x.clone(), 2 * nbytes),
    ]
    for name, fn, moved in rows:
        t = median_time(fn)
        print(f"mem,{name},{tokens},1,{hidden},1,bf16,fwd,{t:.9g},{moved / t / 1e9:.1f}")
    sys.stdout.flush()


def launch():
    """GPU time per back-to-back tiny kernel: eager (host-launch bound) and in a CUDA graph."""
    x = torch.zeros(256, device=dev)
    n = 2000

    def eager():
        for _ in range(n):
            x.add_(1)

    te = median_time(eager, reps=5)
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        eager()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(n):
            x.add_(1)
    tg = median_time(g.replay, reps=5)
    print(f"launch,eager,1,1,1,1,fp32,fwd,{te / n:.9g},0")
    print(f"launch,graph,1,1,1,1,fp32,fwd,{tg / n:.9g},0")
    sys.stdout.flush()


def main():
    p = torch.cuda.get_device_properties(0)
    print(f"# {p.name}, {p.multi_processor_count} SMs, torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"cuDNN {torch.backends.cudnn.version()}")
    print("kind,kernel,b,h,s,d,dtype,pass,seconds,rate")
    if SUSTAIN:
        for s in (4096, 8192):
            for backend, name in ((SDPBackend.FLASH_ATTENTION, "flash2"), (SDPBackend.CUDNN_ATTENTION, "cudnn")):
                attention(backend, name, 16384 // s, 32, s, 128)
                attention(backend, name, 16384 // s, 32, s, 128, sustain=SUSTAIN)
        return
    launch()
    memkernels(16384, 8192)
    memkernels(8192, 4096)
    for s in (1024, 2048, 4096, 8192, 16384):
        b = max(1, 16384 // s)
        for backend, name in ((SDPBackend.FLASH_ATTENTION, "flash2"), (SDPBackend.CUDNN_ATTENTION, "cudnn")):
            try:
                attention(backend, name, b, 32, s, 128)
            except RuntimeError as e:  # a backend this build lacks: say so, go on
                print(f"# {name} at s={s}: {str(e).splitlines()[0]}")
    for s in (1024, 2048, 4096):
        attention(SDPBackend.MATH, "unfused", max(1, 8192 // s), 32, s, 128)


if __name__ == "__main__":
    main()
