#!/usr/bin/env bash
# one device call (not committed): session 13
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-exp} RES=/tmp/res/$CISPMV_COMMIT JOBS=16
mkdir -p $RES
med() { sed 's/\x1b\[[0-9;]*m//g' "$1" | grep median | awk '{print $1, $2, $NF}' | sed 's|/iterations.*manual_time_median||'; }
B=build/cuda/perf/spmv_bench
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
pack() { tar czf $OUT/res.tgz -C /tmp res/$CISPMV_COMMIT; }
export OMP_PROC_BIND=spread OMP_PLACES=cores
case "$1" in
  base)
    s=$(date +%s)
    TARGETS="cispmv_test_cuda cispmv_cli" timeout 470 bash perf/run_on_device.sh build || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    C=build/cuda/src/app/cispmv
    for run in "--roots 1" "--roots 5" "--roots 1" "--roots 5" "--roots 5 --format csr"; do
      tag=$(echo "$run" | tr -d ' -'); [ -f $RES/ci-$tag.txt ] && tag=${tag}b
      /usr/bin/time -v timeout 40 $C ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps $run --json $RES/ci-$tag.json > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
      echo "ci $run: rc $?"; grep -E "Elapsed|Maximum resident" $RES/ci-$tag.time; grep -E "^automatic|^timings|^total|davidson|iterations" $RES/ci-$tag.txt | cut -c1-300
    done; pack
    left=$(( 585 - ($(date +%s) - s) ))
    [ $left -gt 20 ] && { timeout $left build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt; grep -E "FAILED|PASSED" $RES/test-cuda.txt | tail -8; } ;;
  guard)
    s=$(date +%s)
    TARGETS="cispmv_test_cuda cispmv_cli" timeout 470 bash perf/run_on_device.sh build || { tail -5 $RES/log.txt; tail -3 $RES/build.txt; pack; exit 1; }
    echo "build took $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; rm -f $RES/bootstrap.txt
    C=build/cuda/src/app/cispmv
    for run in "--roots 1" "--roots 5" "--roots 1" "--roots 5" "--roots 10" "--roots 5 --format csr"; do
      tag=$(echo "$run" | tr -d ' -'); [ -f $RES/ci-$tag.txt ] && tag=${tag}b
      /usr/bin/time -v timeout 40 $C ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps $run --json $RES/ci-$tag.json > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
      echo "ci $run: rc $?"; grep -E "Elapsed|Maximum resident" $RES/ci-$tag.time; grep -E "^automatic|^timings|^total|iterations|irreps:|^ +[0-9]+ +-" $RES/ci-$tag.txt | cut -c1-300
    done; pack
    for run in "--roots 1" "--roots 5"; do
      tag=fc$(echo "$run" | tr -d ' -')
      /usr/bin/time -v timeout 30 $C ci unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps $run --json $RES/ci-$tag.json > $RES/ci-$tag.txt 2> $RES/ci-$tag.time
      echo "ci fc $run: rc $?"; grep -E "Elapsed" $RES/ci-$tag.time; grep -E "^timings|^total|iterations|irreps:|^ +[0-9]+ +-" $RES/ci-$tag.txt | cut -c1-300
    done; pack
    left=$(( 585 - ($(date +%s) - s) ))
    [ $left -gt 20 ] && { timeout $left build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt; grep -E "FAILED|PASSED" $RES/test-cuda.txt | tail -8; } ;;
esac
pack
