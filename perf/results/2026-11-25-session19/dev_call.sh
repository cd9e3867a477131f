#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 19's stages
# (earlier stages: ../2026-11-25-session18/dev_call.sh)
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/$CISPMV_COMMIT JOBS=16
mkdir -p $RES
CLI=build/cuda/src/app/cispmv
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
s=$(date +%s)
build() {
  TARGETS="$1" timeout $2 bash perf/run_on_device.sh build > /dev/null || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
  echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
}
ci() {  # tag, then cispmv ci arguments
  local tag=$1; shift
  /usr/bin/time -v timeout 120 $CLI ci "$@" --json $RES/ci-$tag.json > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
  echo "ci $tag ($*): rc $?" | tee -a $RES/log.txt
  grep -E "^timings|^total" $RES/ci-$tag.txt | tee -a $RES/log.txt
}
case "$1" in
  s19a)  # session 19: build tests, cli and bench; csell's staged band on paper32k-1; the CUDA tests
    build "cispmv_test_cuda cispmv_cli spmv_bench" 470
    bash $0 band; pack
    timeout $(( 585 - ($(date +%s) - s) )) build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    tail -4 $RES/test-cuda.txt; pack ;;
  band)  # session 19: csell's vector shape with x's band in team scratch against unstaged, paper32k-1
    B=build/cuda/perf/spmv_bench
    show() { grep -E "median" $1 | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2, $NF}' | sed 's/iterations:[0-9]*\/repeats:[0-9]*\/manual_time_median//' ; }
    timeout 120 $B --matrix paper32k-1 --iterations 20 --repetitions 5 --out-dir $RES/paper$2 \
      --benchmark_filter='kokkos-kernels/native|cusparse-csr/default|cusparse-sell|csell/automatic|csell/vector/lanes:4/iter|csell/vector/lanes:4/band' > $RES/paper$2.txt 2>&1; echo "paper$2 rc $?" | tee -a $RES/log.txt
    show $RES/paper$2.txt | tee -a $RES/log.txt ;;
  ci)  # cispmv ci on the all-electron and the frozen-core full CI, 1, 5 and 10 roots, twice each
    AE="unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    for rep in a b; do
      for r in 1 5 10; do ci roots$r$rep $AE --roots $r; pack; done
    done
    for r in 1 5; do ci fcroots$r unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps --roots $r; done ;;
esac
pack
