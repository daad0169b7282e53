# Stacked horizontal bar chart as SVG from a CSV (no dependencies): shared by the studies.
# usage: awk -F, -v label=COL -v cols=C1,C2,... -v title=T -v unit=U -f bars.awk data.csv > plot.svg
# label: column number of the bar name; cols: column numbers stacked left to right (header names the parts)
BEGIN { n = 0; split(cols, c, ","); nc = length(c)
        split("#4e79a7,#f28e2b,#e15759,#76b7b2,#59a14f,#edc948,#b07aa1,#ff9da7", pal, ",") }
NR == 1 { for (j = 1; j <= nc; j++) hdr[j] = $(c[j]); next }
{ n++; name[n] = $label; tot = 0
  for (j = 1; j <= nc; j++) { v[n, j] = $(c[j]) + 0; tot += v[n, j] }
  if (tot > max) max = tot }
END {
  if (max <= 0) max = 1
  W = 900; L = 200; R = 40; bh = 22; gap = 8; top = 50
  H = top + n * (bh + gap) + 60; sc = (W - L - R) / max
  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
  printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
  printf "<text x=\"%d\" y=\"20\" font-size=\"14\">%s</text>\n", L, title
  for (i = 1; i <= n; i++) {
    y = top + (i - 1) * (bh + gap); x = L; tot = 0
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", L - 6, y + bh - 6, name[i]
    for (j = 1; j <= nc; j++) {
      w = v[i, j] * sc; tot += v[i, j]
      printf "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", x, y, w, bh, pal[(j - 1) % 8 + 1]
      x += w
    }
    printf "<text x=\"%.1f\" y=\"%d\">%.3g</text>\n", x + 4, y + bh - 6, tot
  }
  yl = top + n * (bh + gap) + 10
  for (j = 1; j <= nc; j++) {
    lx = L + (j - 1) * 110
    printf "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n", lx, yl, pal[(j - 1) % 8 + 1], lx + 16, yl + 11, hdr[j]
  }
  printf "<text x=\"%d\" y=\"%d\">%s</text>\n</svg>\n", L, yl + 40, unit
}
