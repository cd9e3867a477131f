#!/usr/bin/env bash
# Helpers for one device call (sourced by a session's perf/results/*/dev_call.sh, run from the repository root on the
# device machine): each writes its output under $RES, appends a summary to $RES/log.txt and packs $RES's parent folder into
# $OUT/res.tgz, so that whatever a call reaches comes back even where a later step runs out of time.
#   left N            seconds left of N since the call began ($s)
#   prebuilt          unpack PREBUILT (perf/pack_binaries.sh's tarballs, carried in .device) through run_on_device.sh
#   bench TAG MATRIX FILTER [ARGS] [N]   spmv_bench ($B, ITERS iterations, 5 repetitions) within N s of the start
#   ncu_of TAG MATRIX KERNEL FILTER [SECTIONS]   ncu's sections of one launch of KERNEL
#   ncu_src TAG MATRIX KERNEL FILTER  ncu's source page (SASS, stalls), gzipped CSV
#   tests FILTER TAG [N]   the CUDA test executable ($TESTS_BIN, default the cuda preset's), at most N s
#   ci TAG ARGS       cispmv ci ($CLI) under /usr/bin/time
#   resources         registers, stack and shared memory of the factored and dense-product kernels in $B
# Needs: RES, s (the call's start), B (spmv_bench), OUT (the device tool's output folder).
left() {  # (at least 1: timeout refuses 0 and below)
  local l=$(( ${1:-585} - ($(date +%s) - s) ))
  echo $(( l < 1 ? 1 : l ))
}
pack() { tar czf "$OUT/res.tgz" -C "$(dirname "$(dirname "$RES")")" "$(basename "$(dirname "$RES")")"; }
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
  timeout $cap ${TESTS_BIN:-build/cuda/unit_tests/cispmv_test_cuda} --gtest_filter="$1" > $RES/test-$2.txt 2>&1
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
