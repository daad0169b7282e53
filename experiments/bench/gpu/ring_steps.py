"""One rank's work in PyTorch's load-balanced ring attention (context parallelism as torchtitan
ran it in late 2024), on one GPU, without the communication: what the cp_torch model charges
per rank (docs/compute.md, "Ring attention under torchtitan's context parallelism").

Rank c of cp holds sequence chunks c and 2cp-1-c (sq tokens in all). Per attention pass:
step 0 is one causal FlashAttention-2 call on the local block; step i > 0 takes the k/v block
of rank (c - i) mod cp from a gathered buffer and runs one non-causal call, all queries on the
first half of its keys (i <= c) or the second half of the queries on all its keys (i > c);
outputs and log-sum-exps are merged in fp32, k and v concatenated before every step but the
last. The backward calls FlashAttention-2's backward per step with the merged output, adds
dq, dk, dv in fp32 (on half the rows where the step used half) and concatenates the dk/dv
accumulators as the send buffer each step. The gather and the sends are left out: the
difference between these times and a multi-GPU profile is the communication and its
interference.

Rows 'ring,<fwd|bwd>,h,sq,cp,rank,seconds' and, per call shape, 'call,<shape>,<fwd|bwd>,h,sq,
sk,causal,seconds,tflops' (FLOPs actually computed: causal calls count half the scores;
backward 2.5 x forward, as FlashAttention counts it).
Usage: python3 ring_steps.py [--heads 32] [--sq 32768] [--cps 2,4,8] [--reps 5]
       python3 ring_steps.py --check   (small sizes: the emulated ring against one causal SDPA)"""
import sys
import torch
import torch.nn.functional as F

aten = torch.ops.aten


def arg(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


HEADS, SQ, REPS, D = arg("--heads", 32), arg("--sq", 32768), arg("--reps", 5), 128
CPS = [int(x) for x in arg("--cps", "2,4,8").split(",")]
dev = "cuda"


def timed(fn, reps=REPS):
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


def fa_fwd(q, k, v, causal):
    r = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False)
    return r[0], r[1], r[2:8]


def fa_bwd(do, q, k, v, o, lse, rest, causal):
    cq, ck, mq, mk, seed, off = rest
    return aten._scaled_dot_product_flash_attention_backward(do, q, k, v, o, lse, cq, ck, mq, mk, 0.0, causal,
                                                             seed, off)[:3]


def half(t, i):
    return t.chunk(2, dim=2)[i]


def step_inputs(c, i, q, k, v):
    """(q, k, v, causal, partial) of rank c's step i, k and v the step's source block."""
    if i == 0:
        return q, k, v, True, False
    if i <= c:
        return q, half(k, 0), half(v, 0), False, False
    return half(q, 1), k, v, False, True


def set_half(full, part, idx, add):
    """full with its seq half idx replaced by (or increased by) part: the chunk-and-cat of the source."""
    parts = list(full.chunk(2, dim=2))
    parts[idx] = parts[idx] + part if add else part
    return torch.cat(parts, dim=2)


class Rank:
    """Rank c's tensors: q as the (b, h, s, d) view torchtitan passes, k/v blocks of every rank contiguous
    (what the gathered buffer holds), the upstream gradient."""

    def __init__(self, cp, c, h, sq, qkv=None):
        self.cp, self.c = cp, c
        if qkv is None:
            q = torch.randn(1, sq, h, D, device=dev, dtype=torch.bfloat16).transpose(1, 2)
            kv = [torch.randn(2, 1, h, sq, D, device=dev, dtype=torch.bfloat16) for _ in range(cp)]
            self.q, self.kv = q, [(x[0], x[1]) for x in kv]
            self.do = torch.randn(1, sq, h, D, device=dev, dtype=torch.bfloat16).transpose(1, 2)
        else:
            self.q, self.kv, self.do = qkv
        self.rests = {}
        # the rank's own k and v as the model hands them over: (b, h, s, d) views of (b, s, h, d)
        self.own = [x.transpose(1, 2).contiguous().transpose(1, 2) for x in self.kv[c]]

    def pack(self):
        """The ring's entry: k and v made contiguous, then concatenated for the all-gather."""
        k, v = (x.contiguous() for x in self.own)
        return torch.cat([k.flatten(), v.flatten()])

    def block(self, i):
        return self.kv[(self.c - i) % self.cp]

    def forward(self):
        self.pack()
        out = lse = None
        for i in range(self.cp):
            k, v = self.block(i)
            if i < self.cp - 1:
                torch.cat([k.flatten(), v.flatten()])  # the send buffer the loop builds every step
            q_, k_, v_, causal, partial = step_inputs(self.c, i, self.q, k, v)
            o, l, rest = fa_fwd(q_, k_, v_, causal)
            self.rests[i] = rest
            o, l = o.float(), l.float().unsqueeze(-1)
            if out is None:
                out, lse = o, l
                continue
            a, al = (half(out, 1), half(lse, 1)) if partial else (out, lse)
            na = a - torch.sigmoid(l - al) * (a - o)
            nl = al - F.logsigmoid(al - l)
            if partial:
                out, lse = set_half(out, na, 1, False), set_half(lse, nl, 1, False)
            else:
                out, lse = na, nl
        self.out, self.lse = out.to(torch.bfloat16), lse.squeeze(-1)
        return self.out

    def backward(self):
        q = self.q
        self.pack()
        dq = torch.zeros(q.shape, device=dev, dtype=torch.float32)
        k0, v0 = self.block(0)
        torch.zeros(k0.shape, device=dev, dtype=torch.float32), torch.zeros(v0.shape, device=dev, dtype=torch.float32)
        dkv = None
        for i in range(self.cp):
            k, v = self.block(i)
            if i < self.cp - 1:
                torch.cat([k.flatten(), v.flatten()])
            q_, k_, v_, causal, partial = step_inputs(self.c, i, q, k, v)
            o_, do_, l_ = self.out, self.do, self.lse
            if partial:
                o_, do_, l_ = half(o_, 1), half(do_, 1), half(l_, 1).contiguous()
            gq, gk, gv = fa_bwd(do_, q_, k_, v_, o_, l_, self.rests[i], causal)
            # dk/dv: the accumulator received from the previous rank (here: an uninitialised fp32 one, as a
            # receive buffer is) plus this step's
            recv_k = torch.empty(k.shape, device=dev, dtype=torch.float32)
            recv_v = torch.empty(v.shape, device=dev, dtype=torch.float32)
            if 0 < i <= self.c:
                gk_acc, gv_acc = set_half(recv_k, gk, 0, True), set_half(recv_v, gv, 0, True)
            else:
                gk_acc, gv_acc = recv_k + gk, recv_v + gv
            dkv = torch.cat([gk_acc.flatten(), gv_acc.flatten()])
            dq = set_half(dq, gq, 1, True) if partial else dq + gq
        return dq.to(q.dtype), dkv.to(q.dtype)


