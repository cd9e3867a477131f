#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): session 17
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
  tests)  # the CUDA tests, then the Davidson runs
    build "cispmv_test_cuda cispmv_cli" 480
    timeout $(( 560 - ($(date +%s) - s) )) build/cuda/unit_tests/cispmv_test_cuda > $RES/test-cuda.txt 2>&1; echo "tests rc $?" | tee -a $RES/log.txt
    tail -4 $RES/test-cuda.txt; pack ;;
  all)  # the second version: the CUDA tests, the Davidson runs, the kernels' durations
    bash $0 tests && bash $0 ci && bash $0 kernels ;;
  ci)  # cispmv ci on the all-electron and the frozen-core full CI, 1, 5 and 10 roots, twice each
    AE="unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    for rep in a b; do
      for r in 1 5 10; do ci roots$r$rep $AE --roots $r; pack; done
    done
    for r in 1 5; do ci fcroots$r unit_tests/data/h2o_631g_fc.fcidump --level 8 --all-irreps --roots $r; done ;;
  pad)  # X's rows padded (CISPMV_EXP_XPAD) against unpadded, block products, same binary
    build spmv_bench 470
    B=build/cuda/perf/spmv_bench
    FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
    AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
    BF='block/k:(8|16)/csell-inline-sorted/lanes/|device/csell/automatic/lanes:1/sort:64/'
    show() { grep -E "median" $1 | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1, $2, $NF}' | head -20; }
    for v in plain pad plain2 pad2; do
      case $v in pad*) export CISPMV_EXP_XPAD=1 ;; *) unset CISPMV_EXP_XPAD ;; esac
      timeout 40 $B --matrix $FC --iterations 20 --repetitions 3 --vectors 8,16 --out-dir $RES/fc-$v --benchmark_filter="$BF" > $RES/fc-$v.txt 2>&1; echo "fc $v: rc $?"
      show $RES/fc-$v.txt; pack
    done
    for v in plain pad; do
      left=$(( 585 - ($(date +%s) - s) )); [ $left -lt 40 ] && break
      case $v in pad*) export CISPMV_EXP_XPAD=1 ;; *) unset CISPMV_EXP_XPAD ;; esac
      timeout $left $B --matrix $AE --iterations 10 --repetitions 3 --vectors 8 --out-dir $RES/ae-$v --benchmark_filter='block/k:8/csell-inline-sorted/lanes/' > $RES/ae-$v.txt 2>&1; echo "ae $v: rc $?"
      show $RES/ae-$v.txt; pack
    done ;;
  kernels)  # each Davidson kernel's GPU time in one --roots 10 run (ncu: durations only), by kind
    [ -x $CLI ] || build "cispmv_cli" 470
    timeout $(( 580 - ($(date +%s) - s) )) ncu --csv --metrics gpu__time_duration.sum --kernel-name-base demangled \
      -k regex:solvers --launch-skip 200 --launch-count 700 $CLI ci unit_tests/data/h2o_631g.fcidump --level 10 \
      --all-irreps --roots 10 > $RES/ncu-kernels.csv 2> $RES/ncu-kernels.err; echo "ncu rc $?"
    python3 - $RES/ncu-kernels.csv <<'PY' | tee $RES/ncu-kernels-summary.txt
import csv, re, sys, collections
t = collections.defaultdict(float); n = collections.Counter()
for row in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if len(row) < 15 or row[-3] != 'gpu__time_duration.sum': continue
    name = row[4]
    m = re.search(r'solvers::impl::(\w+)', name)
    key = m.group(1) if m else name[:60]
    v = float(row[-1].replace(',', '')); unit = row[-2]
    t[key] += v / (1e3 if unit == 'nsecond' else 1 if unit == 'usecond' else 1e-3); n[key] += 1
for k, v in sorted(t.items(), key=lambda x: -x[1]): print(f"{k:40s} {n[k]:5d} launches {v/1e3:9.3f} ms total {v/n[k]:9.1f} us each")
PY
    ;;
esac
pack
