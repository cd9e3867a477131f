#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 22's stages
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${CISPMV_COMMIT:-exp} JOBS=16
mkdir -p $RES
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
s=${S0:-$(date +%s)}; export S0=$s
build() {
  TARGETS="$1" timeout $2 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; tail -30 $RES/build.txt; pack; exit 1; }
  echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
}
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
case "$1" in
  final)  # the commit's CUDA tests and block products on the frozen core
    build "cispmv_test_cuda spmv_bench cispmv_cli" 430
    timeout 150 build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    tail -4 $RES/test-cuda.txt; pack
    bash $0 blocks fc $FC ;;
  ae)  # the next call on the warm machine (build/ kept): all-electron block products, then cispmv ci 1 and 5 roots
    build "spmv_bench cispmv_cli" 200
    VECS=${VECS:-8,16} ITERS=10 bash $0 blocks ae fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps; pack
    for run in "--roots 1" "--roots 5"; do
      tag=$(echo "$run" | tr -d ' -')
      /usr/bin/time -v build/cuda/src/app/cispmv ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps $run \
        --json $RES/ci-$tag.json > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
      echo "ci $run: exit code $?" | tee -a $RES/log.txt
      grep -E "Elapsed" $RES/ci-$tag.time | tee -a $RES/log.txt
      grep -E "^automatic|^timings|^total|^root|^ *[0-9]+ +-" $RES/ci-$tag.txt | head -12 | tee -a $RES/log.txt
    done ;;
  pair)  # session 22: the pair kernel's loads (perf/pair_exp.cpp), frozen core; AE=1 the all-electron matrix too
    build pair_exp 300
    X=build/cuda/perf/pair_exp
    timeout 200 $X $FC 20 > $RES/pair-fc.txt 2>&1; echo "pair fc rc $?" | tee -a $RES/log.txt
    cat $RES/pair-fc.txt; pack
    [ "${AE:-0}" = 1 ] && { timeout $(( 590 - ($(date +%s) - s) )) $X fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps 5 > $RES/pair-ae.txt 2>&1; echo "pair ae rc $?" | tee -a $RES/log.txt; cat $RES/pair-ae.txt; } ;;
  final2)  # session 22: the pair kernel in teams (the working tree): team sizes (pair_exp), CUDA tests, spmv_bench fc
    build "cispmv_test_cuda spmv_bench pair_exp" 450
    timeout 100 build/cuda/perf/pair_exp $FC 20 > $RES/pair-fc.txt 2>&1; echo "pair fc rc $?" | tee -a $RES/log.txt
    grep -E "one vector|K= 8" $RES/pair-fc.txt; pack
    timeout 90 build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    tail -3 $RES/test-cuda.txt; pack
    VECS=2,4,8,16 FILTER='csell/automatic/lanes:1/sort:64/|block/k:[0-9]+/(csell-inline-sorted/lanes|kokkos-kernels/native|cusparse-spmm)' bash $0 blocks fc $FC; pack
    timeout $(( 585 - ($(date +%s) - s) )) build/cuda/perf/pair_exp fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps 5 > $RES/pair-ae.txt 2>&1
    echo "pair ae rc $?" | tee -a $RES/log.txt; grep -E "one vector|K=" $RES/pair-ae.txt ;;
  ncu)  # session 22: ncu of the pair kernel (k = 8) on both matrices: where the all-electron time goes (perf/pair_exp.cpp)
    build pair_exp 300
    X=build/cuda/perf/pair_exp
    M="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_op_read_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio"
    for m in fc ae; do
      [ $m = fc ] && F=$FC || F=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
      timeout $(( 590 - ($(date +%s) - s) )) ncu --csv --page raw --kernel-name-base demangled -k "regex:blk_dup<.int.8, .int.4>|int.8>, Kokkos::RangePolicy<Kokkos::Cuda, cispmv::impl::PairTag" --metrics $M $X $F 0 > $RES/ncu-$m.csv 2> $RES/ncu-$m.err
      echo "ncu $m rc $?" | tee -a $RES/log.txt; tail -2 $RES/ncu-$m.err; pack
    done ;;
  blocks)  # spmv_bench: one vector (csell automatic) and k = 2, 4, 8, 16 (the eigensolver's csell, KK rank-2, cuSPARSE SpMM)
    B=build/cuda/perf/spmv_bench
    timeout $(( 590 - ($(date +%s) - s) )) $B --matrix $3 --vectors ${VECS:-2,4,8,16} --iterations ${ITERS:-20} --repetitions 5 --out-dir $RES/$2 \
      --benchmark_filter="${FILTER:-kokkos-kernels/native|csell/automatic|block/k:[0-9]+/(csell-inline-sorted/lanes|kokkos-kernels/native|cusparse-spmm)}" > $RES/$2.txt 2>&1
    echo "$2 rc $?" | tee -a $RES/log.txt
    grep -E "median" $RES/$2.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2}' | sed 's/iterations:[0-9]*\/repeats:[0-9]*\/manual_time_median//' | tee -a $RES/log.txt ;;
esac
pack
