#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 21's stages
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
  final)  # session 21: the commit's CUDA tests and block products on the frozen core
    build "cispmv_test_cuda spmv_bench" 420
    timeout 150 build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    tail -4 $RES/test-cuda.txt; pack
    bash $0 blocks fc $FC ;;
  ab)  # session 21: one pair against two per lane in spmv_bench, frozen core (k = 4, 8, 16) and all-electron (k = 8)
    build spmv_bench 420
    VECS=4,8,16 FILTER='csell/automatic/lanes:1/sort:64/|block/k:[0-9]+/csell-inline-sorted/lanes' bash $0 blocks fc $FC; pack
    VECS=8 ITERS=10 FILTER='csell/automatic/lanes:1/sort:64/|block/k:[0-9]+/(csell-inline-sorted/lanes|kokkos-kernels/native|cusparse-spmm)' bash $0 blocks ae fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps ;;
  blocks)  # spmv_bench: one vector (csell automatic) and k = 2, 4, 8, 16 (the eigensolver's csell, KK rank-2, cuSPARSE SpMM)
    B=build/cuda/perf/spmv_bench
    timeout $(( 590 - ($(date +%s) - s) )) $B --matrix $3 --vectors ${VECS:-2,4,8,16} --iterations ${ITERS:-20} --repetitions 5 --out-dir $RES/$2 \
      --benchmark_filter="${FILTER:-kokkos-kernels/native|csell/automatic|block/k:[0-9]+/(csell-inline-sorted/lanes|kokkos-kernels/native|cusparse-spmm)}" > $RES/$2.txt 2>&1
    echo "$2 rc $?" | tee -a $RES/log.txt
    grep -E "median" $RES/$2.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2}' | sed 's/iterations:[0-9]*\/repeats:[0-9]*\/manual_time_median//' | tee -a $RES/log.txt ;;
  blkq)  # session 21: timings only, frozen core
    build blk_exp 300
    timeout 200 build/cuda/perf/blk_exp $FC 20 > $RES/blk-fc.txt 2>&1; echo "blk fc rc $?" | tee -a $RES/log.txt; pack
    [ "${AE:-0}" = 1 ] && { timeout $(( 590 - ($(date +%s) - s) )) build/cuda/perf/blk_exp fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps 5 > $RES/blk-ae.txt 2>&1; echo "blk ae rc $?" | tee -a $RES/log.txt; } ;;
  blk2)  # session 21: the same, more shapes, no ncu, frozen core only
    build blk_exp 300
    X=build/cuda/perf/blk_exp
    timeout 200 $X $FC 20 > $RES/blk-fc.txt 2>&1; echo "blk fc rc $?" | tee -a $RES/log.txt
    cat $RES/blk-fc.txt; pack
    M="gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,launch__block_size,launch__grid_size,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio"
    timeout 200 ncu --csv --page raw --kernel-name-base demangled -k "regex:blk_dup(_gs)?<.int.8, .int.4>|int.8>, Kokkos::RangePolicy<Kokkos::Cuda, cispmv::impl::(PairTag|LaneTag<.int.2, .int.2>)" --metrics $M $X $FC 0 > $RES/ncu.csv 2> $RES/ncu.err
    echo "ncu rc $?" | tee -a $RES/log.txt; tail -3 $RES/ncu.err
    cuobjdump -sass $X | awk '/Function :/ {keep = ($0 ~ /blk_dupILi8ELi4/ || $0 ~ /PairTagILi0EE/)} keep' > $RES/sass.txt; ls -la $RES/sass.txt; pack
    [ "${AE:-0}" = 1 ] && { timeout $(( 590 - ($(date +%s) - s) )) $X fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps 5 > $RES/blk-ae.txt 2>&1; echo "blk ae rc $?" | tee -a $RES/log.txt; cat $RES/blk-ae.txt; } ;;
  blk)  # session 21: csell's block product, the library's lanes against raw dup / shfl shapes (perf/blk_exp.cpp)
    build blk_exp 300
    X=build/cuda/perf/blk_exp
    timeout 150 $X $FC 20 > $RES/blk-fc.txt 2>&1; echo "blk fc rc $?" | tee -a $RES/log.txt
    cat $RES/blk-fc.txt; pack
    M="gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__inst_executed.avg.per_cycle_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio"
    K="--kernel-name-base demangled -k regex:blk_|SpmvBlock"
    timeout 200 ncu --csv --page raw $K --metrics $M $X $FC 0 > $RES/ncu.csv 2> $RES/ncu.err
    echo "ncu rc $?" | tee -a $RES/log.txt; tail -3 $RES/ncu.err; pack
    timeout $(( 590 - ($(date +%s) - s) )) $X fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps 5 > $RES/blk-ae.txt 2>&1; echo "blk ae rc $?" | tee -a $RES/log.txt
    cat $RES/blk-ae.txt ;;
esac
pack
