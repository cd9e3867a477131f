#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 20's stages
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${CISPMV_COMMIT:-exp} JOBS=16
mkdir -p $RES
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
s=$(date +%s)
build() {
  TARGETS="$1" timeout $2 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; tail -30 $RES/build.txt; pack; exit 1; }
  echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
}
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
case "$1" in
  tbl)  # session 20: the value table's order and the lanes' entry order (perf/tbl_exp.cpp, experiment)
    build tbl_exp 520
    X=build/cuda/perf/tbl_exp
    timeout 240 $X $FC 50 > $RES/tbl-fc.txt 2>&1; echo "tbl fc rc $?" | tee -a $RES/log.txt
    cat $RES/tbl-fc.txt; pack
    S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section Occupancy --section LaunchStats"
    K="--kernel-name-base demangled -k regex:csell_rows|CompressedSell"
    timeout 240 ncu --csv --page raw $K $S --metrics l1tex__data_pipe_lsu_wavefronts.sum,breakdown:l1tex__throughput.avg.pct_of_peak_sustained_active $X $FC 0 > $RES/ncu.csv 2> $RES/ncu.err
    rc=$?; echo "ncu rc $rc" | tee -a $RES/log.txt
    if [ $rc -ne 0 ]; then
      timeout 200 ncu --csv --page raw $K $S --metrics l1tex__data_pipe_lsu_wavefronts.sum $X $FC 0 > $RES/ncu.csv 2> $RES/ncu.err; echo "ncu (no breakdown) rc $?" | tee -a $RES/log.txt
    fi
    tail -3 $RES/ncu.err ;;
  tbl2)  # session 20: table orders only, frozen core and all-electron
    build tbl_exp 520
    X=build/cuda/perf/tbl_exp
    timeout 120 $X $FC 50 tables > $RES/tbl-fc.txt 2>&1; echo "tbl fc rc $?" | tee -a $RES/log.txt
    cat $RES/tbl-fc.txt; pack
    timeout $(( 590 - ($(date +%s) - s) )) $X fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps 10 tables > $RES/tbl-ae.txt 2>&1; echo "tbl ae rc $?" | tee -a $RES/log.txt
    cat $RES/tbl-ae.txt ;;
  s20e)  # session 20: the committed code's CUDA tests, and spmv_bench on the frozen core
    build "cispmv_test_cuda spmv_bench" 540
    timeout 200 build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    tail -4 $RES/test-cuda.txt; pack
    bash $0 bench fc $FC ;;
  final)  # session 20: the commit's CUDA tests, spmv_bench on the frozen core and the all-electron FCI
    bash $0 s20e && bash $0 bench ae fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps ;;
  s20g)  # session 20: windows of 64 against 256 again, and k = 8 block products beside one vector, in one run each
    build spmv_bench 450
    for m in fc:$FC ae:fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps; do
      B=build/cuda/perf/spmv_bench; tag=${m%%:*}; M=${m#*:}
      timeout 200 $B --matrix $M --vectors 8 --iterations 20 --repetitions 5 --out-dir $RES/$tag \
        --benchmark_filter='kokkos-kernels/native|csell/automatic/lanes:1/sort:(64|256)/|table:frequency|block/k:8/(csell-inline-sorted/lanes|kokkos|cusparse-spmm)' > $RES/$tag.txt 2>&1
      echo "$tag rc $?" | tee -a $RES/log.txt
      grep -E "median" $RES/$tag.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2}' | sed 's/iterations:[0-9]*\/repeats:[0-9]*\/manual_time_median//' | tee -a $RES/log.txt
      pack
    done ;;
  bench)  # spmv_bench: Kokkos Kernels, cuSPARSE, csell automatic (co-occurrence table) and with its table by frequency
    B=build/cuda/perf/spmv_bench
    show() { grep -E "median" $1 | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2, $NF}' | sed 's/iterations:[0-9]*\/repeats:[0-9]*\/manual_time_median//' ; }
    timeout $(( 590 - ($(date +%s) - s) )) $B --matrix $3 --iterations 20 --repetitions 5 --out-dir $RES/$2 \
      --benchmark_filter='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic|table:frequency' > $RES/$2.txt 2>&1; echo "$2 rc $?" | tee -a $RES/log.txt
    show $RES/$2.txt | tee -a $RES/log.txt ;;
esac
pack
