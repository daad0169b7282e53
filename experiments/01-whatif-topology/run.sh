#!/usr/bin/env bash
# Study 01, what-if topology: GPT-3 175B with one fixed layout on 1,024 GPUs of several fabrics
# (DGX H100 fat-tree 1:1/2:1, rails on/off, DGX H100 nodes on dragonflies, Frontier GCDs), with the
# busiest links of each tier; writes results.csv, links.csv, tiers.csv and plot.svg beside this
# script (about 1m40s of CPU; 4.5 minutes on the shared 2-core machine when it is busy). --quick: a reduced
# version on 128 GPUs and three fabrics that prints its table and writes nothing (under 10 s).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "run.sh: unknown argument '$1' (valid: --quick, --help)" >&2; exit 2 ;;
esac
cd "$here/../.."
make -s bin/trainsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Which tier of the fabric a link of trainsim's cluster builder is (platforms/: link ids).
tiers='function tier(n) {
  if (n ~ /^n[0-9]+-g[0-9]+(_|$)/) return "nvlink"                 # GPU port of the NVSwitch
  if (n ~ /^n[0-9]+-l[0-9]+-[0-9]+(_|$)/) return "infinity-fabric" # GCD-GCD link (Frontier)
  if (n ~ /^n[0-9]+-nic[0-9]+(_|$)/) return "nic"                  # one GPU'"'"'s NIC
  if (n ~ /^n[0-9]+-up(_|$)/) return "node-uplink"                 # a node'"'"'s NIC cables to its leaf/switch
  if (n ~ /^leaf[0-9]+-spine(_|$)/) return "leaf-uplink"           # a leaf'"'"'s cables to the spine (core)
  if (n ~ /^g[0-9]+-s[0-9]+-s[0-9]+(_|$)/) return "dragonfly-local" # switch-switch inside a group (routing minimal)
  if (n ~ /^g[0-9]+-s[0-9]+-up(_|$)/) return "group-fabric"      # a switch into its group (routing adaptive)
  if (n ~ /^g[0-9]+-g[0-9]+(_|$)/) return "dragonfly-global"       # group-group
  return "other" }'
# The summary lines of `trainsim run` as CSV fields (gpu,iteration,tflops,mfu,compute,tp,pp,dp,bubble).
summary='
  /^gpus/ { gpu = $4 }
  /^iteration/ { it = $2 }
  /^throughput/ { tf = $4; mfu = $11; sub("%", "", mfu); sub(",", "", mfu) }
  /^time per rank/ { for (i = 1; i <= NF; i++) { v = $(i + 1); sub(",", "", v)
      if ($i == "compute") c = v; if ($i == "tp") t = v; if ($i == "pp") p = v; if ($i == "dp") d = v; if ($i == "bubble") b = v } }
  /^busiest links/ { inl = 1; next }
  inl && NF == 4 { nl++; ln[nl] = $1; lb[nl] = $2; lw[nl] = $3; lu[nl] = $4 }'

# network/optim:Full (also the engine's default now): SimGrid's lazy rate updates let a PAT
# all-gather on the minimal-routing dragonfly push 240 MB through one 50 GB/s link in 4.21 ms (114%
# busy); Full gives 4.82 ms (README).
run() { # cluster args... -> $tmp/out (a later --detail wins)
  bin/trainsim run --seq 2048 --detail replicas --cfg=network/optim:Full --log=xbt_cfg.thres:warning --cluster "$@" > "$tmp/out"
}
# The busiest link of each tier in $tmp/out (full_rate_s = bytes / bandwidth: the seconds the link
# needs at full rate for the iteration's traffic) -> a row of tiers.csv per tier.
tier_rows() { # name run-kind
  awk -v n="$1" -v kind="$2" -v tc="$tiercsv" "$tiers $summary"'
    END { for (i = 1; i <= nl; i++) { k = tier(ln[i]); cnt[k]++
            if (!(k in top)) { top[k] = i; order[++nt] = k } }   # rows come busiest first
          for (j = 1; j <= nt; j++) { k = order[j]; i = top[k]
            printf "%s,%s,%s,%d,%s,%s,%.4f,%s\n", n, kind, k, cnt[k], lb[i], lu[i], lb[i] / (lw[i] * 1e9), ln[i] >> tc } }' \
    "$tmp/out"
}

