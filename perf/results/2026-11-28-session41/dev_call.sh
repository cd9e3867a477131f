#!/usr/bin/env bash
# Session 41's device call: `bash perf/results/2026-11-28-session41/dev_call.sh CALL` on the device machine (run's
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
W=l1tex__data_pipe_lsu_wavefronts
M=$W.sum,$W.sum.peak_sustained,$W.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread
ncu_w() {  # tag, matrix, kernel regex, benchmark filter, vectors: one launch's data-pipe wavefronts and their peak rate
  timeout $(left 570) ncu --kernel-name-base demangled --kernel-name regex:"$3" --launch-skip 2 --launch-count 1 \
    --metrics $M $B --matrix $2 --iterations 3 --repetitions 1 --out-dir /tmp/nn --vectors $5 \
    --benchmark_filter="$4" > $RES/ncu-$1.txt 2>&1
  echo "ncu $1 rc $?" | tee -a $RES/log.txt
  grep -E "l1tex__|gpu__time|sm__cycles|sm__warps|smsp__inst|launch__|lts__|dram__" $RES/ncu-$1.txt | cut -c1-160 | tee -a $RES/log.txt; pack
}
case "${1:-}" in
  a)  # (H200, the Kokkos 4.6 programs of s40-b: 81c9658 + the persistent-teams experiment, which is opt-in: the
      # launches measured here are the library's) the data-pipe wavefronts of one launch and the stage's peak rate:
      # the k = 8 pair kernel and the single-vector csell on the all-electron matrix and the frozen core
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    ncu_w ae-k8 $AE PairTag 'block/k:8/csell-inline-sorted/lanes/iter' 8
    ncu_w ae-k1 $AE 'SpmvFunctor.*CompressedSell' 'csell/automatic/lanes:1/sort:64/' 8
    ncu_w fc-k8 $FC PairTag 'block/k:8/csell-inline-sorted/lanes/iter' 8
    ncu_w fc-k1 $FC 'SpmvFunctor.*CompressedSell' 'csell/automatic/lanes:1/sort:64/' 8 ;;
  b)  # (H200, Kokkos 4.6 build of the spin-flip half-matrix experiment) k = 8 on both matrices in spin-flip order (the
      # half matrix `csell-half` and the full `csell-inline-sorted`) and in the space's order (the library's csell-inline-sorted
      # and the single-vector csell: issue 14's ratio); ncu of the half kernel's wavefronts on both matrices
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    SF='block/k:8/csell-(inline-sorted/lanes/iter|half)'
    SP='csell/automatic/lanes:1/sort:64/|block/k:8/csell-inline-sorted/lanes/iter'
    bench b-fc-flip $FC:spin-flip "$SF" "--vectors 8" 120
    bench b-fc $FC "$SP" "--vectors 8" 160
    ITERS=10 bench b-ae-flip $AE:spin-flip "$SF" "--vectors 8" 330
    ITERS=10 bench b-ae $AE "$SP" "--vectors 8" 420
    ncu_w ae-half $AE:spin-flip half_pairs 'block/k:8/csell-half' 8
    ncu_w fc-half $FC:spin-flip half_pairs 'block/k:8/csell-half' 8 ;;
  c)  # (H200, b's programs) ncu of b's half kernel (b's ncu named the kernel by its label, which ncu does not see) and of
      # the full pair kernel in spin-flip order on the all-electron matrix: wavefronts, their rate, L1 hits, L2 sectors,
      # DRAM, warps active
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    M=$M,l1tex__t_sector_hit_rate.pct,lts__t_sectors.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active
    ncu_w ae-half $AE:spin-flip HalfPairKernel 'block/k:8/csell-half' 8
    ncu_w ae-flip-k8 $AE:spin-flip PairTag 'block/k:8/csell-inline-sorted/lanes/iter' 8
    ncu_w fc-half $FC:spin-flip HalfPairKernel 'block/k:8/csell-half' 8
    ncu_w fc-flip-k8 $FC:spin-flip PairTag 'block/k:8/csell-inline-sorted/lanes/iter' 8 ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
