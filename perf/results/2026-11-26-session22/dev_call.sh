#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 22's stages
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/${CISPMV_COMMIT:-exp} JOBS=16
mkdir -p $RES
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
s=${S0:-$(date +%s)}; export S0=$s
build() {
  TARGETS="$1" timeout $2 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; tail -30 $RES/build.txt; pack; exit 1; }
  echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
}
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
case "$1" in
  final)  # the commit's CUDA tests and block products on the frozen core
    build "cispmv_test_cuda spmv_bench cispmv_cli" 430
    timeout 150 build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    tail -4 $RES/test-cuda.txt; pack
    bash $0 blocks fc $FC ;;
  ae)  # the next call on the warm machine (build/ kept): all-electron block products, then cispmv ci 1 and 5 roots
    build "spmv_bench cispmv_cli" 200
    VECS=${VECS:-8,16} ITERS=10 bash $0 blocks ae fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps; pack
    for run in "--roots 1" "--roots 5"; do
      tag=$(echo "$run" | tr -d ' -')
      /usr/bin/time -v build/cuda/src/app/cispmv ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps $run \
        --json $RES/ci-$tag.json > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
      echo "ci $run: exit code $?" | tee -a $RES/log.txt
      grep -E "Elapsed" $RES/ci-$tag.time | tee -a $RES/log.txt
      grep -E "^automatic|^timings|^total|^root|^ *[0-9]+ +-" $RES/ci-$tag.txt | head -12 | tee -a $RES/log.txt
    done ;;
  pair)  # session 22: the pair kernel's loads (perf/pair_exp.cpp), frozen core; AE=1 the all-electron matrix too
    build pair_exp 300
    X=build/cuda/perf/pair_exp
    timeout 200 $X $FC 20 > $RES/pair-fc.txt 2>&1; echo "pair fc rc $?" | tee -a $RES/log.txt
    cat $RES/pair-fc.txt; pack
    [ "${AE:-0}" = 1 ] && { timeout $(( 590 - ($(date +%s) - s) )) $X fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps 5 > $RES/pair-ae.txt 2>&1; echo "pair ae rc $?" | tee -a $RES/log.txt; cat $RES/pair-ae.txt; } ;;
  blocks)  # spmv_bench: one vector (csell automatic) and k = 2, 4, 8, 16 (the eigensolver's csell, KK rank-2, cuSPARSE SpMM)
    B=build/cuda/perf/spmv_bench
    timeout $(( 590 - ($(date +%s) - s) )) $B --matrix $3 --vectors ${VECS:-2,4,8,16} --iterations ${ITERS:-20} --repetitions 5 --out-dir $RES/$2 \
      --benchmark_filter="${FILTER:-kokkos-kernels/native|csell/automatic|block/k:[0-9]+/(csell-inline-sorted/lanes|kokkos-kernels/native|cusparse-spmm)}" > $RES/$2.txt 2>&1
    echo "$2 rc $?" | tee -a $RES/log.txt
    grep -E "median" $RES/$2.txt | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2}' | sed 's/iterations:[0-9]*\/repeats:[0-9]*\/manual_time_median//' | tee -a $RES/log.txt ;;
esac
pack