if [ $quick = 1 ]; then
  # the same DP structure as the full study (tp=8 in a node, a DP group of 16 nodes: one ring per
  # rail) on 16 nodes, with an 18B GPT that needs no pipeline; every DP collective simulated
  layout=tp=8,pp=1,dp=16,mbs=1,gbs=256,sp=on,recompute=selective,zero=1
  echo "study 01, reduced: megatron-gpt-18b, $layout, 128 GPUs (bin/trainsim run ... --detail replicas --links 1)"
  {   # printed with awk, not column(1): bsdextrautils is optional on Debian
    echo "cluster,iteration_s,compute_s,exposed_tp_s,exposed_dp_s,bubble_s,busiest_link,tier,busy_%"
    for c in dgx-h100-superpod:16 "$here/h100-dragonfly.json --nodes 16" frontier:16; do
      name=$(basename "${c%% *}" .json); name=${name%%:*}
      # shellcheck disable=SC2086
      run $c --model megatron-gpt-18b --layout "$layout" --links 1
      awk -v n="$name" "$tiers $summary"'
        END { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", n, it, c, t, d, b, ln[1], tier(ln[1]), lu[1] }' "$tmp/out"
    done
  } | awk -F, '{ printf "%-18s %11s %9s %12s %12s %8s  %-14s %-16s %6s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
  echo "(exposed TP is analytical NVSwitch / Infinity Fabric time; busy % = link bytes / (bandwidth x iteration))"
  exit 0
fi

# every DP collective of every replica is simulated (--detail replicas): the DP rings of the
# 64 model-parallel ranks then share the fabric, which is what oversubscription changes
layout=tp=8,pp=8,dp=16,mbs=1,gbs=1536,sp=on,recompute=selective,zero=1
out=$here/results.csv links=$here/links.csv tiercsv=$here/tiers.csv
echo "cluster,gpu,iteration_s,tflops_per_gpu,mfu,compute_s,tp_s,pp_s,dp_s,bubble_s,busiest_link,busiest_tier,busiest_busy_pct" > "$out"
echo "cluster,rank,link,tier,bytes,gbytes_per_s,busy_pct,full_rate_s" > "$links"
echo "cluster,run,tier,links_loaded,bytes_max,busy_pct_max,full_rate_s_max,busiest_link" > "$tiercsv"
for c in dgx-h100-superpod:128 $here/superpod-ft2-rails.json $here/superpod-ft1-norails.json \
         $here/superpod-ft2-norails.json $here/h100-dragonfly.json $here/h100-dragonfly-4g.json frontier:128; do
  name=$(basename "$c" .json); name=${name%%:*}
  run "$c" --model gpt3-175b --layout "$layout" --links 1000000
  # full_rate_s = bytes / bandwidth: the seconds the link needs at full rate for the iteration's traffic
  awk -v n="$name" -v res="$out" -v lk="$links" "$tiers $summary"'
    END {
      printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", n, gpu, it, tf, mfu, c, t, p, d, b, ln[1], tier(ln[1]), lu[1] >> res
      for (i = 1; i <= nl && i <= 5; i++)
        printf "%s,%d,%s,%s,%s,%s,%s,%.4f\n", n, i, ln[i], tier(ln[i]), lb[i], lw[i], lu[i], lb[i] / (lw[i] * 1e9) >> lk
    }' "$tmp/out"
  tier_rows "$name" replicas
done
# The intra-node tier: TP is analytical above (NVSwitch / Infinity Fabric links carry nothing).
# One model-parallel slice (dp=1: the same 96 micro-batches and TP collectives per GPU) with every
# collective on SimGrid gives those links' bytes; DP never crosses them (GPU -> NIC routes).
for c in dgx-h100-superpod:8 frontier:8; do
  run "$c" --model gpt3-175b --layout tp=8,pp=8,dp=1,mbs=1,gbs=96,sp=on,recompute=selective,zero=1 \
    --links 1000000 --detail full
  tier_rows "${c%%:*}-node" slice
done
column -s, -t "$out"
echo
column -s, -t "$tiercsv"
awk -F, -v label=1 -v cols=6,7,8,9,10 -v unit="seconds per iteration (mean rank: compute, exposed TP, PP, DP, bubble)" \
  -v title="GPT-3 175B, $layout, 1,024 GPUs" -f experiments/common/bars.awk "$out" > "$here/plot.svg"
