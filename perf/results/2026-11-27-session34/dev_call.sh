#!/usr/bin/env bash
# Session 34's device calls: `bash perf/results/2026-11-27-session34/dev_call.sh CALL` on the device machine (run's
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
SM='--section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight --section MemoryWorkloadAnalysis
 --metrics sm__cycles_active.max,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_elapsed.max,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_sectors.sum'
case "${1:-}" in
  a)  # diagnosis before any change (session 33's code, 5a73ff3): where the frozen core's alpha-beta kernel loses
      # against the all-electron one per step: SMs idle (waves, uneven teams) or the SM's throughput
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    bench a-fc $FC "ci-factored/(alpha-beta|scatter/parts)" "" 150
    ncu_of fc-ab $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta' "$SM"
    ncu_of ae-ab $AE FactoredScatterKernel 'ci-factored/alpha-beta' "$SM" ;;
  b | b2 | b3)  # (b2: with mode 3, a row of ys per warp, hung: lanes past Q left the loop before __syncwarp; b3: fixed) micro-benchmark (ldc_micro.cu, not the library): the table walk's integrals from shared memory or constant memory
    d=perf/results/2026-11-27-session34
    nvcc -O3 -arch=sm_90 -Xptxas -v -o /tmp/ldc $d/ldc_micro.cu > $RES/ldc-build.txt 2>&1
    cuobjdump -sass /tmp/ldc | grep -oE "Function : [^ ]*|(LDC|LDS|ULDC|DFMA|LDL|STL)[.A-Z0-9]*" | uniq -c > $RES/ldc-sass.txt
    for n in 990 495 1980; do timeout 20 /tmp/ldc $n; done 2>&1 | tee $RES/ldc.txt | tee -a $RES/log.txt
    timeout 60 ncu --launch-skip 5 --launch-count 1 --kernel-name regex:walk --section SpeedOfLight --section WarpStateStats \
      --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,idc__requests.sum /tmp/ldc 990 > $RES/ncu-ldc0.txt 2>&1
    timeout 60 ncu --launch-skip 35 --launch-count 1 --kernel-name regex:walk --section SpeedOfLight --section WarpStateStats \
      --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,idc__requests.sum /tmp/ldc 990 > $RES/ncu-ldc1.txt 2>&1
    timeout 60 ncu --launch-skip 95 --launch-count 1 --kernel-name regex:walk --section SpeedOfLight --section WarpStateStats \
      --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum /tmp/ldc 990 > $RES/ncu-ldc3.txt 2>&1
    grep -E "Duration|L1/TEX Cache|wavefronts|inst_executed|idc__|Stall|Warp Cycles" $RES/ncu-ldc*.txt | tee -a $RES/log.txt ;;
  c)  # balanced parts and a copy of the row a warp (Kokkos 4.6 build): the factored tests first, both matrices with
      # every baseline and the new shapes, ncu of the frozen core's alpha-beta kernel, all CUDA tests, cispmv ci
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    resources
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*' factored 150
    bench c-fc $FC "kokkos-kernels|$BASE|$FACT|ci-factored/rows|ci-factored/scatter/parts" "" 240
    ITERS=10 bench c-ae $AE "kokkos-kernels|$BASE|$FACT|ci-factored/rows|ci-factored/scatter/parts:2/batch:16" "" 380
    ncu_of fc-ab $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta/iter' "$SM"
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps"
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 570 ;;
  d)  # c's programs with an experiment switch: the table walk's parts by even shares of steps (the default) or by
      # batches (CISPMV_EXP_PARTS=parity, session 33's way), each with one row or a row a warp, both matrices
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*' factored 100
    P='ci-factored/(iter|alpha-beta|rows)|ci-factored/scatter/parts:[1234]/batch|ci-factored/scatter/team'
    bench d-fc-steps $FC "kokkos-kernels/native|$P" "" 200
    CISPMV_EXP_PARTS=parity bench d-fc-parity $FC "$P" "" 260
    ITERS=10 bench d-ae-steps $AE "ci-factored/(iter|alpha-beta|rows)|scatter/parts:[12]/batch:16" "" 380
    CISPMV_EXP_PARTS=parity ITERS=10 bench d-ae-parity $AE "ci-factored/(iter|alpha-beta|rows)|scatter/parts:[12]/batch:16" "" 500 ;;
  e)  # session 33's parts by batches again, its one-row loop restored; a row a warp with a warp-uniform loop (automatic
      # where it fits 32 KB): tests, both matrices (one row and a row a warp named, in one process), baselines, cispmv ci
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    resources
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*' factored 100
    bench e-fc $FC "kokkos-kernels/native|$BASE|$FACT|ci-factored/rows|ci-factored/alpha-beta/rows|ci-factored/scatter/parts" "" 220
    ITERS=10 bench e-ae $AE "kokkos-kernels/native|$BASE|$FACT|ci-factored/rows|ci-factored/alpha-beta/rows" "" 360
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps"
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 540 ;;
  f)  # e's programs on an H100: the frozen core twice in two processes (e's early shapes ran up to 9 % slower than the
      # same shape later in the process), baselines, the all-electron matrix
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    F2='ci-factored/(iter|alpha-beta/iter|rows|alpha-beta/rows)|ci-factored/scatter/parts:[124]/batch'
    bench f-fc1 $FC "kokkos-kernels/native|$BASE|$F2" "" 150
    bench f-fc2 $FC "$F2|kokkos-kernels/native|$BASE" "" 250
    ITERS=10 bench f-ae $AE "kokkos-kernels/native|$BASE|ci-factored/(iter|alpha-beta/iter|rows)" "" 400 ;;
  g | h)  # (g: H100, h: H200) e's programs: the frozen core's parts 2 against 4 (B 16 and 8, copies), three processes
      # each, with the baselines in each process
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    G='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|ci-factored/iter|ci-factored/scatter/parts:[24]/batch:(16|8)/iter'
    for i in 1 2 3; do bench $1-fc$i $FC "$G" "" $(( 100 * i + 60 )); done ;;
  i | j)  # the dense products issued after the alpha-beta kernel (default) or before it (CISPMV_EXP_SIDE_FIRST=1, as
      # before), alternating processes; tests first (i: the card that comes; j: on the other kind)
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*Factored*' factored 100
    G='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|ci-factored/(iter|alpha-beta/iter|ss:gemm/serial|scatter/team)'
    for r in 1 2; do
      bench $1-fc-after$r $FC "$G" "" $(( 120 * r ))
      CISPMV_EXP_SIDE_FIRST=1 bench $1-fc-before$r $FC "$G" "" $(( 120 * r + 40 ))
    done
    ITERS=10 bench $1-ae-after $AE "ci-factored/(iter|alpha-beta/iter)" "" 380
    CISPMV_EXP_SIDE_FIRST=1 ITERS=10 bench $1-ae-before $AE "ci-factored/(iter|alpha-beta/iter)" "" 440
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 560 ;;
  k)  # the committed code under Kokkos 3.4.01 (build/cuda, the default build): every CUDA test (the copies at level 0
      # in Kokkos 3.4's dynamic shared memory), the frozen core's product with one row and with copies
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    B=build/cuda/perf/spmv_bench
    tests '*' all 240
    bench k-fc $FC "ci-factored/(iter|alpha-beta|rows)" "" 330
    ITERS=10 bench k-ae $AE "ci-factored/(iter|alpha-beta/iter)" "" 450 ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
