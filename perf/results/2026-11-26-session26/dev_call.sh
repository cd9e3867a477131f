#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 26, the factored
# CI Hamiltonian (ci::FactoredHamiltonian) on a GPU against the assembled matrix's formats and baselines
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
  timeout $(left 585) build/$1/unit_tests/cispmv_test_cuda --gtest_filter="${2:-*}" > $RES/test-$1$3.txt 2>&1
  echo "cuda tests ($1 $2) rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; grep -E "FAILED|Failure|factored\]" $RES/test-$1$3.txt | head; tail -3 $RES/test-$1$3.txt | tee -a $RES/log.txt
}
ci() {  # tag, cispmv ci arguments
  /usr/bin/time -v timeout $(left 585) build/cuda/src/app/cispmv ci $2 > $RES/ci-$1.txt 2> $RES/ci-$1.time
  echo "ci $1 ($2): rc $? $(grep -E 'Elapsed|Maximum resident' $RES/ci-$1.time | tr -s ' ' | tr '\n' ' ')" | tee -a $RES/log.txt
  grep -E "^automatic|^hamiltonian|^nonzeros|^determinants|^davidson|^timings|^total|^ +[0-9]+ +-[0-9]|refus|error" $RES/ci-$1.txt | head -20 | tee -a $RES/log.txt; pack
}
case "$1" in
  f4)  # Kokkos 3.4 (cold): the team kernel with at most 4 slots and no per-slot arrays: cispmv ci's products, ncu
    TARGETS="cispmv_cli" timeout 330 bash perf/run_on_device.sh build > /dev/null ||
      { tail -5 $RES/log.txt; grep -B2 -A8 error $RES/build.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt $RES/build.txt $RES/configure.txt
    D=unit_tests/data
    ci fc-factored "$D/h2o_631g_fc.fcidump --level 8 --all-irreps --format factored"
    ci ae-factored "$D/h2o_631g.fcidump --level 10 --all-irreps --format factored"
    ci dz-auto "$D/h2o_631gd.fcidump --level 10 --format auto"
    timeout $(left 585) ncu --kernel-name-base demangled --kernel-name regex:FactoredTeam --launch-skip 2 --launch-count 1 \
      --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis \
      --section SpeedOfLight --section InstructionStats build/cuda/src/app/cispmv ci $D/h2o_631g_fc.fcidump --level 8 \
      --all-irreps --format factored > $RES/ncu-fc.txt 2>&1; echo "ncu rc $?" | tee -a $RES/log.txt
    grep -E "Registers Per|Spilling Requests  |Achieved Occ|Theoretical Occ|Warp Cycles Per Issued|Executed Instructions  |Duration|No Eligible" $RES/ncu-fc.txt | tee -a $RES/log.txt ;;
  f3)  # Kokkos 3.4 (cold): cispmv ci with the Hamiltonian assembled (auto: csell) and factored, end to end
    TARGETS="cispmv_cli" timeout 400 bash perf/run_on_device.sh build > /dev/null ||
      { tail -5 $RES/log.txt; grep -B2 -A8 error $RES/build.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt $RES/build.txt $RES/configure.txt
    D=unit_tests/data
    ci ae-auto "$D/h2o_631g.fcidump --level 10 --all-irreps --format auto"
    ci ae-factored "$D/h2o_631g.fcidump --level 10 --all-irreps --format factored"
    ci ae-factored-5 "$D/h2o_631g.fcidump --level 10 --all-irreps --format factored --roots 5"
    ci fc-factored "$D/h2o_631g_fc.fcidump --level 8 --all-irreps --format factored"
    ci dz-auto "$D/h2o_631gd.fcidump --level 10 --format auto" ;;
  f1b)  # the warm machine: benchmarks only
    B=build/cuda/perf/spmv_bench
    bench f1-fc $FC "$ONE"
    bench f1-fca1 $FCA1 "kokkos-kernels/native|csell/automatic/lanes:1/sort:64/|ci-factored"
    ITERS=10 bench f1-ae $AE "$ONE" ;;
  f1)  # Kokkos 3.4 (cold): the factored tests on CUDA, frozen core and all-electron against the formats and baselines
    B=build/cuda/perf/spmv_bench
    TARGETS="spmv_bench cispmv_test_cuda" timeout 540 bash perf/run_on_device.sh build > /dev/null ||
      { tail -5 $RES/log.txt; grep -B2 -A8 error $RES/build.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt $RES/build.txt
    tests cuda '*Factored*' -factored
    bench f1-fc $FC "$ONE"
    bench f1-fca1 $FCA1 "kokkos-kernels/native|csell/automatic/lanes:1/sort:64/|ci-factored"
    ITERS=10 bench f1-ae $AE "$ONE"
    timeout $(left 585) ncu --kernel-name-base demangled --kernel-name regex:FactoredTeam --launch-skip 2 --launch-count 1 \
      --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis \
      --section SpeedOfLight --section InstructionStats $B --matrix $FC --iterations 3 --repetitions 1 --out-dir /tmp/nn \
      --benchmark_filter='ci-factored/iter' > $RES/ncu-fc.txt 2>&1; echo "ncu rc $?" | tee -a $RES/log.txt
    grep -E "Registers Per|Achieved Occ|Theoretical Occ|Issued Ipc|Warp Cycles Per Issued|Executed Instructions  |Duration|No Eligible" $RES/ncu-fc.txt | tee -a $RES/log.txt
    tests cuda '*' -all ;;
esac
pack
