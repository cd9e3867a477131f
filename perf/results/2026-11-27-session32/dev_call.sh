#!/usr/bin/env bash
# One device call of session 32 (run from the repository root: bash perf/results/2026-11-27-session32/dev_call.sh TAG),
# with the programs built here and carried (perf/pack_binaries.sh -> .device/cuda-bin.tar.xz; `run` with carry
# [".device"]): no build on the device. Results in $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
s=$(date +%s)
left() { echo $(( ${1:-585} - ($(date +%s) - s) )); }
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
BASE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/'
# the automatic product (same-spin gemm on GPUs), its two parts alone, and the same with the same-spin lists
FACT='ci-factored/(iter|same-spin|alpha-beta|ss:lists)'
B=build/cuda/perf/spmv_bench
pack() { tar czf $OUT/res.tgz -C /tmp res; }
bench() {  # tag, matrix, filter, extra args, seconds left at most
  timeout $(left ${5:-585}) $B --matrix $2 --iterations ${ITERS:-20} --repetitions 5 --out-dir $RES/$1 \
    --benchmark_filter="$3" ${4:-} > $RES/$1.txt 2>&1
  echo "$1 rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
  grep -E "ci-factored built|wrong|error|Error" $RES/$1.txt | tee -a $RES/log.txt
  grep -E "median" $RES/$1.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2}' |
    sed 's/iterations:[0-9]*\/repeats:[0-9]*\/manual_time_median//' | tee -a $RES/log.txt; pack
}
ncu_of() {  # tag, matrix, kernel regex, benchmark filter, extra ncu arguments
  timeout $(left 570) ncu --kernel-name-base demangled --kernel-name regex:"$3" --launch-skip 2 --launch-count 1 \
    ${5:---section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
    --section SpeedOfLight --section InstructionStats --section ComputeWorkloadAnalysis --section SourceCounters} \
    $B --matrix $2 --iterations 3 --repetitions 1 --out-dir /tmp/nn --benchmark_filter="$4" > $RES/ncu-$1.txt 2>&1
  echo "ncu $1 rc $?" | tee -a $RES/log.txt
  grep -E "Registers Per|Achieved Occ|Theoretical Occ|Warp Cycles Per Issued|Executed Instructions  |Duration|L2 Cache Throughput|DRAM Through|L1/TEX Cache Throughput|Compute \(SM\)|Issue Slots Busy" $RES/ncu-$1.txt | tee -a $RES/log.txt; pack
}
ncu_src() {  # tag, matrix, kernel regex, benchmark filter: the source page (SASS) with its stalls and wavefronts, csv
  timeout $(left 570) ncu --kernel-name-base demangled --kernel-name regex:"$3" --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
    $B --matrix $2 --iterations 3 --repetitions 1 --out-dir /tmp/nn --benchmark_filter="$4" > /tmp/ncu-src.csv 2>&1
  echo "ncu source $1 rc $?" | tee -a $RES/log.txt; gzip -c /tmp/ncu-src.csv > $RES/ncu-src-$1.csv.gz; pack
}
tests() {  # filter, tag, seconds at most
  local cap=$(left 565); [ "${3:-$cap}" -lt "$cap" ] && cap=$3
  timeout $cap build/cuda/unit_tests/cispmv_test_cuda --gtest_filter="$1" > $RES/test-$2.txt 2>&1
  echo "cuda tests ($1) rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
  grep -E "FAILED|Failure" $RES/test-$2.txt | head; tail -3 $RES/test-$2.txt | tee -a $RES/log.txt; pack
}
ci() {  # tag, cispmv ci arguments
  /usr/bin/time -v timeout $(left 585) ${CLI:-build/cuda/src/app/cispmv} ci $2 > $RES/ci-$1.txt 2> $RES/ci-$1.time
  echo "ci $1 ($2): rc $? $(grep -E 'Elapsed|Maximum resident' $RES/ci-$1.time | tr -s ' ' | tr '\n' ' ')" | tee -a $RES/log.txt
  grep -E "^automatic|^hamiltonian|^determinants|^davidson|^timings|^total|^ +[0-9]+ +-[0-9]|refus|error" $RES/ci-$1.txt | head -20 | tee -a $RES/log.txt; pack
}
resources() {  # registers, stack and shared memory of the dense products' kernel and the scatter kernel
  cuobjdump --dump-resource-usage $B 2>/dev/null | grep -A1 -E "GatheredGemmKernel|FactoredScatterKernel" |
    grep -oE "Function [^ ]{0,60}|REG:[0-9]+|STACK:[0-9]+|SHARED:[0-9]+|LOCAL:[0-9]+" | paste -sd' ' |
    sed 's/Function/\nFunction/g' | head -12 | tee -a $RES/log.txt
}
prebuilt() {
  PREBUILT="${PREBUILT:-.device/cuda-bin.tar.xz}" bash perf/run_on_device.sh prebuilt > $RES/prebuilt.txt 2>&1 ||
    { tail -20 $RES/prebuilt.txt; pack; exit 1; }
  echo "unpacked at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
}
case "${1:-}" in
  a)  # session 31's code as submitted (b21f85b, never run on a GPU) beside the dense products' copies made
      # asynchronous (the working tree at 15:11); both built here (build/cuda at -O0 host code, device code optimized)
    PREBUILT=.device/cuda-s31.tar.xz prebuilt; mv build/cuda build/cuda-s31
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    resources
    B=build/cuda-s31/perf/spmv_bench resources
    tests '*Factored*:*WarpMma*:*Gathered*' factored 120
    B=build/cuda-s31/perf/spmv_bench bench s31-fc $FC "$FACT" "" 150
    bench a-fc $FC "$BASE|$FACT" "" 200
    B=build/cuda-s31/perf/spmv_bench ITERS=10 bench s31-ae $AE "$FACT" "" 260
    ITERS=10 bench a-ae $AE "$BASE|$FACT" "" 330
    ncu_of gemm-ae $AE GatheredGemmKernel 'ci-factored/same-spin/iter'
    ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps"
    tests '*' all 200 ;;
  b)  # the tile's sums through scratch, added into y by consecutive columns (ptxas: spills 544 -> 52 bytes)
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    resources
    tests '*Factored*:*WarpMma*:*Gathered*' factored 120
    bench b-fc $FC "$FACT" "" 100
    ITERS=10 bench b-ae $AE "$FACT" "" 200
    ncu_of gemm-ae $AE GatheredGemmKernel 'ci-factored/same-spin/iter'
    ncu_src gemm-ae $AE GatheredGemmKernel 'ci-factored/same-spin/iter' ;;
  c)  # the copies' addresses formed once a chunk (teams of 128), AlongK at compile time, full warp tiles' products
      # without tests between them
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    resources
    tests '*Factored*:*WarpMma*:*Gathered*' factored 120
    bench c-fc $FC "$FACT" "" 100
    ITERS=10 bench c-ae $AE "$FACT" "" 200
    ncu_of gemm-ae $AE GatheredGemmKernel 'ci-factored/same-spin/iter'
    ncu_src gemm-ae $AE GatheredGemmKernel 'ci-factored/same-spin/iter' ;;
  d)  # every figure of issue 10's real-matrix goals from one run: the Kokkos 4.6 build (Kokkos Kernels 4.6.02 native
      # and merge path, cuSPARSE, csell, the factored product and its parts), both real matrices; then cispmv ci
      # (Kokkos 4.6 build, host code -O3) on both
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    K4=build/cuda-kokkos4
    B=$K4/perf/spmv_bench resources
    B=$K4/perf/spmv_bench bench d-fc $FC "kokkos-kernels|$BASE|$FACT" "" 150
    B=$K4/perf/spmv_bench ITERS=10 bench d-ae $AE "kokkos-kernels|$BASE|$FACT" "" 330
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps"
    CLI=$K4/src/app/cispmv ci ae5 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 5" ;;
  e)  # d on an H100 (nvidia-h100-x1), and paper32k-1 with the same baselines
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    K4=build/cuda-kokkos4
    B=$K4/perf/spmv_bench bench e-fc $FC "kokkos-kernels|$BASE|$FACT" "" 150
    B=$K4/perf/spmv_bench ITERS=10 bench e-ae $AE "kokkos-kernels|$BASE|$FACT" "" 330
    B=$K4/perf/spmv_bench bench e-p32 paper32k-1 "kokkos-kernels|cusparse-csr/default|cusparse-sell|csell/automatic|hybrid" "" 420
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci ae5 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 5" ;;
  f)  # every shape of the factored product (Kokkos 4.6 build, H200): is `automatic` within 5 % of the best shape?
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    K4=build/cuda-kokkos4
    B=$K4/perf/spmv_bench bench f-fc $FC "ci-factored" "" 200
    B=$K4/perf/spmv_bench ITERS=10 bench f-ae $AE "ci-factored" "" 500 ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
