#!/usr/bin/env bash
# Session 38's device calls: `bash perf/results/2026-11-28-session38/dev_call.sh CALL` on the device machine (run's
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
  a)  # (H200, Kokkos 4.6 build of b0f05df) every CUDA test; issue 14's block products in csell's sort windows (32, 256,
      # the automatic 1,024, 4,096) at k = 1, 4, 8, 16 on the frozen core, two processes, the single-vector csell and the
      # k = 8 baselines in each; the all-electron matrix at k = 8 in the windows, one process
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 150
    W='csell-inline-(sorted|w32|w256|w4096)/lanes/'
    A="csell/automatic/lanes:1/sort:64/|block/k:[0-9]+/$W|block/k:8/(kokkos-kernels|cusparse-spmm)"
    for i in 1 2; do bench a-fc$i $FC "$A" "--vectors 1,4,8,16" $(( 150 + 110 * i )); done
    ITERS=10 bench a-ae $AE "csell/automatic/lanes:1/sort:64/|block/k:8/csell-inline-(sorted|w256|w4096)/lanes/" \
      "--vectors 8" 560 ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
