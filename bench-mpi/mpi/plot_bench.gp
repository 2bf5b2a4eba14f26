# plot_bench.gp: the rplasma-bench-mpi plot. gnuplot -e "csv='in.csv'; png='out.png'" plot_bench.gp
# (set conc=N to pick the concurrency; by default the CSV's lowest). Aggregate rows only. Uses
# pngcairo where it exists, else png.
#
# One column per pattern (per benchmark and pattern: `fetch` rows are titled by the pattern alone,
# the tuner's as "tune shift1", "tune_check shift1"), in the CSV's order:
#   top:    GB/s by size of get, pin, auto and the raw peer tcp_stream. The peer runs only in
#           pairs, at concurrency 1; every pattern shows it as a reference.
#   bottom: p50 (solid) and p99 (dashed) latency by size, the same colours.
# One legend under the title names the colours (per-panel keys hid the lines they sat on).
# A dashed vertical line, "crossover", in both: the first size where pin's GB/s exceeds get's.
# A last column: auto / best fixed (the CSV's auto_vs_best) by size, one line per pattern, with the
# 0.95 target; below it, each pattern's crossover as text. Columns wrap after five.
# Every series is drawn only if it has rows, so a CSV without auto or tcp_stream rows still plots.
if (!exists("csv")) csv = 'rplasma-bench-mpi.csv'
if (!exists("png")) png = 'rplasma-bench-mpi.png'

q(s) = "'".s."'"
if (system("test -r ".q(csv)." && echo ok") ne "ok") {
  print sprintf("plot_bench.gp: cannot read %s", csv)
  exit status 1
}
# By default the lowest concurrency of the CSV's rplasma rows (1 if it has none).
if (!exists("conc")) {
  conc = int(system("awk -F, 'NR>1 && $2==\"rplasma\" && (c==\"\" || $12+0 < c) {c=$12+0} END {print c+0}' ".q(csv)))
  if (conc < 1) { conc = 1 }
}

# Columns: 1 benchmark 2 system 3 transport 4 protocol 5 object_size 6 ops_per_s 7 gb_per_s
#          8 p50_us 9 p99_us 10 pattern 11 ranks 12 concurrency 13 mean_us 14 p95_us 15 rank 16 aggregate
#          17 auto_vs_best
# awk's selection of the aggregate rows at concurrency `conc`.
agg = sprintf("awk -F, -v c=%d 'NR>1 && $16==1 && $12==c", conc)
# The panels: "benchmark/pattern" of rplasma rows, in order of first appearance.
panels = system(agg." && $2==\"rplasma\" && !seen[$1\"/\"$10]++ {print $1\"/\"$10}' ".q(csv)." | tr '\\n' ' '")
n = words(panels)
bench(k) = k[1:strstrt(k, "/") - 1]
pattern(k) = k[strstrt(k, "/") + 1:]
ptitle(k) = bench(k) eq "fetch" ? pattern(k) : bench(k)." ".pattern(k)
# One series' rows as "size gb_per_s p50_us p99_us auto_vs_best", sorted by size (gnuplot would
# join points in file order otherwise).
rows(k, sys, proto) = "< ".agg." && $1\"/\"$10==\"".k."\" && $2==\"".sys."\" && $4==\"".proto."\"" \
    ." {print $5, $7, $8, $9, ($17==\"\" ? \"NaN\" : $17)}' ".q(csv)." | sort -n"
# The raw peer runs at concurrency 1 whatever --concurrency was.
peer(k) = "< awk -F, 'NR>1 && $16==1 && $2==\"tcp_stream\" && $1\"/\"$10==\"".k."\"" \
    ." {print $5, $7, $8, $9}' ".q(csv)." | sort -n"
count(cmd) = int(system("(".cmd[3:].") | wc -l"))
# The first size where pin's GB/s exceeds get's (both measured at that size); 0 = none.
crossover(k) = int(system(agg." && $2==\"rplasma\" && $1\"/\"$10==\"".k."\"" \
    ." {if ($4==\"get\") g[$5]=$7; if ($4==\"pin\") p[$5]=$7}" \
    ." END {x=0; for (s in p) if ((s in g) && p[s]+0 > g[s]+0 && (x==0 || s+0 < x)) x=s+0; print x}' ".q(csv)))
