#!/usr/bin/env bash
# One device call of session 30 (run from the repository root: bash perf/results/2026-11-27-session30/dev_call.sh TAG):
# the factored CI Hamiltonian's mma kernel with its table by tiles of 8 positions and its strings' row bases in
# team scratch, against the scatter kernel (automatic) and the baselines; ncu of both. Results in $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
pack() { tar czf $OUT/res.tgz -C /tmp res; }
s=$(date +%s)
left() { echo $(( ${1:-585} - ($(date +%s) - s) )); }
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
BASE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/'
FACT='ci-factored/(iter|same-spin|alpha-beta)|ci-factored/mma/(iter|alpha-beta|parts:|team:64)'
FACT2='ci-factored/(iter|same-spin|alpha-beta)|ci-factored/scatter/(iter|parts:1/batch:16|parts:2/batch:16)'
B=build/cuda/perf/spmv_bench
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
tests() {  # filter, tag
  timeout $(left 565) build/cuda/unit_tests/cispmv_test_cuda --gtest_filter="$1" > $RES/test-$2.txt 2>&1
  echo "cuda tests ($1) rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
  grep -E "FAILED|Failure" $RES/test-$2.txt | head; tail -3 $RES/test-$2.txt | tee -a $RES/log.txt; pack
}
ci() {  # tag, cispmv ci arguments
  /usr/bin/time -v timeout $(left 585) build/cuda/src/app/cispmv ci $2 > $RES/ci-$1.txt 2> $RES/ci-$1.time
  echo "ci $1 ($2): rc $? $(grep -E 'Elapsed|Maximum resident' $RES/ci-$1.time | tr -s ' ' | tr '\n' ' ')" | tee -a $RES/log.txt
  grep -E "^automatic|^hamiltonian|^determinants|^davidson|^timings|^total|^ +[0-9]+ +-[0-9]|refus|error" $RES/ci-$1.txt | head -20 | tee -a $RES/log.txt; pack
}
build() {
  TARGETS="${TARGETS:-spmv_bench}" timeout ${1:-400} bash perf/run_on_device.sh build > /dev/null ||
    { tail -5 $RES/log.txt; grep -B2 -A12 -E "error|Error" $RES/build.txt | head -60; pack; exit 1; }
  echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
  grep -iE "#2001" $RES/build.txt | sort | uniq -c | head -5 | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
}
case "${1:-}" in
  q1)  # Kokkos 3.4 (cold): the factored tests on the GPU; the mma kernel (table by tiles, row bases in scratch)
       # against the scatter kernel and the baselines on both real matrices; ncu of both kernels' alpha-beta sums
    TARGETS="spmv_bench cispmv_test_cuda" build 520
    tests '*Factored*:*WarpMma*' factored
    bench q1-fc $FC "$BASE|$FACT" "" 585
    ITERS=10 bench q1-ae $AE "csell/automatic/lanes:1/sort:64/|cusparse-sell|cusparse-csr/default|$FACT" "" 585
    ncu_of ae-mma-ab $AE FactoredMmaKernel 'ci-factored/mma/alpha-beta' ;;
  q1b)  # (run inline on the warm machine after q1, whose build its 520 s cut: the same steps as q1's after the build)
    s0=$(date +%s); cmake --build --preset cuda --parallel 16 --target spmv_bench cispmv_test_cuda 2>&1 | tail -4
    echo "build $(( $(date +%s) - s0 )) s"; s=$(date +%s)
    tests '*Factored*:*WarpMma*' factored
    bench q1-fc $FC "$BASE|$FACT" "" 500
    ITERS=10 bench q1-ae $AE "csell/automatic/lanes:1/sort:64/|cusparse-sell|cusparse-csr/default|$FACT" "" 540
    ncu_of ae-mma-ab $AE FactoredMmaKernel 'ci-factored/mma/alpha-beta' ;;
  q1c)  # (run inline on the warm machine after q1b) the scatter kernel's alpha-beta sum: memory tables, source page
    timeout 200 ncu --kernel-name-base demangled --kernel-name regex:FactoredScatterKernel --launch-skip 2 --launch-count 1 \
      --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section MemoryWorkloadAnalysis_Chart \
      --section SourceCounters --section WarpStateStats --section Occupancy --section LaunchStats $B --matrix $AE \
      --iterations 3 --repetitions 1 --out-dir /tmp/nn --benchmark_filter='ci-factored/alpha-beta' > $RES/ncu-ab-mem.txt 2>&1
    ncu_src ab $AE FactoredScatterKernel 'ci-factored/alpha-beta' ;;
  q2c)  # (run inline on the warm machine after q2, whose build its 545 s cut: cmake --build --preset cuda --parallel 16
        # --target spmv_bench cispmv_test_cuda, then this)
    tests '*Factored*:*WarpMma*' factored
    bench q2-fc $FC "$BASE|$FACT2" "" 585
    ITERS=10 bench q2-ae $AE "csell/automatic/lanes:1/sort:64/|cusparse-sell|cusparse-csr/default|$FACT2" "" 590
    ncu_src ab $AE FactoredScatterKernel 'ci-factored/alpha-beta' ;;
  q3)  # (cold) the same-spin pass a call of its own on CUDA (__noinline__): the build (its limit the call's), then q3b
    TARGETS="spmv_bench cispmv_test_cuda" build 590 ;;
  q3b)  # warm machine after q3: the build's rest, tests, benches
    s0=$(date +%s); cmake --build --preset cuda --parallel 16 --target spmv_bench cispmv_test_cuda 2>&1 | tail -3
    echo "build $(( $(date +%s) - s0 )) s" | tee -a $RES/log.txt; s=$(date +%s)
    tests '*Factored*:*WarpMma*' factored
    bench q3-fc $FC "csell/automatic/lanes:1/sort:64/|$FACT2" "" 120
    ITERS=10 bench q3-ae $AE "csell/automatic/lanes:1/sort:64/|$FACT2" "" 130 ;;
  q3c)  # (run inline on the warm machine after q3b) the baselines beside the factored product, ncu of the same-spin part
    bench q3c-fc $FC "$BASE|ci-factored/iter" "" 200
    ITERS=10 bench q3c-ae $AE "kokkos-kernels/native|cusparse-csr/default|cusparse-sell|ci-factored/iter" "" 200
    ncu_src same $AE FactoredScatterKernel 'ci-factored/same-spin' ;;
  q4)  # (cold, an H100) the code of q3 (ae38181) beside the baselines in one run: spmv_bench alone, both real matrices
    TARGETS="spmv_bench" build 560
    bench q4-fc $FC "$BASE|ci-factored/(iter|scatter/parts:1/batch:16)" "" 575
    ITERS=10 bench q4-ae $AE "kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/|ci-factored/(iter|scatter/parts:2/batch:16)" "" 597 ;;
  q2)  # Kokkos 3.4 (cold): the scatter kernel's table walk with its integrals and adds in shared memory (in_shared:
       # LDS, not generic loads), its four adds' loads first (scratch_add_shared), two chains of fused multiply-adds;
       # the factored tests on the GPU, both real matrices
    TARGETS="spmv_bench cispmv_test_cuda" build 545
    tests '*Factored*:*WarpMma*' factored
    bench q2-fc $FC "$BASE|$FACT2" "" 585
    ITERS=10 bench q2-ae $AE "csell/automatic/lanes:1/sort:64/|cusparse-sell|cusparse-csr/default|$FACT2" "" 590 ;;
  q2b)  # warm machine after q2: the SASS-level stalls of the new walk (alpha-beta alone, then the whole product)
    ncu_src ab $AE FactoredScatterKernel 'ci-factored/alpha-beta'
    ncu_of ae $AE FactoredScatterKernel 'ci-factored/iter'
    ITERS=10 bench q2b-ae $AE "kokkos-kernels/native|$FACT2" "" 590 ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
