#!/usr/bin/env bash
# Session 35's device calls: `bash perf/results/2026-11-28-session35/dev_call.sh CALL` on the device machine (run's
# command, with carry [".device"]); the programs are built here and carried (perf/pack_binaries.sh), helpers in
# perf/device_call_lib.sh. Results come back as $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
s=$(date +%s)
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
BASE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell'
K4=build/cuda-kokkos4
B=$K4/perf/spmv_bench
source perf/device_call_lib.sh
# the SMs' busy cycles (the tail of a launch: max against mean)
SM='--section LaunchStats --section Occupancy --section SpeedOfLight
 --metrics sm__cycles_active.max,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_elapsed.max'
# the automatic product (teams largest first) and the same string by string, whole and the alpha-beta sum alone
ORDER='ci-factored/(iter|alpha-beta/iter|order:strings|alpha-beta/order:strings|scatter/parts:4/batch:16/)'
case "${1:-}" in
  a)  # the teams largest first (automatic) against string by string, one process after the other, the baselines in
      # each; the all-electron matrix; ncu of the frozen core's alpha-beta kernel in both orders; every CUDA test
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*' factored 100
    bench a-fc1 $FC "$BASE|$ORDER" "" 170
    bench a-fc2 $FC "$ORDER|$BASE" "" 240
    ITERS=10 bench a-ae $AE "ci-factored/(iter|alpha-beta/iter|order:strings|alpha-beta/order:strings)" "" 400
    ncu_of fc-largest $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta/iter' "$SM"
    ncu_of fc-strings $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta/order:strings/iter' "$SM"
    grep -E "sm__cycles" $RES/ncu-fc-*.txt | tee -a $RES/log.txt
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 575 ;;
  b | c)  # the frozen core in four more processes (automatic and string by string, the baselines in each), cispmv ci
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    for i in 1 2 3 4; do bench $1-fc$i $FC "$BASE|ci-factored/(iter|alpha-beta/iter|order:strings/iter)" "" $(( 50 * i + 20 )); done
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps"
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*' factored 400 ;;
  d)  # the teams largest first with the frozen core's other shapes: the same-spin terms in the teams (lists) or the
      # dense products after the kernel, parts 1-4 at B 8 and 16, teams of 64 and 256; two processes, baselines in each
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    D='ci-factored/(iter|ss:lists/iter|ss:gemm/serial|scatter/parts:[1234]/batch:(8|16)/iter|scatter/team)'
    for i in 1 2; do bench $1-fc$i $FC "$BASE|$D" "" $(( 90 * i + 20 )); done ;;
  e)  # the committed code under Kokkos 3.4.01 (build/cuda, the default build): every CUDA test, the frozen core (both
      # orders, the baselines) and the all-electron product
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    B=build/cuda/perf/spmv_bench
    tests '*' all 200
    bench e-fc $FC "$BASE|$ORDER" "" 300
    ITERS=10 bench e-ae $AE "ci-factored/(iter|alpha-beta/iter|order:strings)" "" 450 ;;
  f)  # (issue 14, nothing changed for it) several vectors on the frozen core under Kokkos 3.4 (e's programs): csell's
      # block products at k = 1-16 against its single vector, Kokkos Kernels' rank-2 spmv and cuSPARSE SpMM, two processes
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    B=build/cuda/perf/spmv_bench
    for i in 1 2; do bench f-fc$i $FC "block/|csell/automatic" "--vectors 1,2,4,8,16" $(( 120 * i + 20 )); done ;;
  g | l)  # (asked of an H200; l: again, with 36fe75a's programs of j) the frozen core twice and the all-electron matrix, each with the baselines in its process
      # (csell too), both orders; cispmv ci
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    for i in 1 2; do bench $1-fc$i $FC "$BASE|csell/automatic/lanes:1/sort:64/|$ORDER" "" $(( 40 * i + 20 )); done
    ITERS=10 bench $1-ae $AE "$BASE|csell/automatic/lanes:1/sort:64/|ci-factored/(iter|alpha-beta/iter|order:strings)" "" 480
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps" ;;
  h)  # the spaces of one irrep (cispmv ci's default: A1, no all-irreps): both orders, the baselines, csell, two
      # processes of the frozen core, one of the all-electron space
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    FC1=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8
    AE1=fcidump:unit_tests/data/h2o_631g.fcidump:10
    H="$BASE|csell/automatic/lanes:1/sort:64/|ci-factored/(iter|alpha-beta/iter|order:strings|alpha-beta/order:strings)"
    for i in 1 2; do bench h-fc$i $FC1 "$H" "" $(( 40 * i + 20 )); done
    ITERS=10 bench h-ae $AE1 "$H" "" 300
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8" ;;
  i)  # experiment: the side streams at the greatest priority (CISPMV_EXP_SIDE_PRIORITY=high) against the default,
      # processes alternating, the frozen core three times each, the all-electron matrix once each; the factored tests
      # under the switch
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    CISPMV_EXP_SIDE_PRIORITY=high TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*' factored 80
    I="$BASE|ci-factored/(iter|alpha-beta/iter)"
    for r in 1 2 3; do
      bench i-fc-default$r $FC "$I" "" $(( 80 + 60 * r ))
      CISPMV_EXP_SIDE_PRIORITY=high bench i-fc-high$r $FC "$I" "" $(( 110 + 60 * r ))
    done
    ITERS=10 bench i-ae-default $AE "ci-factored/(iter|alpha-beta/iter)" "" 330
    CISPMV_EXP_SIDE_PRIORITY=high ITERS=10 bench i-ae-high $AE "ci-factored/(iter|alpha-beta/iter)" "" 380 ;;
  j)  # i's programs without the switch (its code path then is the committed one): every CUDA test (team_work's test
      # among them); issue 14's k = 1 and 8 on the frozen core, the eigensolver's csell and the two baselines, two processes
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 150
    J='csell/automatic/lanes:1/sort:64/|block/k:[18]/(csell-inline-sorted/lanes/|kokkos-kernels|cusparse-spmm)'
    for i in 1 2; do bench j-fc$i $FC "$J" "--vectors 1,8" $(( 150 + 90 * i )); done ;;
  k)  # (i's programs, no switch) the frozen core's A1 space (cispmv ci's default; 495 teams at 1 part, less than a wave):
      # its parts and batches, two processes, the baselines in each
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    FC1=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8
    K='ci-factored/(iter|alpha-beta/iter|scatter/parts:[1234]/batch:(8|16)/iter|scatter/team)'
    for i in 1 2; do bench k-fc$i $FC1 "$BASE|$K" "" $(( 60 * i + 20 )); done ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
