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
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