size_label(s) = s >= 2**30 ? sprintf("%gG", s / 2.0**30) : s >= 2**20 ? sprintf("%gM", s / 2.0**20) : \
                s >= 2**10 ? sprintf("%gK", s / 2.0**10) : sprintf("%d", s)
# Every aggregate row's sizes set one x range for all panels.
xmin = int(system(agg." && (x==\"\" || $5+0 < x) {x=$5+0} END {print x+0}' ".q(csv)))
xmax = int(system(agg." && $5+0 > x {x=$5+0} END {print x+0}' ".q(csv)))
if (xmin <= 0) { xmin = 1024; xmax = 1048576 }

cells = n + 1
bands = (cells + 4) / 5
cols = (cells + bands - 1) / bands
top = 64.0
cell_w = 440
cell_h = 340
height = bands * 2 * cell_h + top
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size cols * cell_w, height font ",9" noenhanced
} else {
  set terminal png size cols * cell_w, height noenhanced
}
set output png
set datafile separator whitespace
set logscale x 2
set xrange [xmin / 1.5 : xmax * 1.5]
set xtics ("16" 16, "64" 64, "256" 256, "1K" 1024, "4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, \
           "1M" 1048576, "4M" 4194304, "16M" 16777216, "64M" 67108864, "256M" 268435456, "1G" 1073741824) \
          font ",8"
set grid
set format y "%g"
set xlabel "object size (bytes)"
unset key
w = 1.0 / cols
h = (1.0 - top / height) / (2 * bands)
cell_x(i) = ((i - 1) % cols) * w
bw_y(i) = 1.0 - top / height - (2 * ((i - 1) / cols) + 1) * h
lat_y(i) = bw_y(i) - h
# The protocols of the rplasma rows: get, pin, auto first, then any other name the CSV has.
protos = system(agg." && $2==\"rplasma\" && !seen[$4]++ {print ($4==\"get\" ? 1 : $4==\"pin\" ? 2 : $4==\"auto\" ? 3 : 4), $4}' " \
                .q(csv)." | sort -k1,1n -k2 | cut -d' ' -f2 | tr '\n' ' '")
proto_color(p) = p eq "get" ? "#1f77b4" : p eq "pin" ? "#d62728" : p eq "auto" ? "#2ca02c" : \
                 p eq "tcp_stream" ? "#7f7f7f" : "#9467bd"
have_peer = int(system("awk -F, 'NR>1 && $16==1 && $2==\"tcp_stream\"' ".q(csv)." | wc -l")) > 0

set multiplot title sprintf("rplasma-bench-mpi: %s, concurrency %d", csv, conc) noenhanced
# One legend for every panel, under the title (drawn with the first panel only).
legend = n > 0 ? protos.(have_peer ? "tcp_stream" : "") : ""
legend_y = 1.0 - 44.0 / height
do for [j = 1:words(legend)] {
  set label 10 + j word(legend, j) at screen 0.5 + (j - 1 - words(legend) / 2.0) * 90.0 / (cols * cell_w), legend_y \
      left point pt 7 ps 1 lc rgb proto_color(word(legend, j)) offset 1, 0 tc rgb proto_color(word(legend, j))
}
if (n > 0 && have_peer) {
  set label 10 "tcp_stream: the raw peer, measured in pairs at concurrency 1, drawn in every pattern" \
      at screen 0.5, legend_y - 16.0 / height center font ",8" tc rgb proto_color("tcp_stream")
}
if (n == 0) {
  set label 1 sprintf("no aggregate rplasma rows at concurrency %d", conc) at screen 0.5, 0.5 center
  unset border; unset tics; unset xlabel; unset grid; unset logscale x
  plot [0:1][0:1] NaN notitle
  unset label 1
}
crossovers = ""
do for [i = 1:n] {
  k = word(panels, i)
  x = crossover(k)
  crossovers = crossovers.sprintf("%s: %s\n", ptitle(k), x > 0 ? size_label(x) : "none")
  # Every pattern has at least one protocol's rows (that is what made it a panel).
  bw = ""
  lat = ""
  do for [j = 1:words(protos)] {
    p = word(protos, j)
    if (count(rows(k, "rplasma", p)) > 0) {
      bw = bw.sprintf("%s rows(k, 'rplasma', '%s') using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '%s'", \
                      bw eq "" ? "" : ",", p, proto_color(p))
      lat = lat.sprintf("%s rows(k, 'rplasma', '%s') using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc rgb '%s'", \
                        lat eq "" ? "" : ",", p, proto_color(p))
      lat = lat.sprintf(", rows(k, 'rplasma', '%s') using 1:4 with lines lw 1.5 dt 2 lc rgb '%s'", p, proto_color(p))
    }
  }
  # The peer of this pattern, else the pairs peer of the same benchmark.
  pk = count(peer(k)) > 0 ? k : bench(k)."/pairs"
  if (count(peer(pk)) > 0) {
    bw = bw.sprintf(", peer(pk) using 1:2 with linespoints lw 1.5 pt 6 ps 0.6 lc rgb '%s'", proto_color("tcp_stream"))
    lat = lat.sprintf(", peer(pk) using 1:3 with linespoints lw 1.5 pt 6 ps 0.6 lc rgb '%s'", proto_color("tcp_stream"))
    lat = lat.sprintf(", peer(pk) using 1:4 with lines lw 1 dt 2 lc rgb '%s'", proto_color("tcp_stream"))
  }
  if (x > 0) {
    set arrow 1 from x, graph 0 to x, graph 1 nohead dt 2 lw 1.5 lc rgb "black" back
    # Beside the line, on the side with more room.
    if (x * x > xmin * xmax) {
      set label 1 "crossover" at x, graph 0.04 right offset -0.4, 0 font ",8" front
    } else {
      set label 1 "crossover" at x, graph 0.04 left offset 0.4, 0 font ",8" front
    }
  }
  set origin cell_x(i), bw_y(i)
  set size w, h
  set title ptitle(k).": GB/s" noenhanced
  set logscale y 10
  set ylabel "GB/s"
  eval "plot ".bw
  if (i == 1) {
    do for [j = 0:words(legend)] { unset label 10 + j }
  }
  set origin cell_x(i), lat_y(i)
  set title ptitle(k).": latency, p50 solid, p99 dashed" noenhanced
  set ylabel "microseconds"
  eval "plot ".lat
  unset arrow 1
  unset label 1
}

# auto / best fixed, one line per pattern that has it, and the target.
if (n > 0) {
  set origin cell_x(cells), bw_y(cells)
  set size w, h
  set title "auto / best fixed (p50), 0.95 target" noenhanced
  unset logscale y
  set yrange [0 : 1.2 < *]
  set ylabel "auto / best fixed"
  set key bottom left font ",8"
  ratio = ""
  do for [i = 1:n] {
    if (count(rows(word(panels, i), "rplasma", "auto")." | awk '$5 != \"NaN\"'") > 0) {
      ratio = ratio.sprintf(", rows(word(panels, %d), 'rplasma', 'auto') using 1:5 with linespoints" \
                            ." lw 2 pt 7 ps 0.6 lc %d title ptitle(word(panels, %d))", i, i, i)
    }
  }
  if (ratio eq "") { set label 2 "no auto / best fixed in this CSV" at graph 0.5, 0.5 center }
  # Each pattern's crossover, as text in the cell below.
  set label 3 "crossover: first size where\npin's GB/s exceeds get's\n\n".crossovers \
      at screen cell_x(cells) + 0.1 * w, lat_y(cells) + 0.9 * h left front noenhanced
  set label 4 "0.95" at graph 0, first 0.95 left offset 0.5, 0.6 font ",8" front
  eval "plot 0.95 with lines dt 2 lw 1.5 lc rgb 'black' notitle".ratio
}
unset multiplot
