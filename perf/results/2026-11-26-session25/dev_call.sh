#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 25, csell's k = 2
# through the pair kernel (variants 2 and 3 of the 4-column launch), under Kokkos 3.4 and Kokkos 4.6, and the
# baselines not yet measured under Kokkos 4.6 (all-electron k = 16, paper32k-1, scaled-1048576)
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${CISPMV_COMMIT:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
s=$(date +%s)
left() { echo $(( ${1:-585} - ($(date +%s) - s) )); }
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
ONE='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic/lanes:1/sort:64/'
ONEG='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic|hybrid/vector'
MANY='block/k:[0-9]+/(csell-inline-sorted/lanes|kokkos-kernels/native|cusparse-spmm)'
bench() {  # tag, matrix, filter, extra args, seconds left at most
  timeout $(left ${5:-585}) $B --matrix $2 --iterations ${ITERS:-20} --repetitions 5 --out-dir $RES/$1 \
    --benchmark_filter="$3" $4 > $RES/$1.txt 2>&1
  echo "$1 rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
  grep "cache configuration" $RES/$1.txt | tee -a $RES/log.txt
  grep -E "median" $RES/$1.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2}' |
    sed 's/iterations:[0-9]*\/repeats:[0-9]*\/manual_time_median//' | tee -a $RES/log.txt; pack
}
tests() {  # the CUDA test executable of build $1
  timeout $(left 585) build/$1/unit_tests/cispmv_test_cuda > $RES/test-$1.txt 2>&1
  echo "cuda tests ($1) rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; tail -3 $RES/test-$1.txt | tee -a $RES/log.txt
}
case "$1" in
  k3)  # Kokkos 3.4 (the default build, cold): CUDA tests, the frozen core and the all-electron matrix, k = 1-16
    B=build/cuda/perf/spmv_bench
    TARGETS="spmv_bench cispmv_test_cuda" timeout 450 bash perf/run_on_device.sh build > /dev/null ||
      { tail -5 $RES/log.txt; grep -B2 -A8 error $RES/build.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt $RES/build.txt
    tests cuda
    bench k3-fc $FC "$ONE|$MANY" "--vectors 2,4,8,16"
    ITERS=10 bench k3-ae $AE "$ONE|$MANY" "--vectors 2,4,8,16" ;;
  k4)  # the warm machine, Kokkos 4.6.01 + Kokkos Kernels 4.6.02: build, CUDA tests, frozen core, paper32k-1, scaled
    B=build/cuda-kokkos4/perf/spmv_bench
    timeout 200 bash cmake/bootstrap.sh --preset cuda --kokkos 4 --arch $ARCH --source .deps/kokkos4-src.tgz --jobs 16 \
      > $RES/bootstrap-kokkos4.txt 2>&1; echo "bootstrap rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
    cmake --preset cuda-kokkos4 > $RES/configure-kokkos4.txt 2>&1 || { tail -30 $RES/configure-kokkos4.txt; pack; exit 1; }
    timeout $(left 480) cmake --build --preset cuda-kokkos4 --parallel 16 --target spmv_bench cispmv_test_cuda \
      > $RES/build-kokkos4.txt 2>&1 || { grep -B2 -A8 error $RES/build-kokkos4.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/build-kokkos4.txt
    tests cuda-kokkos4
    bench k4-fc $FC "$ONE|$MANY" "--vectors 2,4,8,16"
    bench k4-p32 paper32k-1 "$ONEG" ""
    bench k4-scaled scaled-1048576 "$ONEG" "" ;;
  k4more)  # Kokkos 4.6 build (cold): paper32k-1 with several vectors; csell against Kokkos Kernels 4.6 on the 16 host cores
    B=build/cuda-kokkos4/perf/spmv_bench
    timeout 200 bash cmake/bootstrap.sh --preset cuda --kokkos 4 --arch $ARCH --source .deps/kokkos4-src.tgz --jobs 16 \
      > $RES/bootstrap-kokkos4.txt 2>&1; echo "bootstrap rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
    cmake --preset cuda-kokkos4 > $RES/configure-kokkos4.txt 2>&1 || { tail -30 $RES/configure-kokkos4.txt; pack; exit 1; }
    timeout $(left 480) cmake --build --preset cuda-kokkos4 --parallel 16 --target spmv_bench \
      > $RES/build-kokkos4.txt 2>&1 || { grep -B2 -A8 error $RES/build-kokkos4.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/build-kokkos4.txt $RES/bootstrap-kokkos4.txt $RES/configure-kokkos4.txt
    bench k4-p32-blocks paper32k-1 "$ONEG|block/k:[0-9]+/(csell|kokkos-kernels/native|cusparse-spmm)" "--vectors 2,4,8,16"
    export OMP_PROC_BIND=spread OMP_PLACES=cores
    ITERS=10 bench k4-fc-host $FC "kokkos-kernels/native|csell/automatic" "--space host"
    ITERS=5 bench k4-ae-host $AE "kokkos-kernels/native|csell/automatic/lanes:1/sort:(none|64)/" "--space host" ;;
  width)  # Kokkos 3.4 build (cold): the Davidson's buffer widths (perf/width_exp.cpp), frozen core and all-electron
    TARGETS="width_exp" timeout 400 bash perf/run_on_device.sh build > /dev/null ||
      { tail -5 $RES/log.txt; grep -B2 -A8 error $RES/build.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt $RES/build.txt $RES/configure.txt
    timeout $(left 585) build/cuda/perf/width_exp $FC 20 > $RES/width-fc.txt 2>&1; echo "width fc rc $?" | tee -a $RES/log.txt
    cat $RES/width-fc.txt | tee -a $RES/log.txt; pack
    timeout $(left 585) build/cuda/perf/width_exp $AE 5 > $RES/width-ae.txt 2>&1; echo "width ae rc $?" | tee -a $RES/log.txt
    cat $RES/width-ae.txt | tee -a $RES/log.txt ;;
  davidson)  # Kokkos 3.4 build (cold): the Davidson's buffers at the compiled widths: CUDA tests, cispmv ci 1 and 5 roots
    TARGETS="cispmv_test_cuda cispmv_cli" timeout 450 bash perf/run_on_device.sh build > /dev/null ||
      { tail -5 $RES/log.txt; grep -B2 -A8 error $RES/build.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt $RES/build.txt $RES/configure.txt
    tests cuda
    for run in "h2o_631g.fcidump --level 10 --all-irreps --roots 1" "h2o_631g.fcidump --level 10 --all-irreps --roots 5" \
               "h2o_631g_fc.fcidump --level 8 --all-irreps --roots 5"; do
      tag=$(echo "$run" | tr -d ' -' | tr '.' '_')
      /usr/bin/time -v timeout $(left 585) build/cuda/src/app/cispmv ci unit_tests/data/$run > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
      echo "ci $run: rc $?" | tee -a $RES/log.txt; grep -E "Elapsed" $RES/ci-$tag.time | tee -a $RES/log.txt
      grep -E "^automatic|^timings|^total|root|products" $RES/ci-$tag.txt | head -20 | tee -a $RES/log.txt
    done ;;
  ab)  # Kokkos 3.4 build (cold): cispmv ci with the Davidson's blocks at their own strides (the working tree) against
       # d749d2f (abold/: `git archive d749d2f CMakeLists.txt CMakePresets.json cmake include src LICENSE README.md`), CUDA tests
    bash cmake/bootstrap.sh --preset cuda --arch $ARCH --source .deps/kokkos-src.tgz --jobs 16 > $RES/bootstrap.txt 2>&1 ||
      { tail -20 $RES/bootstrap.txt; pack; exit 1; }
    echo "bootstrap at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
    ln -s ../.deps abold/.deps
    ( cd abold && cmake --preset cuda -DCISPMV_ENABLE_TESTS=OFF -DCISPMV_ENABLE_PERF=OFF > $RES/configure-old.txt 2>&1 &&
      timeout $(left 470) cmake --build --preset cuda --parallel 6 --target cispmv_cli > $RES/build-old.txt 2>&1;
      echo "old build rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt ) &
    cmake --preset cuda > $RES/configure.txt 2>&1 && timeout $(left 470) cmake --build --preset cuda --parallel 12 \
      --target cispmv_cli cispmv_test_cuda > $RES/build.txt 2>&1
    echo "new build rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; wait
    grep -B2 -A8 " error" $RES/build.txt $RES/build-old.txt | head -30; rm -f $RES/bootstrap.txt $RES/build*.txt $RES/configure*.txt
    tests cuda
    for rep in 1 2; do
      for run in "h2o_631g.fcidump --level 10 --all-irreps --roots 1" "h2o_631g.fcidump --level 10 --all-irreps --roots 5" \
                 "h2o_631g_fc.fcidump --level 8 --all-irreps --roots 5"; do
        for which in old new; do
          cli=build/cuda/src/app/cispmv; [ $which = old ] && cli=abold/build/cuda/src/app/cispmv
          tag=$which-$rep-$(echo "$run" | tr -d ' -' | tr '.' '_')
          /usr/bin/time -v timeout $(left 585) $cli ci unit_tests/data/$run > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
          echo "$which ci $run: rc $? $(grep -E 'Elapsed' $RES/ci-$tag.time)" | tee -a $RES/log.txt
          grep -E "^timings" $RES/ci-$tag.txt | tee -a $RES/log.txt
        done
      done
    done ;;
  ae4)  # the warm machine: the all-electron matrix under Kokkos 4.6, k = 1-16
    B=build/${BUILD:-cuda-kokkos4}/perf/spmv_bench
    ITERS=10 bench ${TAG:-k4-ae} $AE "$ONE|$MANY" "--vectors 2,4,8,16" ;;
esac
pack
