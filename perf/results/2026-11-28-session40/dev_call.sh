#!/usr/bin/env bash
# Session 40's device calls: `bash perf/results/2026-11-28-session40/dev_call.sh CALL` on the device machine (run's
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
M=l1tex__t_sector_hit_rate.pct,lts__t_sectors.sum,gpu__time_duration.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__block_size
ncu_k8() {  # tag, matrix, benchmark filter: the k = 8 pair kernel's L1 / L2 / DRAM figures, one launch
  timeout $(left 570) ncu --kernel-name-base demangled --kernel-name regex:PairTag --launch-skip 2 --launch-count 1 \
    --metrics $M $B --matrix $2 --iterations 3 --repetitions 1 --out-dir /tmp/nn --vectors 8 \
    --benchmark_filter="$3" > $RES/ncu-$1.txt 2>&1
  echo "ncu $1 rc $?" | tee -a $RES/log.txt
  grep -E "l1tex__|gpu__time|lts__|dram__|sm__warps|launch__" $RES/ncu-$1.txt | cut -c1-160 | tee -a $RES/log.txt; pack
}
case "${1:-}" in
  a)  # (H200, Kokkos 4.6 build of the team-size experiment) every CUDA test; csell-inline-sorted and -w4096 at k = 4, 8,
      # 16 with the pair kernel in teams of 128 (the library's), 224, 448 and 896 threads, two processes of the frozen
      # core and one of the all-electron matrix (k = 8), the single-vector csell in each; ncu L1 / L2 / DRAM of k = 8 at
      # teams of 128 and 896 on both matrices
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 90
    R='csell/automatic/lanes:1/sort:64/|block/k:[0-9]+/csell-inline-(sorted|w4096)/lanes/'
    for i in 1 2; do bench a-fc$i $FC "$R" "--vectors 4,8,16" $(( 90 + 60 * i )); done
    ITERS=10 bench a-ae $AE "csell/automatic/lanes:1/sort:64/|block/k:8/csell-inline-(sorted|w4096)/lanes/" "--vectors 8" 330
    ncu_k8 fc-t128 $FC 'block/k:8/csell-inline-sorted/lanes/iter'
    ncu_k8 fc-t896 $FC 'block/k:8/csell-inline-sorted/lanes/team:896/'
    ncu_k8 ae-t128 $AE 'block/k:8/csell-inline-sorted/lanes/iter'
    ncu_k8 ae-t896 $AE 'block/k:8/csell-inline-sorted/lanes/team:896/' ;;
  b)  # (H200, Kokkos 4.6 build of the persistent-teams experiment) every CUDA test; csell-inline-sorted at k = 4, 8, 16:
      # the library's teams of 128, persistent teams of 128, 448 and 896, teams of 896 launched as usual; two processes
      # of the frozen core and one of the all-electron matrix (k = 8), the single-vector csell in each; ncu of k = 8 at
      # persistent 896 and 128 on both matrices
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 90
    R='csell/automatic/lanes:1/sort:64/|block/k:[0-9]+/csell-inline-sorted/lanes/'
    for i in 1 2; do bench b-fc$i $FC "$R" "--vectors 4,8,16" $(( 90 + 50 * i )); done
    ITERS=10 bench b-ae $AE "csell/automatic/lanes:1/sort:64/|block/k:8/csell-inline-sorted/lanes/" "--vectors 8" 300
    ncu_k8 fc-p896 $FC 'block/k:8/csell-inline-sorted/lanes/persistent:896/'
    ncu_k8 fc-p128 $FC 'block/k:8/csell-inline-sorted/lanes/persistent:128/'
    ncu_k8 ae-p896 $AE 'block/k:8/csell-inline-sorted/lanes/persistent:896/' ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
