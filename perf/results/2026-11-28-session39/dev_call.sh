#!/usr/bin/env bash
# Session 39's device calls: `bash perf/results/2026-11-28-session39/dev_call.sh CALL` on the device machine (run's
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
  a)  # (H200, Kokkos 4.6 build of the spin-flip order) every CUDA test; issue 14's block products (csell-inline-sorted,
      # the eigensolver's) at k = 1, 4, 8, 16 and the single-vector csell on the frozen core in the space's order and in
      # spin-flip order, alternating, two processes each; the k = 8 baselines in each
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 150
    A="csell/automatic/lanes:1/sort:64/|block/k:[0-9]+/csell-inline-sorted/lanes/|block/k:8/(kokkos-kernels|cusparse-spmm)"
    for i in 1 2; do
      bench a-fc$i $FC "$A" "--vectors 1,4,8,16" $(( 150 + 200 * i - 100 ))
      bench a-flip$i $FC:spin-flip "$A" "--vectors 1,4,8,16" $(( 150 + 200 * i ))
    done ;;
  b)  # (H200, a's programs) the all-electron matrix in both orders, k = 8 and the single-vector csell, one process
      # each; ncu of the k = 8 kernel on the frozen core in both orders (L1 wavefronts, sectors, L2, time)
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    R='csell/automatic/lanes:1/sort:64/|block/k:8/csell-inline-sorted/lanes/|block/k:8/kokkos-kernels'
    ITERS=10 bench b-ae $AE "$R" "--vectors 8" 200
    ITERS=10 bench b-aeflip $AE:spin-flip "$R" "--vectors 8" 380
    M=l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum,gpu__time_duration.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,dram__bytes_read.sum
    for m in fc:$FC flip:$FC:spin-flip; do  # the k = 8 pair kernel, then the single-vector kernel
      for v in 8:PairTag:block/k:8/csell-inline-sorted/lanes/ 1:SpmvFunctor:csell/automatic/lanes:1/sort:64/; do
        t=${m%%:*}-k${v%%:*}; v=${v#*:}
        timeout $(left 570) ncu --kernel-name-base demangled --kernel-name regex:${v%%:*} --launch-skip 2 --launch-count 1 \
          --section WarpStateStats --metrics $M $B --matrix ${m#*:} --iterations 3 --repetitions 1 \
          --out-dir /tmp/nn --vectors 8 --benchmark_filter="${v#*:}" > $RES/ncu-$t.txt 2>&1
        echo "ncu $t rc $?" | tee -a $RES/log.txt
        grep -E "==PROF== Profiling|l1tex__|smsp__inst|gpu__time|lts__|dram__|Stall Long|Warp Cycles" $RES/ncu-$t.txt |
          cut -c1-160 | tee -a $RES/log.txt; pack
      done
    done ;;
  c)  # (H200, a's programs) the k = 8 pair kernel on the frozen core in the space's order: its achieved occupancy, the
      # schedulers' issue and its stalls by reason (what bounds it at 15.75 cycles a warp per issued instruction)
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    timeout $(left 570) ncu --kernel-name-base demangled --kernel-name regex:PairTag --launch-skip 2 --launch-count 1 \
      --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats \
      --metrics smsp__pcsamp_warps_issue_stalled_long_scoreboard,smsp__pcsamp_warps_issue_stalled_lg_throttle,smsp__pcsamp_warps_issue_stalled_mio_throttle,smsp__pcsamp_warps_issue_stalled_wait,smsp__pcsamp_warps_issue_stalled_not_selected,smsp__pcsamp_warps_issue_stalled_selected,smsp__pcsamp_warps_issue_stalled_math_pipe_throttle,smsp__pcsamp_warps_issue_stalled_short_scoreboard,smsp__pcsamp_warps_issue_stalled_no_instructions,smsp__pcsamp_warps_issue_stalled_barrier,smsp__pcsamp_warps_issue_stalled_drain,smsp__pcsamp_warps_issue_stalled_dispatch_stall,smsp__pcsamp_warps_issue_stalled_tex_throttle \
      $B --matrix $FC --iterations 3 --repetitions 1 --out-dir /tmp/nn --vectors 8 \
      --benchmark_filter="block/k:8/csell-inline-sorted/lanes/" > $RES/ncu-fc-k8-occupancy.txt 2>&1
    echo "ncu rc $?" | tee -a $RES/log.txt
    grep -vE "^==PROF==|^ *$|^---" $RES/ncu-fc-k8-occupancy.txt | grep -E "Occupancy|Warps|Block|Registers|Issue|Eligible|Active|Waves|smsp__|Grid|Threads|Shared" |
      cut -c1-140 | tee -a $RES/log.txt ;;
  d)  # (H200, Kokkos 4.6 build of the rows_per_team experiment) CUDA tests; csell-inline-sorted at k = 4, 8, 16 with each
      # team walking 64 .. 1,024 rows (rows:N) against its lanes' rows once, two processes of the frozen core and one of
      # the all-electron matrix (k = 8), the single-vector csell in each; ncu L1 / L2 of k = 8 once and at rows:256
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 60
    R='csell/automatic/lanes:1/sort:64/|block/k:[0-9]+/csell-inline-sorted/lanes/'
    for i in 1 2; do bench d-fc$i $FC "$R" "--vectors 4,8,16" $(( 60 + 70 * i )); done
    ITERS=10 bench d-ae $AE "csell/automatic/lanes:1/sort:64/|block/k:8/csell-inline-sorted/lanes/" "--vectors 8" 330
    M=l1tex__t_sector_hit_rate.pct,lts__t_sectors.sum,gpu__time_duration.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
    for v in once:'block/k:8/csell-inline-sorted/lanes/iter' rows256:'block/k:8/csell-inline-sorted/lanes/rows:256/'; do
      timeout $(left 570) ncu --kernel-name-base demangled --kernel-name regex:PairTag --launch-skip 2 --launch-count 1 \
        --metrics $M $B --matrix $FC --iterations 3 --repetitions 1 --out-dir /tmp/nn --vectors 8 \
        --benchmark_filter="${v#*:}" > $RES/ncu-fc-${v%%:*}.txt 2>&1
      echo "ncu ${v%%:*} rc $?" | tee -a $RES/log.txt
      grep -E "l1tex__|gpu__time|lts__|sm__warps" $RES/ncu-fc-${v%%:*}.txt | cut -c1-160 | tee -a $RES/log.txt; pack
    done ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
