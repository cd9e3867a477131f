#!/usr/bin/env bash
# Session 42's device call: `bash perf/results/2026-11-28-session42/dev_call.sh CALL` on the device machine (run's
# command, with carry [".device"]); the programs are built here and carried (perf/pack_binaries.sh), helpers in
# perf/device_call_lib.sh. Results come back as $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
s=$(date +%s)
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
source perf/device_call_lib.sh
B=build/cuda/perf/spmv_bench
# one vector (csell's automatic shape, the factored automatic product) and the block products: the factored
# Hamiltonian's (dense same-spin products, and the teams' lists) and csell's as the block Davidson builds it
ONE='csell/automatic/lanes:1/sort:64/|ci-factored/iter'
BLK='block/k:[0-9]+/(ci-factored|csell-inline-sorted/lanes/iter|kokkos-kernels|cusparse-spmm/row)'
case "${1:-}" in
  a)  # (H200, the cuda preset's programs of this session) the CUDA tests of the factored Hamiltonian; the frozen core
      # and the all-electron matrix at k = 1, 2, 4, 8, 16; cispmv ci with 1 and 5 roots
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    tests '*CiFactoredBlock*:*CiFactoredHamiltonianIsTheAssembled*' factored 150
    bench a-fc $FC "$ONE|$BLK" "--vectors 1,2,4,8,16" 300
    ITERS=10 bench a-ae $AE "$ONE|block/k:[0-9]+/(ci-factored|csell-inline-sorted/lanes/iter)" "--vectors 1,2,4,8,16" 520
    CLI=build/cuda/src/app/cispmv
    ci ae-r1 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    ci ae-r5 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 5"
    ci ae-r10 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 10"
    ci ae-r10f "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 10 --format factored" ;;
  b)  # (H200, a's programs) ncu of one launch of the factored block kernel at k = 8 on both matrices: registers,
      # occupancy, stalls, L1 hits and throughputs (as run it matched nothing: no --vectors 8; s42-b ran it inline, see
      # README.md)
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    ncu_of ae-k8 $AE FactoredBlockKernel 'block/k:8/ci-factored/iter' "--section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SpeedOfLight --metrics l1tex__t_sector_hit_rate.pct,lts__t_sectors.sum,dram__bytes_read.sum,l1tex__data_pipe_lsu_wavefronts.sum,smsp__inst_executed.sum"
    ncu_of fc-k8 $FC FactoredBlockKernel 'block/k:8/ci-factored/iter' "--section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SpeedOfLight --metrics l1tex__t_sector_hit_rate.pct,lts__t_sectors.sum,dram__bytes_read.sum,l1tex__data_pipe_lsu_wavefronts.sum,smsp__inst_executed.sum"
    grep -E "hit_rate|lts__t_sectors|dram__bytes|wavefronts|inst_executed|Stall|stall|Block Size|Registers|Shared Memory Config|Waves" $RES/ncu-*.txt | cut -c1-150 | tee -a $RES/log.txt ;;
  c|d)  # (H200; c: this session's second block kernel, 2 teams an SM, parts of a string's positions; d: the third, K / 2
        # lanes a position) the CUDA tests of the factored Hamiltonian; both matrices at k = 1, 2, 4, 8, 16 against
        # csell's block products; ncu of one launch at k = 8; cispmv ci with 1 and 5 roots
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    tests '*CiFactoredBlock*:*CiFactoredHamiltonianIsTheAssembled*' factored 150
    BF='block/k:[0-9]+/(ci-factored|csell-inline-sorted/lanes/iter)'
    bench $1-fc $FC "$ONE|$BF" "--vectors 1,2,4,8,16" 200
    ITERS=10 bench $1-ae $AE "$ONE|$BF" "--vectors 1,2,4,8,16" 330
    for m in "ae $AE" "fc $FC"; do
      set -- $m
      timeout $(left 450) ncu --kernel-name-base demangled --kernel-name regex:FactoredBlockKernel --launch-skip 2 \
        --launch-count 1 --section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight \
        --metrics l1tex__t_sector_hit_rate.pct,lts__t_sectors.sum,l1tex__data_pipe_lsu_wavefronts.sum,smsp__inst_executed.sum \
        $B --matrix $2 --iterations 3 --repetitions 1 --out-dir /tmp/nn --vectors 8 \
        --benchmark_filter='block/k:8/ci-factored/iter' > $RES/ncu-$1.txt 2>&1
      grep -E "hit_rate|lts__t_sectors|wavefronts|inst_executed|Block Size|Registers Per|Achieved Occ|Theoretical Occ|Duration|Warp Cycles Per Issued" $RES/ncu-$1.txt | cut -c1-120 | tee -a $RES/log.txt
    done
    pack
    CLI=build/cuda/src/app/cispmv
    ci ae-r1 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    ci ae-r5 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 5" ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
