# Renders the accuracy chart of docs/benchmarks.md from the data files AccuracySimulation writes.
#   gnuplot -e "data='benchmarks/target/accuracy'" -e "out='docs/benchmarks-accuracy.png'" benchmarks/accuracy.gnuplot
if (!exists("data")) data = 'benchmarks/target/accuracy'
if (!exists("out")) out = 'docs/benchmarks-accuracy.png'

set terminal pngcairo size 1300,1150 font "DejaVu Sans,11" noenhanced
set output out
set multiplot layout 3,1 title "Requests admitted in the trailing second, limit 10 per second (leaky bucket counted when it lets a request through)" font ",13"
set grid ytics lc rgb "#dddddd"
set xrange [0:11]
set yrange [0:22]
set ytics 0,5,20
set xlabel "time (s); window edges at whole seconds"
set ylabel "admitted in last 1 s"
set key outside right top vertical Left reverse samplen 2 width 2
set style line 1 lc rgb "#bbbbbb" lw 1
set style line 2 lc rgb "#000000" lw 5 dt 1
set style line 3 lc rgb "#1f77b4" lw 2
set style line 4 lc rgb "#2ca02c" lw 2
set style line 5 lc rgb "#d62728" lw 2
set style line 6 lc rgb "#ffbf00" lw 2
set style line 7 lc rgb "#9467bd" lw 2 dt 2

do for [scenario in "steady bursty boundary"] {
  file = sprintf("%s/%s.dat", data, scenario)
  set title (scenario eq "steady" ? "Steady: 20 requests per second" : (scenario eq "bursty" ? "Bursty: 15 requests in 50 ms at irregular times, over 2 per second" : "Boundary bursts: 10 requests in the 100 ms before every other window edge and 10 in the 100 ms after"))
  plot 10 with lines lc rgb "#666666" dt 3 lw 1.5 title "limit", \
       file using 1:2 with steps ls 1 title "offered", \
       file using 1:3 with steps ls 2 title "exact (= SLIDING_WINDOW_LOG)", \
       file using 1:4 with steps ls 3 title "TOKEN_BUCKET", \
       file using 1:5 with steps ls 4 title "LEAKY_BUCKET", \
       file using 1:6 with steps ls 5 title "FIXED_WINDOW", \
       file using 1:8 with steps ls 7 title "SLIDING_WINDOW_COUNTER"
}
unset multiplot
