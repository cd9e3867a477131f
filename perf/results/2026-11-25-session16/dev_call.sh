#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 16
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/$CISPMV_COMMIT JOBS=16
mkdir -p $RES
B=build/cuda/perf/spmv_bench
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
show() { grep "spmv_bench:" $1; grep -E "median" $1 | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2, $NF}' | head -60; }
F='kokkos-kernels/native|cusparse|csell/automatic/lanes:1/sort:(none|64)/'
C='csell/automatic/lanes:1/sort:(none|64)/'
s=$(date +%s)
build() {
  TARGETS="$1" timeout $2 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
  echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
}
case "$1" in
  mix)  # the mixed table / inline experiment on the frozen core
    build spmv_bench 480
    timeout 60 $B --matrix $FC --iterations 20 --repetitions 3 --out-dir $RES/fc --benchmark_filter="$F" > $RES/fc.txt 2>&1; echo "fc: rc $?"
    show $RES/fc.txt; pack
    for m in $2; do
      left=$(( 580 - ($(date +%s) - s) )); [ $left -lt 25 ] && break
      CISPMV_EXP_MIX=$m timeout $left $B --matrix $FC --iterations 20 --repetitions 3 --out-dir $RES/fc-$m --benchmark_filter="$C" > $RES/fc-$m.txt 2>&1; echo "fc mix $m: rc $?"
      show $RES/fc-$m.txt | grep -v kokkos; pack
    done ;;
  ae)  # the frozen core and the all-electron matrix with mixes, then ncu
    build spmv_bench 480
    for m in $4; do
      CISPMV_EXP_MIX=$m timeout 60 $B --matrix $FC --iterations 20 --repetitions 3 --out-dir $RES/fc-$m --benchmark_filter="$C" > $RES/fc-$m.txt 2>&1; echo "fc mix $m: rc $?"
      show $RES/fc-$m.txt; pack
    done
    for m in $2; do
      left=$(( 400 - ($(date +%s) - s) )); [ $left -lt 60 ] && break
      CISPMV_EXP_MIX=$m timeout $left $B --matrix $AE --iterations 10 --repetitions 3 --out-dir $RES/ae-$m --benchmark_filter="$C" > $RES/ae-$m.txt 2>&1; echo "ae mix $m: rc $?"
      show $RES/ae-$m.txt; pack
    done
    for f in $3; do  # name@mix=kernel-regex=benchmark-filter
      IFS='=' read -r name kre filt <<< "$f"; m=${name#*@}; [ "$m" = "$name" ] && m=""
      left=$(( 580 - ($(date +%s) - s) )); [ $left -lt 30 ] && break
      CISPMV_EXP_MIX=$m timeout $left ncu --kernel-name-base demangled --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
        --section Occupancy --section WarpStateStats --section LaunchStats --print-details all \
        -k regex:$kre -c 1 --launch-skip 3 $B --matrix $FC --iterations 3 --repetitions 1 --vectors 8 --benchmark_filter="$filt" > $RES/ncu-$name.txt 2>&1
      echo "ncu $name: rc $?"; pack
    done ;;
  swap)  # the lane shape's load order: new (default) and old (CISPMV_EXP_NOSWAP) in one binary
    build spmv_bench 480
    BF='block/k:(1|4|8|16)/(csell-inline-sorted/lanes/|csr/lanes/|kokkos-kernels|cusparse-spmm/row)'
    for v in new old; do
      if [ $v = old ]; then export CISPMV_EXP_NOSWAP=1; fi
      timeout 90 $B --matrix $FC --iterations 20 --repetitions 3 --vectors 1,4,8,16 --out-dir $RES/fc-$v --benchmark_filter="$BF" > $RES/fc-$v.txt 2>&1; echo "fc $v: rc $?"
      show $RES/fc-$v.txt | grep -v "kokkos\|cusparse" | grep block; pack
    done
    unset CISPMV_EXP_NOSWAP
    for v in new old; do
      left=$(( 585 - ($(date +%s) - s) )); [ $left -lt 40 ] && break
      if [ $v = old ]; then export CISPMV_EXP_NOSWAP=1; fi
      timeout $left $B --matrix $AE --iterations 10 --repetitions 3 --vectors 8 --out-dir $RES/ae-$v --benchmark_filter='block/k:8/csell-inline-sorted/lanes/' > $RES/ae-$v.txt 2>&1; echo "ae $v: rc $?"
      show $RES/ae-$v.txt | grep block; pack
    done ;;
  head)  # HEAD's block products (no experiment switch)
    build spmv_bench 480
    BF='block/k:(1|4|8|16)/(csell-inline-sorted/lanes/|csr/lanes/|kokkos-kernels|cusparse-spmm/row)'
    timeout 90 $B --matrix $FC --iterations 20 --repetitions 3 --vectors 1,4,8,16 --out-dir $RES/fc --benchmark_filter="$BF|device/csell/automatic/lanes:1/sort:64/" > $RES/fc.txt 2>&1; echo "fc: rc $?"
    show $RES/fc.txt; pack
    left=$(( 585 - ($(date +%s) - s) ))
    timeout $left $B --matrix $AE --iterations 10 --repetitions 3 --vectors 8 --out-dir $RES/ae --benchmark_filter='block/k:8/csell-inline-sorted/lanes/|device/csell/automatic/lanes:1/sort:64/' > $RES/ae.txt 2>&1; echo "ae: rc $?"
    show $RES/ae.txt; pack ;;
  tests)
    build "cispmv_test_cuda cispmv_cli" 480
    timeout $(( 590 - ($(date +%s) - s) )) build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    tail -5 $RES/test-cuda.txt ;;
esac
pack
