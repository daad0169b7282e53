# Study 03: one CSV row from a `trainsim run` summary (shared by run.sh and nic-eff.sh).
# usage: awk -v n=VARIANT -v g=GCDS -v l=LAYOUT -f parse.awk summary.txt
# prints variant,gcds,layout,fits,mem_gib,iteration_s,tflops_per_gcd,mfu,compute_s,tp_s,dp_s,idle_s
/^memory per GPU/ { mem = $4; fits = ($0 ~ /DOES NOT FIT/) ? "no" : "yes" }
/^iteration/ { it = $2 }
/^throughput/ { tf = $4; mfu = $11; sub("%", "", mfu) }
/^time per rank/ { for (i = 1; i <= NF; i++) { x = $(i + 1); sub(",", "", x)
    if ($i == "compute") c = x; if ($i == "tp") t = x; if ($i == "dp") d = x; if ($i == "bubble") b = x } }
END { gsub(",", " ", l); printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s", n, g, l, fits, mem, it, tf, mfu, c, t, d, b }
