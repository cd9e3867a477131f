#!/usr/bin/env bash
# one device call (not committed): session 12
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/$CISPMV_COMMIT JOBS=16
mkdir -p $RES
med() { sed 's/\x1b\[[0-9;]*m//g' "$1" | grep median | awk '{print $1, $2, $NF}' | sed 's|/iterations.*manual_time_median||'; }
B=build/cuda/perf/spmv_bench
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
export OMP_PROC_BIND=spread OMP_PLACES=cores
case "$1" in
  exp)
    s=$(date +%s)
    TARGETS="spmv_bench" timeout 420 bash perf/run_on_device.sh build || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    cc=$(ninja -C build/cuda -t commands perf/spmv_bench | grep -- "-c /.*spmv_bench.cpp" | tail -1)
    ln=$(ninja -C build/cuda -t commands perf/spmv_bench | grep -- "-o perf/spmv_bench " | tail -1)
    echo "$cc" > $RES/cc.txt; echo "$ln" > $RES/ln.txt
    for e in panel_exp kern_exp; do
      c2=$(echo "$cc" | sed "s|-o perf/CMakeFiles/spmv_bench.dir/spmv_bench.cpp.o|-o /tmp/$e.o|; s|-c [^ ]*spmv_bench.cpp|-c $PWD/exp/$e.cpp|")
      l2=$(echo "$ln" | sed "s|perf/CMakeFiles/spmv_bench.dir/spmv_bench.cpp.o|/tmp/$e.o|; s|-o perf/spmv_bench |-o /tmp/$e |")
      (cd build/cuda && eval "$c2" && eval "$l2") > $RES/build-$e.txt 2>&1; echo "$e build rc $?" | tee -a $RES/log.txt
    done
    timeout 120 /tmp/panel_exp $FC device > $RES/panel-device-fc.txt 2>&1; echo "panel device rc $?"; cat $RES/panel-device-fc.txt; pack
    timeout 120 /tmp/panel_exp $FC host > $RES/panel-host16-fc.txt 2>&1; echo "panel host rc $?"; cat $RES/panel-host16-fc.txt; pack
    timeout 100 /tmp/kern_exp $FC > $RES/kern-host16-fc.txt 2>&1; echo "kern host rc $?"; cat $RES/kern-host16-fc.txt; pack ;;
  blocks0)
    s=$(date +%s)
    TARGETS="spmv_bench" timeout 420 bash perf/run_on_device.sh build || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    exec bash $0 blocks ;;
  inl0)
    s=$(date +%s)
    TARGETS="spmv_bench" timeout 420 bash perf/run_on_device.sh build || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    timeout 100 $B --matrix $FC --vectors 1,8,16 --iterations 20 --repetitions 3 \
      --benchmark_filter='block/k:[0-9]+/(csell|csell-inline|csell-inline-sorted)/lanes|kokkos-kernels/native|csell/automatic/lanes:1/sort:64' > $RES/blocks-fc.txt 2>&1; echo "blocks fc rc $?"; pack
    timeout 60 ncu --clock-control none --target-processes all --kernel-name-base demangled -k regex:'SpmvBlockFunctor' \
      --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
      --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats $B \
      --matrix $FC --vectors 8 --iterations 1 --repetitions 1 --out-dir /tmp --benchmark_filter='block/k:8/csell-inline/lanes/iter' > $RES/ncu-inline-fc.txt 2>&1
    echo "ncu rc $?"; pack
    timeout 150 $B --matrix $AE --vectors 8 --iterations 5 --repetitions 3 \
      --benchmark_filter='block/k:8/(csell|csell-inline|csell-inline-sorted)/lanes/iter|csell/automatic/lanes:1/sort:64' > $RES/blocks-alle.txt 2>&1; echo "blocks alle rc $?"; pack
    for f in $RES/blocks-*.txt; do echo "== $f"; med $f | sed 's|^[^/]*/device/||'; done
    grep -E "Registers Per|Achieved Occupancy|L1/TEX Hit|L2 Hit|Duration|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput" $RES/ncu-inline-fc.txt | cut -c1-160 | head -20 ;;
  fin1)
    s=$(date +%s)
    TARGETS="cispmv_test_cuda spmv_bench cispmv_cli" timeout 540 bash perf/run_on_device.sh build || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    left=$(( 585 - ($(date +%s) - s) ))
    [ $left -gt 20 ] && { timeout $left build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt; grep -E "FAILED|PASSED" $RES/test-cuda.txt | tail -8; } ;;
  fin2)
    [ -x build/cuda/src/app/cispmv ] || { echo "no build"; exit 1; }
    grep -q "PASSED" $RES/test-cuda.txt 2>/dev/null || { timeout 200 build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt; grep -E "FAILED|PASSED" $RES/test-cuda.txt | tail -8; }
    C=build/cuda/src/app/cispmv
    for run in "--roots 1" "--roots 5" "--roots 5 --format csell" "--roots 5 --format csr"; do
      tag=$(echo "$run" | tr -d ' -')
      /usr/bin/time -v timeout 60 $C ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps $run --json $RES/ci-$tag.json > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
      echo "ci $run: rc $?"; grep -E "Elapsed|Maximum resident" $RES/ci-$tag.time; grep -E "^automatic|^converted|^timings|^total|davidson:" $RES/ci-$tag.txt
    done; pack
    timeout 240 $B --matrix $AE --vectors 1,2,4,16 --iterations 5 --repetitions 3 \
      --benchmark_filter='block/k:[0-9]+/(csell/lanes/iter|csell-inline-sorted|kokkos|cusparse-spmm/row)' > $RES/blocks-alle.txt 2>&1; echo "blocks alle rc $?"; pack
    for f in $RES/blocks-*.txt; do echo "== $f"; med $f | sed 's|^[^/]*/device/||'; done ;;
  fin3)
    s=$(date +%s)
    TARGETS="cispmv_cli cispmv_test_host" timeout 480 bash perf/run_on_device.sh build || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    timeout 30 build/cuda/unit_tests/cispmv_test_host --gtest_filter='ChooseFormat*:Registry*' > $RES/test-host.txt 2>&1; echo "host tests rc $?" | tee -a $RES/log.txt; grep -E "FAILED|PASSED|OK" $RES/test-host.txt | tail -12
    C=build/cuda/src/app/cispmv
    for run in "--roots 1" "--roots 5" "--roots 10" "--roots 5 --format csr"; do
      tag=$(echo "$run" | tr -d ' -')
      /usr/bin/time -v timeout 40 $C ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps $run --json $RES/ci-$tag.json > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
      echo "ci $run: rc $?"; grep -E "Elapsed|Maximum resident" $RES/ci-$tag.time; grep -E "^automatic|^converted|^timings|^total" $RES/ci-$tag.txt | cut -c1-400
    done
    for run in "--roots 1" "--roots 5"; do
      tag=fc$(echo "$run" | tr -d ' -')
      /usr/bin/time -v timeout 30 $C ci unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps $run --json $RES/ci-$tag.json > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
      echo "ci fc $run: rc $?"; grep -E "Elapsed" $RES/ci-$tag.time; grep -E "^automatic|^timings|^total" $RES/ci-$tag.txt | cut -c1-300
    done ;;
  blocks)
    timeout 100 $B --matrix $FC --vectors 1,8,16 --iterations 20 --repetitions 3 \
      --benchmark_filter='block/k:[0-9]+/(csell/(lanes|rows)|kokkos|cusparse-spmm)|kokkos-kernels/native|csell/automatic/lanes:1/sort:64' > $RES/blocks-fc.txt 2>&1; echo "blocks fc rc $?"; pack
    timeout 100 ncu --clock-control none --target-processes all --kernel-name-base demangled -k regex:'Spmv(Block)?Functor' \
      --launch-count 6 --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
      --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats $B \
      --matrix $FC --vectors 1,8 --iterations 1 --repetitions 1 --out-dir /tmp --benchmark_filter='block/k:8/csell/lanes/iter|block/k:1/csell/lanes/iter|device/csell/scalar/lanes:1/iter' > $RES/ncu-blocks-fc.txt 2>&1
    echo "ncu rc $?"; pack
    timeout 170 $B --matrix $AE --vectors 1,8 --iterations 5 --repetitions 3 \
      --benchmark_filter='block/k:[0-9]+/(csell/lanes/iter|kokkos|cusparse-spmm/row)|kokkos-kernels/native|csell/automatic/lanes:1/sort:64' > $RES/blocks-alle.txt 2>&1; echo "blocks alle rc $?"; pack
    for f in $RES/blocks-*.txt; do echo "== $f"; med $f | sed 's|^[^/]*/device/||'; done
    grep -E "SpmvBlockFunctor|Registers Per|Achieved Occupancy|Memory Throughput|L1/TEX Hit|L2 Hit|Duration|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput" $RES/ncu-blocks-fc.txt | cut -c1-160 | head -40 ;;
esac
pack
