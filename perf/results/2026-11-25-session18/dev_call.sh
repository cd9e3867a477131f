#!/usr/bin/env bash
# one device call (copied to the repository root for the call, not committed there): sessions 17-18
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
  sym)  # session 18: csell of the upper triangle with the transpose scattered (perf/sym_exp.cpp, experiment)
    build sym_exp 400
    X=build/cuda/perf/sym_exp
    timeout 60 $X fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps 50 > $RES/sym-fc.txt 2>&1; echo "sym fc rc $?" | tee -a $RES/log.txt
    cat $RES/sym-fc.txt; pack
    timeout 90 ncu --csv --metrics gpu__time_duration.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
      -k regex:csell_rows --launch-count 30 $X fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps 1 > $RES/sym-fc-ncu.csv 2>&1; echo "ncu rc $?"
    python3 - $RES/sym-fc-ncu.csv <<'PY' | tee $RES/sym-fc-ncu-summary.txt
import csv, sys, collections
v = collections.defaultdict(list)
for row in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if len(row) < 15 or row[0] == 'ID': continue
    mode = row[4].split('csell_rows<')[1][0] if 'csell_rows<' in row[4] else row[4][:30]
    v[(mode, row[-3], row[-2])].append(float(row[-1].replace(',', '')))
for (mode, m, u), xs in sorted(v.items()):
    xs.sort(); print(f"mode {mode} {m:60s} {u:10s} median {xs[len(xs)//2]:,.2f} ({len(xs)} launches)")
PY
    pack
    left=$(( 590 - ($(date +%s) - s) ))
    timeout $left $X fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps 10 > $RES/sym-ae.txt 2>&1; echo "sym ae rc $?" | tee -a $RES/log.txt
    cat $RES/sym-ae.txt ;;
  ncu2)  # session 18: the Davidson's two largest kernels, full ncu sections, one launch each (--roots 10, all-electron)
    [ -x $CLI ] || build "cispmv_cli" 470
    for k in BlockDotsTeam combine; do
      timeout 200 ncu --set full -k regex:$k --launch-skip 6 --launch-count 1 $CLI ci unit_tests/data/h2o_631g.fcidump --level 10 \
        --all-irreps --roots 10 > $RES/ncu-$k.txt 2>&1; echo "ncu $k rc $?" | tee -a $RES/log.txt
      grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Block Size|Grid Size|Compute \(SM\) Throughput|Executed Ipc A|Stall|Local Memory" $RES/ncu-$k.txt | head -40
      pack
    done ;;
  ci2)  # session 18: cispmv ci with the projected eigenproblems per block and whole (CISPMV_EXP_WHOLE_G)
    AE="unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    for v in split whole split2 whole2; do
      case $v in whole*) export CISPMV_EXP_WHOLE_G=1 ;; *) unset CISPMV_EXP_WHOLE_G ;; esac
      ci roots10$v $AE --roots 10; pack
    done
    unset CISPMV_EXP_WHOLE_G
    for r in 1 5; do ci roots$r $AE --roots $r; done
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
      --all-irreps --roots 10 > $RES/ncu-kernels$2.csv 2> $RES/ncu-kernels$2.err; echo "ncu rc $?"
    python3 - $RES/ncu-kernels$2.csv <<'PY' | tee $RES/ncu-kernels$2-summary.txt
import csv, re, sys, collections
t = collections.defaultdict(float); n = collections.Counter()
for row in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if len(row) < 15 or row[-3] != 'gpu__time_duration.sum': continue
    name = row[4]
    m = re.search(r'solvers::impl::(\w+)', name)
    key = m.group(1) if m else name[:60]
    v = float(row[-1].replace(',', '')); unit = row[-2]
    t[key] += v / (1e3 if unit in ('ns', 'nsecond') else 1 if unit in ('us', 'usecond') else 1e-3); n[key] += 1
for k, v in sorted(t.items(), key=lambda x: -x[1]): print(f"{k:40s} {n[k]:5d} launches {v/1e3:9.3f} ms total {v/n[k]:9.1f} us each")
PY
    ;;
esac
pack
