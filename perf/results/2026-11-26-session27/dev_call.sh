#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 26, the factored
# CI Hamiltonian's scatter kernel (session 27) on a GPU against the teams kernel, the assembled matrix's formats and baselines
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${CISPMV_COMMIT:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
s=$(date +%s)
left() { echo $(( ${1:-585} - ($(date +%s) - s) )); }
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
FCA1=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
ONE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/|ci-factored'
bench() {  # tag, matrix, filter, extra args, seconds left at most
  timeout $(left ${5:-585}) $B --matrix $2 --iterations ${ITERS:-20} --repetitions 5 --out-dir $RES/$1 \
    --benchmark_filter="$3" ${4:-} > $RES/$1.txt 2>&1
  echo "$1 rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
  grep -E "ci-factored built|wrong|error" $RES/$1.txt | tee -a $RES/log.txt
  grep -E "median" $RES/$1.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2}' |
    sed 's/iterations:[0-9]*\/repeats:[0-9]*\/manual_time_median//' | tee -a $RES/log.txt; pack
}
tests() {  # the CUDA test executable of build $1, filter $2
  timeout $(left 565) build/$1/unit_tests/cispmv_test_cuda --gtest_filter="${2:-*}" > $RES/test-$1$3.txt 2>&1
  echo "cuda tests ($1 $2) rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; grep -E "FAILED|Failure|factored\]" $RES/test-$1$3.txt | head; tail -3 $RES/test-$1$3.txt | tee -a $RES/log.txt
}
ci() {  # tag, cispmv ci arguments
  /usr/bin/time -v timeout $(left 585) build/cuda/src/app/cispmv ci $2 > $RES/ci-$1.txt 2> $RES/ci-$1.time
  echo "ci $1 ($2): rc $? $(grep -E 'Elapsed|Maximum resident' $RES/ci-$1.time | tr -s ' ' | tr '\n' ' ')" | tee -a $RES/log.txt
  grep -E "^automatic|^hamiltonian|^nonzeros|^determinants|^davidson|^timings|^total|^ +[0-9]+ +-[0-9]|refus|error" $RES/ci-$1.txt | head -20 | tee -a $RES/log.txt; pack
}
case "$1" in
  g2)  # Kokkos 3.4 (cold): the scatter kernel with its table loads four ahead, 80 registers; tests, products, ncu, SASS
    B=build/cuda/perf/spmv_bench
    TARGETS="spmv_bench cispmv_test_cuda" timeout 520 bash perf/run_on_device.sh build > /dev/null ||
      { tail -5 $RES/log.txt; grep -B2 -A8 error $RES/build.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
    grep -iE "#2001" $RES/build.txt | sort | uniq -c | head -5 | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt $RES/build.txt
    tests cuda '*Factored*' -factored
    bench g2-fc $FC "$ONE" "" 565
    bench g2-fca1 $FCA1 "kokkos-kernels/native|csell/automatic/lanes:1/sort:64/|ci-factored" "" 565
    ITERS=10 bench g2-ae $AE "$ONE" "" 565
    timeout $(left 565) ncu --kernel-name-base demangled --kernel-name regex:FactoredScatter --launch-skip 2 --launch-count 1 \
      --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SourceCounters \
      --section SpeedOfLight --section InstructionStats $B --matrix $FC --iterations 3 --repetitions 1 --out-dir /tmp/nn \
      --benchmark_filter='ci-factored/iter' > $RES/ncu-fc.txt 2>&1; echo "ncu rc $?" | tee -a $RES/log.txt
    grep -E "Registers Per|Spilling Requests  |Achieved Occ|Theoretical Occ|Warp Cycles Per Issued|Executed Instructions  |Duration|No Eligible" $RES/ncu-fc.txt | tee -a $RES/log.txt
    NAME=$(timeout 60 cuobjdump -res-usage $B 2>/dev/null | grep -o "_ZN[^ ]*FactoredScatterKernel[^ ]*Li8E[^ ]*" | head -1 | tr -d ':,')
    timeout 60 cuobjdump -sass -fun "$NAME" $B > $RES/sass-scatter8.txt 2>&1; echo "sass rc $? $(wc -l < $RES/sass-scatter8.txt) lines" | tee -a $RES/log.txt; pack
    tests cuda '*' -all ;;
esac
pack
