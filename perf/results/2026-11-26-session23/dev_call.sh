#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 23's stages
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${CISPMV_COMMIT:-exp} JOBS=16
mkdir -p $RES
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
s=${S0:-$(date +%s)}; export S0=$s
left() { echo $(( ${1:-590} - ($(date +%s) - s) )); }
build() {
  TARGETS="$1" timeout $2 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; tail -30 $RES/build.txt; pack; exit 1; }
  echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
}
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
B=build/cuda/perf/spmv_bench
ONE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/'
MANY='block/k:[0-9]+/(csell-inline-sorted/lanes|kokkos-kernels/native|cusparse-spmm)'
case "$1" in
  final)  # the commit's CUDA tests, then one vector and k = 2, 4, 8, 16 on the frozen core
    build "cispmv_test_cuda spmv_bench cispmv_cli" 440
    timeout 100 build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    tail -3 $RES/test-cuda.txt; pack
    bash $0 blocks fc $FC ;;
  ae)  # the warm machine (build/ kept): the all-electron matrix, then cispmv ci with 1 and 5 roots
    build "spmv_bench cispmv_cli" 200
    ITERS=10 bash $0 blocks ae $AE; pack
    for run in "--roots 1" "--roots 5"; do
      tag=$(echo "$run" | tr -d ' -')
      /usr/bin/time -v build/cuda/src/app/cispmv ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps $run \
        --json $RES/ci-$tag.json > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
      echo "ci $run: exit code $?" | tee -a $RES/log.txt
      grep -E "Elapsed" $RES/ci-$tag.time | tee -a $RES/log.txt
      grep -E "^automatic|^timings|^total|^root|^ *[0-9]+ +-" $RES/ci-$tag.txt | head -12 | tee -a $RES/log.txt
    done ;;
  ncu)  # the warm machine: what a product costs the L1 and L2, one vector against k = 8 (ae, fc), and scaled-1048576
    build "spmv_bench" 200
    M="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_op_read_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size"
    one() {  # matrix tag, spec, benchmark filter, kernel regex, extra
      timeout $(left 585) ncu --csv --page raw --kernel-name-base demangled -k "regex:$4" --launch-skip 1 --launch-count 1 --metrics $M \
        $B --matrix $2 ${5:-} --iterations 3 --repetitions 1 --out-dir /tmp/ncu-$1 --benchmark_filter="$3" > $RES/ncu-$1.csv 2> $RES/ncu-$1.err
      echo "ncu $1 rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; tail -2 $RES/ncu-$1.err; pack
    }
    [ "${ONE_VEC:-1}" = 1 ] && one ae-1 $AE 'csell/automatic/lanes:1/sort:64/' 'CompressedSell.*RowBlockTag'
    one ae-8 $AE 'block/k:8/csell-inline-sorted/lanes/' 'PairTag' '--vectors 8'
    [ "${ONE_VEC:-1}" = 1 ] && one fc-1 $FC 'csell/automatic/lanes:1/sort:64/' 'CompressedSell.*RowBlockTag'
    one fc-8 $FC 'block/k:8/csell-inline-sorted/lanes/' 'PairTag' '--vectors 8'
    [ "${SCALED:-1}" = 1 ] && one scaled-1 scaled-1048576 'csell/automatic' 'CompressedSell' ;;
  rb)  # session 23: csell's thread-per-row kernel at other occupancies (perf/rb_exp.cpp)
    build rb_exp 330
    for m in ${RB_MATRICES:-scaled-1048576 $FC $AE}; do
      tag=$(echo $m | sed 's/.*h2o_631g_fc.*/fc/; s/.*h2o_631g.fcidump.*/ae/')
      timeout $(left) build/cuda/perf/rb_exp $m 20 > $RES/rb-$tag.txt 2>&1; echo "rb $tag rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
      cat $RES/rb-$tag.txt | grep -v "^Kokkos::OpenMP\|^  " ; pack
    done ;;
  rbncu)  # session 23: ncu of rb_exp's unroll-4 row-block kernel on the frozen core, without and with bounds for 4 blocks
    build rb_exp 200
    M="gpu__time_duration.sum,l1tex__t_sector_hit_rate.pct,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts.sum,lts__t_sectors_srcunit_tex_op_read.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__shared_mem_config_size,launch__shared_mem_per_block,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
    timeout $(left) ncu --csv --page raw --kernel-name-base demangled -k "regex:RowBlockTag" --launch-skip 0 --launch-count 40 --metrics $M \
      build/cuda/perf/rb_exp $FC 1 > $RES/rbncu-fc.csv 2> $RES/rbncu-fc.err
    echo "rbncu fc rc $?" | tee -a $RES/log.txt; tail -3 $RES/rbncu-fc.err ;;
  final3)  # the working tree: CUDA tests, one vector on the frozen core and the all-electron matrix, cispmv ci one root
    build "cispmv_test_cuda spmv_bench cispmv_cli" 480
    timeout 60 build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    tail -3 $RES/test-cuda.txt; pack
    VECS=1 FILTER="$ONE" bash $0 blocks fc $FC; pack
    VECS=1 ITERS=10 FILTER="$ONE" bash $0 blocks ae $AE; pack
    /usr/bin/time -v build/cuda/src/app/cispmv ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 1 \
      --json $RES/ci-roots1.json > $RES/ci-roots1.txt 2> $RES/ci-roots1.time
    echo "ci --roots 1: exit code $?" | tee -a $RES/log.txt; grep -E "Elapsed" $RES/ci-roots1.time | tee -a $RES/log.txt
    grep -E "^automatic|^timings|^total|^ *[0-9]+ +-" $RES/ci-roots1.txt | head -6 | tee -a $RES/log.txt ;;
  pair)  # session 23: the pair kernel's teams with launch bounds (perf/pair_exp.cpp), frozen core then all-electron
    build pair_exp 300
    X=build/cuda/perf/pair_exp
    timeout 150 $X $FC 20 > $RES/pair-fc.txt 2>&1; echo "pair fc rc $?" | tee -a $RES/log.txt
    grep -E "one vector|K=" $RES/pair-fc.txt; pack
    timeout $(left 560) $X $AE 5 > $RES/pair-ae.txt 2>&1; echo "pair ae rc $?" | tee -a $RES/log.txt
    grep -E "one vector|K=" $RES/pair-ae.txt ;;
  tests)  # the CUDA test executable alone (row blocks capped at 256 rows for the bounded kernels)
    build "cispmv_test_cuda" 560
    timeout $(left) build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    grep -E "FAILED|PASSED|tests from" $RES/test-cuda.txt | tail -5 ;;
  blocks)  # spmv_bench: one vector (csell automatic, Kokkos Kernels, cuSPARSE) and k = 2, 4, 8, 16
    timeout $(left) $B --matrix $3 --vectors ${VECS:-2,4,8,16} --iterations ${ITERS:-20} --repetitions 5 --out-dir $RES/$2 \
      --benchmark_filter="${FILTER:-$ONE|$MANY}" > $RES/$2.txt 2>&1
    echo "$2 rc $?" | tee -a $RES/log.txt
    grep -E "median" $RES/$2.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2}' | sed 's/iterations:[0-9]*\/repeats:[0-9]*\/manual_time_median//' | tee -a $RES/log.txt ;;
esac
pack
