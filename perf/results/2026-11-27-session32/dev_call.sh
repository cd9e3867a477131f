#!/usr/bin/env bash
# One device call of session 32 (run from the repository root: bash perf/results/2026-11-27-session32/dev_call.sh TAG),
# with the programs built here and carried (perf/pack_binaries.sh -> .device/cuda-bin.tar.xz; `run` with carry
# [".device"]): no build on the device. Results in $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
s=$(date +%s)
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
BASE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/'
# the automatic product (same-spin gemm on GPUs), its two parts alone, and the same with the same-spin lists
FACT='ci-factored/(iter|same-spin|alpha-beta|ss:lists)'
B=build/cuda/perf/spmv_bench
# the helpers (bench, ncu_of, ncu_src, tests, ci, resources, prebuilt, pack)
source perf/device_call_lib.sh
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
  g)  # the review's fixes (compile-time checks; prebuilt's tests of the loader cache and ldd): every CUDA test, and
      # the factored product on both real matrices (Kokkos 3.4 build, as c)
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    resources
    tests '*' all 240
    bench g-fc $FC "$FACT" "" 320
    ITERS=10 bench g-ae $AE "$FACT" "" 420 ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
