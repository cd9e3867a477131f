#!/usr/bin/env bash
# One device call of session 31 (run from the repository root: bash perf/results/2026-11-27-session31/dev_call.sh TAG):
# the factored CI Hamiltonian's same-spin terms as dense products on the tensor cores (FactoredOptions::same_spin_pass
# gemm, automatic on GPUs) against the teams' lists and the baselines. Results in $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
pack() { tar czf $OUT/res.tgz -C /tmp res; }
s=$(date +%s)
left() { echo $(( ${1:-585} - ($(date +%s) - s) )); }
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
BASE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/'
# the automatic product (same-spin gemm on GPUs), its two parts alone, and the same with the same-spin lists
FACT='ci-factored/(iter|same-spin|alpha-beta|ss:lists)'
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
resources() {  # registers, stack and shared memory of the dense products' kernel and the scatter kernel
  cuobjdump --dump-resource-usage $B 2>/dev/null | grep -A1 -E "GatheredGemmKernel|FactoredScatterKernel" |
    grep -oE "Function [^ ]{0,60}|REG:[0-9]+|STACK:[0-9]+|SHARED:[0-9]+|LOCAL:[0-9]+" | paste -sd' ' |
    sed 's/Function/\nFunction/g' | head -12 | tee -a $RES/log.txt
}
ci() {  # tag, cispmv ci arguments
  /usr/bin/time -v timeout $(left 585) build/cuda/src/app/cispmv ci $2 > $RES/ci-$1.txt 2> $RES/ci-$1.time
  echo "ci $1 ($2): rc $? $(grep -E 'Elapsed|Maximum resident' $RES/ci-$1.time | tr -s ' ' | tr '\n' ' ')" | tee -a $RES/log.txt
  grep -E "^automatic|^hamiltonian|^determinants|^davidson|^timings|^total|^ +[0-9]+ +-[0-9]|refus|error" $RES/ci-$1.txt | head -20 | tee -a $RES/log.txt; pack
}
case "${1:-}" in
  r1)  # Kokkos 3.4 (cold): the build alone (its limit the call's), then r1b on the warm machine
    TARGETS="spmv_bench cispmv_test_cuda" build 590 ;;
  r1b)  # warm machine after r1: the build's rest, the factored tests, both real matrices with the baselines
    s0=$(date +%s); cmake --build --preset cuda --parallel 16 --target spmv_bench cispmv_test_cuda 2>&1 | tail -3
    echo "build $(( $(date +%s) - s0 )) s" | tee -a $RES/log.txt; s=$(date +%s)
    resources
    tests '*Factored*:*WarpMma*' factored
    bench r1-fc $FC "$BASE|$FACT" "" 200
    ITERS=10 bench r1-ae $AE "kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/|$FACT" "" 590 ;;
  r1c)  # (run inline on the warm machine after r1b) ncu of the dense products' kernel, the all-electron same-spin terms
    ncu_of gemm-ae $AE GatheredGemmKernel 'ci-factored/same-spin/iter'
    ncu_src gemm-ae $AE GatheredGemmKernel 'ci-factored/same-spin/iter' ;;
  r2)  # Kokkos 3.4 (cold): the dense products' offsets read ahead (the build alone), then r2b on the warm machine
    TARGETS="spmv_bench cispmv_test_cuda" build 590 ;;
  r2b)  # warm machine after r2: the build's rest, tests, both real matrices, ncu; then the cispmv program and cispmv ci
    s0=$(date +%s); cmake --build --preset cuda --parallel 16 --target spmv_bench cispmv_test_cuda 2>&1 | tail -3
    echo "build $(( $(date +%s) - s0 )) s" | tee -a $RES/log.txt; s=$(date +%s)
    resources
    tests '*Factored*:*WarpMma*' factored
    bench r2-fc $FC "$BASE|$FACT" "" 150
    ITERS=10 bench r2-ae $AE "kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/|$FACT" "" 250
    ncu_of gemm-ae $AE GatheredGemmKernel 'ci-factored/same-spin/iter'
    s0=$(date +%s); timeout $(left 450) cmake --build --preset cuda --parallel 16 --target cispmv_cli 2>&1 | tail -2
    echo "cispmv built in $(( $(date +%s) - s0 )) s" | tee -a $RES/log.txt
    ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps" ;;
  r3)  # (not run this session: its device time was spent) the code submitted, e66e3dd: the build alone, then r2b's
       # steps (`bash perf/results/2026-11-27-session31/dev_call.sh r2b` on the warm machine)
    TARGETS="spmv_bench cispmv_test_cuda" build 590 ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
