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
  b)  # (H200, a's programs) issue 10's figures on this card, each matrix in one process with every baseline: the frozen
      # core twice and the all-electron matrix (the factored product, its parts, csell), paper32k-1 and scaled-1048576
      # (csell's shapes, the paper's hybrid kernel); cispmv ci on the all-electron matrix, one root and five
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    B=$K4/perf/spmv_bench
    BASE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell'
    F="$BASE|ci-factored/(iter|alpha-beta/iter|same-spin/iter)|csell/automatic/lanes:1/sort:64/"
    for i in 1 2; do bench b-fc$i $FC "$F" "" $(( 40 + 30 * i )); done
    ITERS=10 bench b-ae $AE "$F" "" 200
    bench b-p32 paper32k-1 "$BASE|csell/automatic/|hybrid/vector/iter|hybrid16/vector/iter" "" 260
    ITERS=10 bench b-sc scaled-1048576 "$BASE|csell/automatic/lanes:1/sort:1024/" "" 470
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci ae5 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 5" ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