def flops(h, sq, sk, causal):
    return 4 * h * sq * sk * D * (0.5 if causal else 1.0)


def calls(h, sq):
    """Each call shape of the ring alone: (name, rank, step) picks it through step_inputs."""
    q = torch.randn(1, sq, h, D, device=dev, dtype=torch.bfloat16).transpose(1, 2)
    k, v = (torch.randn(1, h, sq, D, device=dev, dtype=torch.bfloat16) for _ in range(2))
    do = torch.randn(1, sq, h, D, device=dev, dtype=torch.bfloat16).transpose(1, 2)
    for name, c, i in (("causal", 0, 0), ("q_on_half_k", 1, 1), ("half_q_on_k", 0, 1)):
        q_, k_, v_, causal, partial = step_inputs(c, i, q, k, v)
        o, l, rest = fa_fwd(q_, k_, v_, causal)
        do_ = half(do, 1) if partial else do
        f = flops(h, q_.shape[2], k_.shape[2], causal)
        tf = timed(lambda: fa_fwd(q_, k_, v_, causal))
        tb = timed(lambda: fa_bwd(do_, q_, k_, v_, o, l, rest, causal))
        for pas, t, fl in (("fwd", tf, f), ("bwd", tb, 2.5 * f)):
            print(f"call,{name},{pas},{h},{q_.shape[2]},{k_.shape[2]},{int(causal)},{t:.9g},{fl / t / 1e12:.1f}")
            sys.stdout.flush()


def check(cp=4, h=4, sq=1024):
    """The emulated ring's output and dq for every rank against one causal SDPA over the whole sequence."""
    S, n = cp * sq, sq // 2
    q, k, v = (torch.randn(1, h, S, D, device=dev, dtype=torch.bfloat16) for _ in range(3))
    q.requires_grad_(True)
    do = torch.randn(1, h, S, D, device=dev, dtype=torch.bfloat16)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ref.backward(do)

    def local(t, c):
        return torch.cat([t[:, :, c * n:(c + 1) * n], t[:, :, (2 * cp - 1 - c) * n:(2 * cp - c) * n]], dim=2)

    kv = [(local(k, j).contiguous(), local(v, j).contiguous()) for j in range(cp)]
    worst = 0.0
    for c in range(cp):
        r = Rank(cp, c, h, sq, (local(q.detach(), c), kv, local(do, c).contiguous()))
        out = r.forward()
        dq, _ = r.backward()
        for got, want in ((out, local(ref.detach(), c)), (dq, local(q.grad, c))):
            err = ((got.float() - want.float()).norm() / want.float().norm()).item()
            worst = max(worst, err)
    print(f"# check: cp {cp}, {h} heads, {sq} tokens per rank: worst relative error of out and dq {worst:.3g}")
    if not worst < 2e-2:
        raise SystemExit("the emulated ring does not reproduce causal attention")


def main():
    p = torch.cuda.get_device_properties(0)
    print(f"# {p.name}, {p.multi_processor_count} SMs, torch {torch.__version__}, CUDA {torch.version.cuda}")
    check()
    if "--check" in sys.argv:
        return
    print("kind,what,pass,h,sq,sk,causal,seconds,tflops")
    calls(HEADS, SQ)
    print("kind,pass,h,sq,cp,rank,seconds")
    for cp in CPS:
        for c in range(cp):
            r = Rank(cp, c, HEADS, SQ)
            r.forward()
            tf = timed(r.forward)
            tb = timed(r.backward)
            print(f"ring,fwd,{HEADS},{SQ},{cp},{c},{tf:.9g}")
            print(f"ring,bwd,{HEADS},{SQ},{cp},{c},{tb:.9g}")
            sys.stdout.flush()
            del r
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
