#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 15
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/$CISPMV_COMMIT JOBS=16
mkdir -p $RES
B=build/cuda/perf/spmv_bench
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
show() { grep "spmv_bench:" $1; grep -E "median" $1 | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2, $NF}' | head -60; }
F='kokkos-kernels/native|cusparse|csell/automatic/lanes:1/(sort|iter)|csell/scalar/lanes:1/'
s=$(date +%s)
case "$1" in
  gpu)
    TARGETS="spmv_bench" timeout 520 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    timeout 60 $B --matrix $FC --iterations 20 --repetitions 3 --out-dir $RES/fc --benchmark_filter="${3:-$F}" > $RES/fc.txt 2>&1; echo "fc: rc $?"
    show $RES/fc.txt; pack
    [ "$2" = none ] && { pack; exit 0; }
    left=$(( 585 - ($(date +%s) - s) ))
    timeout $left $B --matrix $AE --iterations 10 --repetitions 3 --out-dir $RES/ae --benchmark_filter="$2" > $RES/ae.txt 2>&1; echo "ae: rc $?"
    show $RES/ae.txt ;;
  carve)
    TARGETS="spmv_bench" timeout 470 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    for pct in $2; do
      CISPMV_EXP_CARVEOUT=$pct timeout 60 $B --matrix $FC --iterations 20 --repetitions 3 --out-dir $RES/fc$pct --benchmark_filter='kokkos-kernels/native|rows_per_block:(256|1024)/iter|staged:' > $RES/fc$pct.txt 2>&1; echo "fc carveout $pct: rc $?"
      show $RES/fc$pct.txt | grep -v kokkos; pack
    done ;;
  ae)
    timeout 300 $B --matrix $AE --iterations 10 --repetitions 3 --out-dir $RES/ae --benchmark_filter="$2" > $RES/ae.txt 2>&1; echo "ae: rc $?"
    show $RES/ae.txt ;;
  ncu)
    TARGETS="spmv_bench" timeout 400 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; pack; exit 1; }
    rm -f $RES/bootstrap.txt
    for f in $2; do
      timeout 120 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats \
        -k regex:cispmv -c 1 --launch-skip 3 $B --matrix $FC --iterations 3 --repetitions 1 --benchmark_filter="$f/iter" > $RES/ncu-$(echo $f | tr '/:' '__').txt 2>&1
      echo "ncu $f: rc $?"
    done ;;
esac
pack
