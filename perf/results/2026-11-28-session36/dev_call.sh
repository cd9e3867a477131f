#!/usr/bin/env bash
# Session 36's device calls: `bash perf/results/2026-11-28-session36/dev_call.sh CALL` on the device machine (run's
# command, with carry [".device"]); the programs are built here and carried (perf/pack_binaries.sh), helpers in
# perf/device_call_lib.sh. Results come back as $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
s=$(date +%s)
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
FC1=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8
AE1=fcidump:unit_tests/data/h2o_631g.fcidump:10
BASE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell'
K4=build/cuda-kokkos4
B=$K4/perf/spmv_bench
source perf/device_call_lib.sh
# the shared-memory wavefronts and instructions of one launch
WF='--section LaunchStats --section Occupancy --section SpeedOfLight
 --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,sm__cycles_active.avg,sm__cycles_active.max,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum'
F="$BASE|ci-factored/(iter|alpha-beta/iter)"
case "${1:-}" in
  a)  # the batches walked over their live replacements (the new code) against every batch over its 16
      # (CISPMV_EXP_FULL_BATCHES=1, the code before), processes alternating, the baselines in each: the frozen core
      # three times each, the all-electron matrix twice each, the spaces of one irrep once each; the factored tests
      # both ways; ncu of the frozen core's alpha-beta kernel both ways; cispmv ci; every CUDA test
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*' factored 60
    CISPMV_EXP_FULL_BATCHES=1 TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*' factored-full 80
    for r in 1 2 3; do
      bench a-fc-live$r $FC "$F" "" $(( 80 + 12 * r ))
      CISPMV_EXP_FULL_BATCHES=1 bench a-fc-full$r $FC "$F" "" $(( 86 + 12 * r ))
    done
    for r in 1 2; do
      ITERS=10 bench a-ae-live$r $AE "ci-factored/(iter|alpha-beta/iter)" "" $(( 120 + 30 * r ))
      CISPMV_EXP_FULL_BATCHES=1 ITERS=10 bench a-ae-full$r $AE "ci-factored/(iter|alpha-beta/iter)" "" $(( 135 + 30 * r ))
    done
    bench a-fc1-live $FC1 "$F" "" 200
    CISPMV_EXP_FULL_BATCHES=1 bench a-fc1-full $FC1 "$F" "" 210
    ITERS=10 bench a-ae1-live $AE1 "ci-factored/(iter|alpha-beta/iter)" "" 225
    CISPMV_EXP_FULL_BATCHES=1 ITERS=10 bench a-ae1-full $AE1 "ci-factored/(iter|alpha-beta/iter)" "" 240
    ncu_of fc-live $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta/iter' "$WF"
    CISPMV_EXP_FULL_BATCHES=1 ncu_of fc-full $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta/iter' "$WF"
    grep -E "wavefronts|inst_executed|cycles_active|bank_conflicts|dfma" $RES/ncu-fc-*.txt | tee -a $RES/log.txt
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps"
    CLI=$K4/src/app/cispmv ci ae1 "unit_tests/data/h2o_631g.fcidump --level 10"
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 575 ;;
  b | c)  # (b: an H100; c: an H200) the walk's products by groups of 4 (the new code), by groups of 2
      # (CISPMV_EXP_TWOS=1) and over all 16 (CISPMV_EXP_FULL_BATCHES=1, the code before), processes in turn, the
      # baselines in each: the frozen core three times each, the all-electron matrix twice each; the frozen core's
      # A1 space with 1-3 parts; the factored tests with groups of 2; cispmv ci; every CUDA test
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    CISPMV_EXP_TWOS=1 TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*' factored-twos 60
    for r in 1 2 3; do
      bench $1-fc-live$r $FC "$F" "" $(( 70 + 15 * r ))
      CISPMV_EXP_TWOS=1 bench $1-fc-twos$r $FC "$F" "" $(( 75 + 15 * r ))
      CISPMV_EXP_FULL_BATCHES=1 bench $1-fc-full$r $FC "$F" "" $(( 80 + 15 * r ))
    done
    for r in 1 2; do
      ITERS=10 bench $1-ae-live$r $AE "ci-factored/(iter|alpha-beta/iter)" "" $(( 130 + 45 * r ))
      CISPMV_EXP_TWOS=1 ITERS=10 bench $1-ae-twos$r $AE "ci-factored/(iter|alpha-beta/iter)" "" $(( 145 + 45 * r ))
      CISPMV_EXP_FULL_BATCHES=1 ITERS=10 bench $1-ae-full$r $AE "ci-factored/(iter|alpha-beta/iter)" "" $(( 160 + 45 * r ))
    done
    for r in 1 2; do
      bench $1-fc1-parts$r $FC1 "$BASE|ci-factored/(iter|alpha-beta/iter|scatter/parts:[123]/batch:16/iter)" "" $(( 230 + 15 * r ))
    done
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps"
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 400 ;;
  d | e)  # the committed code (d: an H100, e: an H200): every CUDA test; the frozen core in six processes and the
      # all-electron matrix in one, the baselines and csell in each; the spaces of one irrep (automatic, now 2 parts on
      # the frozen core's A1, against 1 part named); cispmv ci on all four
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 120
    C='csell/automatic/lanes:1/sort:64/'
    for r in 1 2 3 4 5 6; do bench $1-fc$r $FC "$F|$C" "" $(( 130 + 8 * r )); done
    ITERS=10 bench $1-ae $AE "$F|$C" "" 260
    for r in 1 2; do
      bench $1-fc1-$r $FC1 "$F|$C|ci-factored/scatter/parts:1/batch:16/iter" "" $(( 270 + 10 * r ))
    done
    ITERS=10 bench $1-ae1 $AE1 "$F|$C" "" 330
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps"
    CLI=$K4/src/app/cispmv ci ae1 "unit_tests/data/h2o_631g.fcidump --level 10"
    CLI=$K4/src/app/cispmv ci fc1 "unit_tests/data/h2o_631g_fc.fcidump --level 8" ;;
  g)  # the committed code: where the frozen core's alpha-beta kernel now spends its time: ncu's sections (stalls,
      # wavefronts) and its source page (SASS, stalls and wavefronts by instruction)
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    ncu_of fc-sections $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta/iter' \
      "--section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SpeedOfLight --section InstructionStats --section ComputeWorkloadAnalysis --section SchedulerStats --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum"
    ncu_src fc $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta/iter' ;;
  h | i)  # the batch's integrals staged without a chain of loads (the new programs: spmv_bench and the CUDA tests)
      # against the committed 1fee014's spmv_bench (.device/spmv_bench-before.xz, d's program), processes in turn, the
      # baselines in each: FC four times each, AE twice each, FC1 and AE1 once each; every CUDA test; ncu's
      # source page of the new kernel (h: an H100, i: an H200)
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    xz -dc .device/spmv_bench-before.xz > /tmp/spmv_bench-before && chmod +x /tmp/spmv_bench-before
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 100
    NEW=$B
    for r in 1 2 3 4; do
      B=$NEW bench $1-fc-new$r $FC "$F" "" $(( 100 + 10 * r ))
      B=/tmp/spmv_bench-before bench $1-fc-before$r $FC "$F" "" $(( 105 + 10 * r ))
    done
    for r in 1 2; do
      B=$NEW ITERS=10 bench $1-ae-new$r $AE "$F" "" $(( 150 + 60 * r ))
      B=/tmp/spmv_bench-before ITERS=10 bench $1-ae-before$r $AE "$F" "" $(( 180 + 60 * r ))
    done
    B=$NEW bench $1-fc1-new $FC1 "$F" "" 290
    B=/tmp/spmv_bench-before bench $1-fc1-before $FC1 "$F" "" 300
    B=$NEW ITERS=10 bench $1-ae1-new $AE1 "$F" "" 320
    B=/tmp/spmv_bench-before ITERS=10 bench $1-ae1-before $AE1 "$F" "" 340
    B=$NEW
    ncu_src fc-new $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta/iter' ;;
  j)  # 88f12d0's code under Kokkos 3.4.01 (build/cuda, the default build, host code -O0): every CUDA test; the frozen
      # core twice and the all-electron matrix once with the baselines; cispmv ci
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    B=build/cuda/perf/spmv_bench
    tests '*' all 200
    for r in 1 2; do bench j-fc$r $FC "$F" "" $(( 220 + 20 * r )); done
    ITERS=10 bench j-ae $AE "$F" "" 330
    CLI=build/cuda/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=build/cuda/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps"
    CLI=build/cuda/src/app/cispmv ci ae1 "unit_tests/data/h2o_631g.fcidump --level 10" ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
