# plot.awk: a dependency-free SVG line plot of CSV columns, shared by the experiment studies.
# usage: awk -F, -v x=COL -v y=COL -v s=COL [-v logx=1] [-v logy=1] [-v title=T] [-v xl=L] [-v yl=L]
#            -f plot.awk data.csv > plot.svg    (COL: 1-based column numbers; s: series column)
function tx(v) { v = logx ? log(v) : v; return 70 + (v - x0) / (x1 - x0 + 1e-300) * 560 }
function ty(v) { v = logy ? log(v) : v; return 330 - (v - y0) / (y1 - y0 + 1e-300) * 280 }
function lab(v) { return logx ? sprintf("%g", exp(v)) : sprintf("%g", v) }
function laby(v) { return logy ? sprintf("%.3g", exp(v)) : sprintf("%.3g", v) }
NR == 1 { next }
{
    xv = $x + 0; yv = $y + 0
    if ((logx && xv <= 0) || (logy && yv <= 0)) next
    n++; X[n] = xv; Y[n] = yv; S[n] = $s
    if (!(S[n] in seen)) { seen[S[n]] = ++ns; name[ns] = S[n] }
    a = logx ? log(xv) : xv; b = logy ? log(yv) : yv
    if (n == 1 || a < x0) x0 = a; if (n == 1 || a > x1) x1 = a
    if (n == 1 || b < y0) y0 = b; if (n == 1 || b > y1) y1 = b
}
END {
    if (!logy && y0 > 0) y0 = 0
    split("#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf", col, " ")
    print "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"820\" height=\"380\" font-family=\"sans-serif\" font-size=\"11\">"
    print "<rect width=\"820\" height=\"380\" fill=\"white\"/>"
    printf "<text x=\"350\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">%s</text>\n", title
    print "<line x1=\"70\" y1=\"330\" x2=\"630\" y2=\"330\" stroke=\"black\"/><line x1=\"70\" y1=\"50\" x2=\"70\" y2=\"330\" stroke=\"black\"/>"
    for (i = 0; i <= 4; i++) {
        vx = x0 + (x1 - x0) * i / 4; vy = y0 + (y1 - y0) * i / 4
        px = 70 + 560 * i / 4; py = 330 - 280 * i / 4
        printf "<text x=\"%.1f\" y=\"346\" text-anchor=\"middle\">%s</text>\n", px, lab(vx)
        printf "<text x=\"64\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", py + 4, laby(vy)
        printf "<line x1=\"70\" y1=\"%.1f\" x2=\"630\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", py, py
    }
    printf "<text x=\"350\" y=\"370\" text-anchor=\"middle\">%s</text>\n", xl
    printf "<text x=\"14\" y=\"190\" transform=\"rotate(-90 14 190)\" text-anchor=\"middle\">%s</text>\n", yl
    for (k = 1; k <= ns; k++) {
        c = col[(k - 1) % 10 + 1]; pts = ""
        for (i = 1; i <= n; i++) if (S[i] == name[k]) {
            pts = pts sprintf("%.1f,%.1f ", tx(X[i]), ty(Y[i]))
            printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n", tx(X[i]), ty(Y[i]), c
        }
        printf "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\"/>\n", pts, c
        printf "<rect x=\"645\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/><text x=\"662\" y=\"%d\">%s</text>\n", 50 + 16 * k, c, 54 + 16 * k, name[k]
    }
    print "</svg>"
}
