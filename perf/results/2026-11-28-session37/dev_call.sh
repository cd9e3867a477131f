#!/usr/bin/env bash
# Session 37's device calls: `bash perf/results/2026-11-28-session37/dev_call.sh CALL` on the device machine (run's
# command, with carry [".device"]); the programs are built here and carried (perf/pack_binaries.sh), helpers in
# perf/device_call_lib.sh. Results come back as $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
s=$(date +%s)
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
FC1=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8
BASE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell'
F="$BASE|ci-factored/(iter|alpha-beta/iter|same-spin/iter)"
source perf/device_call_lib.sh
MEM='--section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis'
case "${1:-}" in
  a)  # Kokkos 3.4 (the default build): the factored kernels' carve-out sized for occupancy (the new build) against
      # Kokkos 3's shared-memory preference (the old spmv_bench, 88f12d0's code, carried as xz), processes alternating,
      # the baselines in each: the frozen core three times each, the all-electron matrix once each, the frozen core's
      # A1 once each; ncu's configuration and L1 of the scatter and dense-product kernels both ways; every CUDA test;
      # cispmv ci
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    OLD=/tmp/spmv_bench_before; xz -dc .device/k34-before-spmv_bench.xz > $OLD && chmod +x $OLD
    NEW=build/cuda/perf/spmv_bench
    TESTS_BIN=build/cuda/unit_tests/cispmv_test_cuda tests '*' all 150
    for r in 1 2 3; do
      B=$NEW bench a-fc-new$r $FC "$F" "" $(( 150 + 20 * r ))
      B=$OLD bench a-fc-old$r $FC "$F" "" $(( 160 + 20 * r ))
    done
    B=$NEW bench a-fc1-new $FC1 "$F" "" 230
    B=$OLD bench a-fc1-old $FC1 "$F" "" 240
    B=$NEW ITERS=10 bench a-ae-new $AE "$F" "" 320
    B=$OLD ITERS=10 bench a-ae-old $AE "$F" "" 400
    B=$NEW ncu_of fc-ab-new $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta/iter' "$MEM"
    B=$OLD ncu_of fc-ab-old $FC FactoredScatterKernel 'fc.fcidump.*ci-factored/alpha-beta/iter' "$MEM"
    B=$NEW ncu_of fc-gemm-new $FC GatheredGemmKernel 'fc.fcidump.*ci-factored/iter' "$MEM"
    B=$OLD ncu_of fc-gemm-old $FC GatheredGemmKernel 'fc.fcidump.*ci-factored/iter' "$MEM"
    grep -E "Shared Memory Configuration|Block Limit Shared|Block Limit Reg|L1/TEX Hit|Achieved Occ|Duration" \
      $RES/ncu-*.txt | tee -a $RES/log.txt
    CLI=build/cuda/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=build/cuda/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps" ;;
  b)  # the frozen core's spread between processes (0.116-0.137 ms on H100s): the GPU's SM clock sampled every 50 ms
      # (nvidia-smi, nothing set) while eight processes of the committed kernels (the old spmv_bench: 88f12d0's code
      # under Kokkos 3.4) time it, each process's start and end stamped, the baselines in each
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    OLD=/tmp/spmv_bench_before; xz -dc .device/k34-before-spmv_bench.xz > $OLD && chmod +x $OLD
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
      --format=csv -lms 50 > $RES/clocks.csv 2>&1 &
    smi=$!
    for r in 1 2 3 4 5 6 7 8; do
      echo "b-fc$r start $(date +%T.%N)" >> $RES/stamps.txt
      B=$OLD bench b-fc$r $FC "$F" "" $(( 60 + 25 * r ))
      echo "b-fc$r end $(date +%T.%N)" >> $RES/stamps.txt
    done
    kill $smi
    nvidia-smi -q -d CLOCK,PERFORMANCE > $RES/smi-q.txt 2>&1 ;;
  c | d)  # (c: an H100, d: an H200) the factored kernels launched light, their same-spin pass reading the lists from
      # device memory (the new Kokkos 3.4 build) against the constant-memory launch (the old spmv_bench), processes
      # alternating, the baselines in each: the frozen core four times each, its A1 space and the all-electron matrix
      # once each; every CUDA test; cispmv ci
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    OLD=/tmp/spmv_bench_before; xz -dc .device/k34-before-spmv_bench.xz > $OLD && chmod +x $OLD
    NEW=build/cuda/perf/spmv_bench
    B=$NEW resources
    TESTS_BIN=build/cuda/unit_tests/cispmv_test_cuda tests '*' all 150
    for r in 1 2 3 4; do
      B=$NEW bench $1-fc-new$r $FC "$F" "" $(( 150 + 15 * r ))
      B=$OLD bench $1-fc-old$r $FC "$F" "" $(( 157 + 15 * r ))
    done
    B=$NEW bench $1-fc1-new $FC1 "$F" "" 240
    B=$OLD bench $1-fc1-old $FC1 "$F" "" 250
    B=$NEW ITERS=10 bench $1-ae-new $AE "$F" "" 330
    B=$OLD ITERS=10 bench $1-ae-old $AE "$F" "" 410
    CLI=build/cuda/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=build/cuda/src/app/cispmv ci ae5 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 5"
    CLI=build/cuda/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps" ;;
  e)  # the two builds on one H100 in one call, processes alternating: Kokkos 4.6 (HEAD's code, cuda-kokkos4) against the
      # Kokkos 3.4 spmv_bench of s36-j (88f12d0's kernels), the baselines in each: the frozen core four times each, the
      # all-electron matrix once each; every CUDA test of the 4.6 build; cispmv ci
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    OLD=/tmp/spmv_bench_k34; xz -dc .device/k34-before-spmv_bench.xz > $OLD && chmod +x $OLD
    K4=build/cuda-kokkos4
    TESTS_BIN=$K4/unit_tests/cispmv_test_cuda tests '*' all 150
    for r in 1 2 3 4; do
      B=$K4/perf/spmv_bench bench e-fc-k46-$r $FC "$F" "" $(( 150 + 15 * r ))
      B=$OLD bench e-fc-k34-$r $FC "$F" "" $(( 157 + 15 * r ))
    done
    B=$K4/perf/spmv_bench ITERS=10 bench e-ae-k46 $AE "$F" "" 310
    B=$OLD ITERS=10 bench e-ae-k34 $AE "$F" "" 390
    CLI=$K4/src/app/cispmv ci ae "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    CLI=$K4/src/app/cispmv ci fc "unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps" ;;
  f)  # the Kokkos 3.4 build with host code at -O3 (as the default build compiles it; HEAD's code) against the -O0 one of
      # s36-j and HEAD's Kokkos 4.6 build, three processes each in turn, the baselines in each; the all-electron matrix
      # once each for the two HEAD builds
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    mkdir -p /tmp/o3 && tar xJf .device/cuda-o3-bin.tar.xz -C /tmp/o3 && cat /tmp/o3/build/cuda/PACKED >> $RES/log.txt
    O3=/tmp/o3/build/cuda/perf/spmv_bench
    O0=/tmp/spmv_bench_k34; xz -dc .device/k34-before-spmv_bench.xz > $O0 && chmod +x $O0
    K4=build/cuda-kokkos4/perf/spmv_bench
    for r in 1 2 3; do
      B=$O3 bench f-fc-k34o3-$r $FC "$F" "" $(( 60 + 20 * r ))
      B=$O0 bench f-fc-k34o0-$r $FC "$F" "" $(( 67 + 20 * r ))
      B=$K4 bench f-fc-k46-$r $FC "$F" "" $(( 74 + 20 * r ))
    done
    B=$O3 ITERS=10 bench f-ae-k34o3 $AE "$F" "" 220
    B=$K4 ITERS=10 bench f-ae-k46 $AE "$F" "" 290 ;;
  g)  # the frozen core's spread: four operators of the automatic configuration in one process (automatic, and the same
      # configuration named three ways: each built apart, with allocations of its own), six processes (Kokkos 4.6)
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    K4=build/cuda-kokkos4/perf/spmv_bench
    G='cusparse-csr/default|ci-factored/(iter|ss:gemm/concurrent/iter|rows:per-warp/iter|scatter/parts:2/batch:16/iter)'
    for r in 1 2 3 4 5 6; do B=$K4 bench g-fc$r $FC "$G" "" $(( 40 + 20 * r )); done ;;
  h)  # CUDA streams share the GPU's hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS, 8 by default): a side stream
      # that lands on the main stream's queue serialises the dense products behind the alpha-beta kernel. g's four
      # operators and the alpha-beta sum alone, with 32 queues and with the default, processes alternating (Kokkos 4.6)
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    K4=build/cuda-kokkos4/perf/spmv_bench
    G='cusparse-csr/default|ci-factored/(iter|alpha-beta/iter|ss:gemm/concurrent/iter|rows:per-warp/iter|scatter/parts:2/batch:16/iter)'
    for r in 1 2 3 4 5; do
      CUDA_DEVICE_MAX_CONNECTIONS=32 B=$K4 bench h-fc-q32-$r $FC "$G" "" $(( 30 + 25 * r ))
      B=$K4 bench h-fc-q8-$r $FC "$G" "" $(( 42 + 25 * r ))
    done ;;
  i)  # the dense products after the alpha-beta kernel (serial) against beside it (concurrent, named and automatic), and
      # the alpha-beta sum and the dense products alone, eight processes (Kokkos 4.6)
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    K4=build/cuda-kokkos4/perf/spmv_bench
    G='cusparse-csr/default|ci-factored/(iter|alpha-beta/iter|same-spin/iter|ss:gemm/serial/iter|ss:gemm/concurrent/iter)'
    for r in 1 2 3 4 5 6 7 8; do B=$K4 bench i-fc$r $FC "$G" "" $(( 30 + 15 * r )); done ;;
  j)  # (an H200) i's filter and g's named operators, six processes (Kokkos 4.6)
    PREBUILT=.device/cuda-kokkos4-bin.tar.xz prebuilt
    K4=build/cuda-kokkos4/perf/spmv_bench
    G='cusparse-csr/default|ci-factored/(iter|alpha-beta/iter|same-spin/iter|ss:gemm/serial/iter|ss:gemm/concurrent/iter|rows:per-warp/iter|scatter/parts:2/batch:16/iter)'
    for r in 1 2 3 4 5 6; do B=$K4 bench j-fc$r $FC "$G" "" $(( 40 + 20 * r )); done ;;
  *) echo "dev_call: unknown call '${1:-}'" >&2; exit 2 ;;
esac
echo "=== $(date +%T) done at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
pack
