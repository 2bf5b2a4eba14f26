# plot_bench.gp: the rplasma-bench-mpi plot. gnuplot -e "csv='in.csv'; png='out.png'" plot_bench.gp
# Left: aggregate GB/s by object size; right: p50 (solid) and p99 (dashed) latency by size. One line
# per system/protocol/pattern (aggregate rows, concurrency 1 by default: set conc=N to pick).
# Uses pngcairo where it exists, else png.
if (!exists("csv")) csv = 'rplasma-bench-mpi.csv'
if (!exists("png")) png = 'rplasma-bench-mpi.png'
if (!exists("conc")) conc = 1
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 1400,600 font ",9"
} else {
  set terminal png size 1400,600
}
set output png
set logscale x 2
set logscale y 10
set grid
set format y "%g"
set key outside bottom center horizontal maxrows 4 font ",8" noautotitle

# Columns: 1 benchmark 2 system 3 transport 4 protocol 5 object_size 6 ops_per_s 7 gb_per_s
#          8 p50_us 9 p99_us 10 pattern 11 ranks 12 concurrency 13 mean_us 14 p95_us 15 rank 16 aggregate
#          17 auto_vs_best (not plotted)
# The distinct series: "benchmark/system/protocol/pattern" of aggregate rows.
series = system(sprintf("awk -F, 'NR>1 && $16==1 && $12==%d {print $1\"/\"$2\"/\"$4\"/\"$10}' '%s' | sort -u | tr '\\n' ' '", conc, csv))
n = words(series)
# One series' aggregate rows as "size gb_per_s p50_us p99_us", sorted by size (gnuplot would break
# a line at every row of another series otherwise).
rows(s) = sprintf("< awk -F, -v s='%s' -v c=%d 'NR>1 && $16==1 && $12==c && $1\"/\"$2\"/\"$4\"/\"$10==s {print $5, $7, $8, $9}' '%s' | sort -n", s, conc, csv)
set xtics ("1K" 1024, "4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304, \
           "16M" 16777216, "64M" 67108864, "256M" 268435456, "1G" 1073741824)
set datafile separator whitespace
set multiplot layout 1,2 title sprintf("rplasma-bench-mpi (%s)", csv) noenhanced
set title "aggregate bandwidth" noenhanced
set xlabel "object size (bytes)"
set ylabel "GB/s"
plot for [i=1:n] rows(word(series,i)) using 1:2 with linespoints lw 2 lc i title word(series,i) noenhanced
set title "latency: p50 (solid), p99 (dashed)" noenhanced
set ylabel "microseconds"
plot for [i=1:n] rows(word(series,i)) using 1:3 with linespoints lw 2 lc i title word(series,i) noenhanced, \
     for [i=1:n] rows(word(series,i)) using 1:4 with lines dt 2 lc i notitle
unset multiplot
