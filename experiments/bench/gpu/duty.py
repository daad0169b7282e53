"""GEMM slow-down under the power cap as a function of the GEMM duty cycle: 8192^3 bf16 GEMMs
alternated with 512 MiB device copies (memory-bound work) in the proportion that gives a GEMM time
fraction d, run back to back for HOLD seconds, then timed (CUDA events) against the GEMM's cold
time; nvidia-smi's power draw and SM clock read at the end of each hold. The step-level structure
behind docs/compute.md, "Sustained load": a training step is not GEMMs back to back.
Usage: python3 duty.py [HOLD]   Prints CSV: duty,gemm_ms_cold,gemm_ms_held,ratio,power_w,sm_mhz"""
import subprocess
import sys
import time

import torch

HOLD = float(sys.argv[1]) if len(sys.argv) > 1 else 10
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn_like(a)
c = torch.empty_like(a)
src = torch.empty(256 * 2**20, device="cuda", dtype=torch.bfloat16)
dst = torch.empty_like(src)


def gemm():
    torch.matmul(a, b, out=c)


def mem():
    dst.copy_(src)


def timed(fn, n):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / n


def smi():
    q = subprocess.run(["nvidia-smi", "--query-gpu=power.draw,clocks.sm", "--format=csv,noheader,nounits"],
                       capture_output=True, text=True).stdout.strip().split(",")
    return float(q[0]), float(q[1])


for _ in range(3):
    gemm(), mem()
time.sleep(2)  # let the card cool to its idle clock
tg = timed(gemm, 5)
tm = timed(mem, 5)
print("duty,gemm_ms_cold,gemm_ms_held,ratio,power_w,sm_mhz", flush=True)
for d in (0.3, 0.45, 0.6, 0.75, 0.9, 1.0):
    ng = 8
    nm = 0 if d >= 1 else max(1, round(ng * tg * (1 - d) / d / tm))
    t_end = time.perf_counter() + HOLD
    while time.perf_counter() < t_end:
        for _ in range(ng):
            gemm()
        for _ in range(nm):
            mem()
        torch.cuda.synchronize()
    g, m = [], []
    for _ in range(5):
        g.append(timed(gemm, ng))
        if nm:
            m.append(timed(mem, nm))
    p, f = smi()
    gh = sorted(g)[2]
    dm = sum(m) / len(m) * nm if m else 0
    print(f"{ng * gh / (ng * gh + dm):.2f},{tg:.3f},{gh:.3f},{tg / gh:.3f},{p:.0f},{f:.0f}", flush=True)
    time.sleep(3)  # back under the cap before the next duty
