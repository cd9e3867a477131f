#!/usr/bin/env bash
# Session 33's device calls: `bash perf/results/2026-11-27-session33/dev_call.sh CALL` on the device machine (run's
# command, with carry [".device"]); the programs are built here and carried (perf/pack_binaries.sh), helpers in
# perf/device_call_lib.sh. Results come back as $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
s=$(date +%s)
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
BASE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/'
FACT='ci-factored/(iter|same-spin|alpha-beta|ss:)'
K4=build/cuda-kokkos4
B=$K4/perf/spmv_bench
source perf/device_call_lib.sh
case "${1:-}" in
  a)  # light launches and the dense products beside the alpha-beta kernel (Kokkos 4.6 build): the factored tests on
      # the GPU first (atomic adds from two streams), both real matrices with every baseline, all CUDA tests, cispmv ci
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    resources
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*:*WarpMma*:*Gathered*' factored 150
    bench a-fc $FC "$BASE|$FACT|ci-factored/scatter/parts" "" 270
    ITERS=10 bench a-ae $AE "$BASE|$FACT" "" 400
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 520
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps" ;;
  b | c | d | e)  # (c: b again, on the warm H100; d: with 2 parts an alpha string for the frozen core; e: the review's fixes, a test of two products back to back, 2 parts for the alpha-beta sum alone and serial launches too) a with the factored team kernels back on Kokkos' constant-memory launch (a's argument launch copied their
      # functor to each thread's stack), the dense products still light: tests, both matrices, cispmv ci 1 and 5 roots
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    resources
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*:*WarpMma*:*Gathered*' factored 150
    bench $1-fc $FC "kokkos-kernels|$BASE|$FACT|ci-factored/scatter/parts" "" 270
    ITERS=10 bench $1-ae $AE "kokkos-kernels|$BASE|$FACT" "" 400
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci ae5 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 5"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps"
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 560 ;;
  f)  # the code as submitted under Kokkos 3.4.01 (build/cuda, host code -O0, device code optimized): every CUDA test
      # (the default instance on CUDA's legacy stream there), and the factored product's launches on both matrices
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    B=build/cuda/perf/spmv_bench
    resources
    tests '*' all 240
    bench f-fc $FC "$FACT" "" 330
    ITERS=10 bench f-ae $AE "$FACT" "" 450 ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
