#!/usr/bin/env bash
# Session 38's device calls: `bash perf/results/2026-11-28-session38/dev_call.sh CALL` on the device machine (run's
# command, with carry [".device"]); the programs are built here and carried (perf/pack_binaries.sh), helpers in
# perf/device_call_lib.sh. Results come back as $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
s=$(date +%s)
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
K4=build/cuda-kokkos4
source perf/device_call_lib.sh
case "${1:-}" in
  a)  # (H200, Kokkos 4.6 build of b0f05df) every CUDA test; issue 14's block products in csell's sort windows (32, 256,
      # the automatic 1,024, 4,096) at k = 1, 4, 8, 16 on the frozen core, two processes, the single-vector csell and the
      # k = 8 baselines in each; the all-electron matrix at k = 8 in the windows, one process
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 150
    W='csell-inline-(sorted|w32|w256|w4096)/lanes/'
    A="csell/automatic/lanes:1/sort:64/|block/k:[0-9]+/$W|block/k:8/(kokkos-kernels|cusparse-spmm)"
    for i in 1 2; do bench a-fc$i $FC "$A" "--vectors 1,4,8,16" $(( 150 + 110 * i )); done
    ITERS=10 bench a-ae $AE "csell/automatic/lanes:1/sort:64/|block/k:8/csell-inline-(sorted|w256|w4096)/lanes/" \
      "--vectors 8" 560 ;;
  b)  # (H200, a's programs) issue 10's figures on this card, each matrix in one process with every baseline: the frozen
      # core twice and the all-electron matrix (the factored product, its parts, csell), paper32k-1 and scaled-1048576
      # (csell's shapes, the paper's hybrid kernel); cispmv ci on the all-electron matrix, one root and five
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    BASE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell'
    F="$BASE|ci-factored/(iter|alpha-beta/iter|same-spin/iter)|csell/automatic/lanes:1/sort:64/"
    for i in 1 2; do bench b-fc$i $FC "$F" "" $(( 40 + 30 * i )); done
    ITERS=10 bench b-ae $AE "$F" "" 200
    bench b-p32 paper32k-1 "$BASE|csell/automatic/|hybrid/vector/iter|hybrid16/vector/iter" "" 260
    ITERS=10 bench b-sc scaled-1048576 "$BASE|csell/automatic/lanes:1/sort:1024/" "" 470
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci ae5 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 5" ;;
  c)  # (H200; an experiment: the working tree's spmv_bench, packed as .device/exp-runs-bin.tar.xz) the block products'
      # deltas in runs of 4 positions (csell-inline-runs) against the same matrix without them (csell-inline-sorted),
      # k = 8 and 16, two processes of the frozen core and one of the all-electron matrix, the single-vector csell in
      # each; ncu's L1 of the two k = 8 kernels on the frozen core
    PREBUILT=.device/exp-runs-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    R='csell/automatic/lanes:1/sort:64/|block/k:[0-9]+/csell-inline-(sorted|runs)/lanes/'
    for i in 1 2; do bench c-fc$i $FC "$R" "--vectors 8,16" $(( 60 + 40 * i )); done
    ITERS=10 bench c-ae $AE "$R" "--vectors 8" 260
    MEM='--section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis'
    for v in runs:2 sorted:0; do  # (ncu_of's program takes no --vectors)
      timeout $(left 570) ncu --kernel-name-base demangled --kernel-name regex:"PairTag<${v#*:}>" --launch-skip 2 \
        --launch-count 1 $MEM $B --matrix $FC --iterations 3 --repetitions 1 --out-dir /tmp/nn --vectors 8 \
        --benchmark_filter="block/k:8/csell-inline-${v%:*}/lanes/" > $RES/ncu-fc-${v%:*}.txt 2>&1
      echo "ncu fc-${v%:*} rc $?" | tee -a $RES/log.txt
      grep -E "Duration|L1/TEX Cache Throughput|L2 Cache Throughput|DRAM Through|L1/TEX Hit|Mem Busy|Max Bandwidth" \
        $RES/ncu-fc-${v%:*}.txt | tee -a $RES/log.txt; pack
    done ;;
  d)  # (H200; c's programs) c's ncu again with a kernel filter that matches (c's `PairTag<2>` matched no demangled
      # name): the two k = 8 kernels on the frozen core, their L1 wavefronts, requests, sectors, instructions, stalls
    PREBUILT=.device/exp-runs-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    M=l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum,launch__registers_per_thread,gpu__time_duration.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed
    for v in runs sorted; do
      timeout $(left 570) ncu --kernel-name-base demangled --kernel-name regex:PairTag --launch-skip 2 --launch-count 1 \
        --section WarpStateStats --section SpeedOfLight --metrics $M $B --matrix $FC --iterations 3 --repetitions 1 \
        --out-dir /tmp/nn --vectors 8 --benchmark_filter="block/k:8/csell-inline-$v/lanes/" > $RES/ncu-fc-$v.txt 2>&1
      echo "ncu fc-$v rc $?" | tee -a $RES/log.txt
      grep -E "==PROF== Profiling|l1tex__|smsp__inst|launch__reg|gpu__time|lts__|Stall|Warp Cycles" $RES/ncu-fc-$v.txt |
        cut -c1-160 | tee -a $RES/log.txt; pack
    done ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
