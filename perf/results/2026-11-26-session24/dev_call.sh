#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 24, the
# baselines under CUDA's default device cache configuration, against Kokkos 3.4 and Kokkos 4.6
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
case "$1" in
  k3)  # Kokkos 3.4 (the default build): the frozen core with Kokkos 3's cache setting kept and put back, blocks, paper32k-1, all-electron
    B=build/cuda/perf/spmv_bench
    TARGETS="spmv_bench" timeout 420 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; grep -B2 -A8 error $RES/build.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt $RES/build.txt
    bench k3-fc-kept $FC "$ONE" "--kokkos3-cache-config"
    bench k3-fc $FC "$ONE|$MANY" "--vectors 2,4,8,16"
    bench k3-p32 paper32k-1 "$ONEG" ""
    ITERS=10 bench k3-ae $AE "$ONE|$MANY" "--vectors 2,4,8,16" ;;
  k4)  # the warm machine, Kokkos 4.6.01 + Kokkos Kernels 4.6.02: the same
    B=build/cuda-kokkos4/perf/spmv_bench
    timeout 200 bash cmake/bootstrap.sh --preset cuda --kokkos 4 --arch $ARCH --source .deps/kokkos4-src.tgz --jobs 16 \
      > $RES/bootstrap-kokkos4.txt 2>&1; echo "bootstrap rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
    cmake --preset cuda-kokkos4 > $RES/configure-kokkos4.txt 2>&1 || { tail -30 $RES/configure-kokkos4.txt; pack; exit 1; }
    timeout $(left 450) cmake --build --preset cuda-kokkos4 --parallel 16 --target spmv_bench > $RES/build-kokkos4.txt 2>&1 ||
      { grep -B2 -A8 error $RES/build-kokkos4.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/build-kokkos4.txt
    bench k4-fc $FC "$ONE|$MANY" "--vectors 2,4,8,16"
    ITERS=10 bench k4-ae $AE "$ONE|$MANY" "--vectors 2,4,8,16"
    bench k4-p32 paper32k-1 "$ONEG" "" ;;
  scaled3)  # Kokkos 3.4 build (cold): scaled-1048576 with the baselines under CUDA's default
    B=build/cuda/perf/spmv_bench
    TARGETS="spmv_bench" timeout 450 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; grep -B2 -A8 error $RES/build.txt | head -40; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt $RES/build.txt
    bench k3-scaled scaled-1048576 "$ONEG" "" ;;
  ae4)  # the warm machine: what did not fit
    B=build/${BUILD:-cuda-kokkos4}/perf/spmv_bench
    ITERS=10 bench ${TAG:-k4-ae} $AE "$ONE|$MANY" "--vectors 2,4,8,16"
    bench ${TAG2:-k4-scaled} scaled-1048576 "$ONEG" "" ;;
esac
pack
