#!/usr/bin/env bash
# one device call (not committed): session 14
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/$CISPMV_COMMIT JOBS=16
mkdir -p $RES
B=build/cuda/perf/spmv_bench
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
export OMP_PROC_BIND=spread OMP_PLACES=cores
F='kokkos-kernels/native|/csr/scalar|csell/scalar/lanes:1|csell/automatic/lanes:1/sort|csell/scalar/values'
s=$(date +%s)
case "$1" in
  host)
    TARGETS="spmv_bench" timeout 470 bash perf/run_on_device.sh build || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    OMP_NUM_THREADS=16 timeout 60 $B --space host --matrix $FC --iterations 10 --repetitions 3 --out-dir $RES --benchmark_filter="$F" > $RES/host16-fc.txt 2>&1; echo "fc 16: rc $?"
    grep -E "median|choice|AVX|gathers" $RES/host16-fc.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2, $NF}' | head -30; pack
    OMP_NUM_THREADS=2 timeout 80 $B --space host --matrix $FC --iterations 5 --repetitions 3 --out-dir $RES/t2 --benchmark_filter="$F" > $RES/host2-fc.txt 2>&1; echo "fc 2: rc $?"
    grep -E "median" $RES/host2-fc.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2, $NF}' | head -30; pack ;;
  tests)
    TARGETS="cispmv_test_cuda spmv_bench" timeout 480 bash perf/run_on_device.sh build || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    left=$(( 585 - ($(date +%s) - s) ))
    timeout $left build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt; grep -E "FAILED|PASSED" $RES/test-cuda.txt | tail -8; pack ;;
  ae)
    TARGETS="spmv_bench" timeout 470 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    for t in 16 2; do
      OMP_NUM_THREADS=$t timeout 70 $B --space host --matrix $FC --iterations 10 --repetitions 3 --out-dir $RES/fc$t --benchmark_filter="$F" > $RES/host$t-fc.txt 2>&1; echo "fc $t: rc $?"
      grep "spmv_bench:" $RES/host$t-fc.txt; grep -E "median" $RES/host$t-fc.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2, $NF}' | head -30; pack
    done
    left=$(( 585 - ($(date +%s) - s) ))
    OMP_NUM_THREADS=16 timeout $left $B --space host --matrix $AE --iterations 5 --repetitions 3 --out-dir $RES --benchmark_filter="$F" > $RES/host16-ae.txt 2>&1; echo "ae 16: rc $?"; grep "spmv_bench:" $RES/host16-ae.txt; grep -E "median" $RES/host16-ae.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2, $NF}' | head -30 ;;
esac
pack
