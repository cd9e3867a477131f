#!/usr/bin/env bash
# Builds, tests and times cispmv on a GPU host in one go, writing what a curated result set holds
# (perf/results/<date>-<device>-<what>/): the test log, the benchmark JSON and tables, the `cispmv ci` runs.
#
#   perf/run_on_device.sh STAGE...     stages, in the order given:
#     build      Kokkos from KOKKOS_TGZ (made by `cmake/bootstrap.sh --pack`: a GPU host may reach no package
#                registry), then the PRESET's configure and build (TARGETS: only these targets)
#     prebuilt   unpack programs built on another x86-64 host instead (PREBUILT, made by perf/pack_binaries.sh)
#     test       ctest --preset PRESET (every test, the installed-tree consumers included)
#     bench      spmv_bench on the four matrices of the performance table: H2O/6-31G full CI (all-electron, frozen
#                core), paper32k-1, scaled-1048576; each against Kokkos Kernels and cuSPARSE CSR and SELL
#     ci         `cispmv ci` end to end under /usr/bin/time: the H2O/6-31G full CI (1 and 5 roots), its frozen core,
#                H2O/6-31G(d) frozen core and all-electron full CI, and each FCIDUMP of CI_EXTRA (e.g. the Olsen
#                H2O/cc-pVDZ file that perf/make_olsen_fcidump.py writes)
#     report     perf/report.py's tables of the benchmark JSON
#
# Environment: RES (results folder, default perf/out), PRESET (default cuda; cuda-kokkos4 for Kokkos 4.6), ARCH
# (Kokkos arch, default HOPPER90), KOKKOS_TGZ (default .deps/kokkos-src.tgz; .deps/kokkos4-src.tgz for Kokkos 4),
# PREBUILT (default .device/<preset>-bin.tar.xz), JOBS, CISPMV_COMMIT (recorded in the reports), CI_EXTRA.
# Each stage appends to $RES/log.txt. Profiling commands (ncu, nsys, compute-sanitizer): docs/performance.md.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RES=${RES:-perf/out}
PRESET=${PRESET:-cuda}
ARCH=${ARCH:-HOPPER90}
KOKKOS_TGZ=${KOKKOS_TGZ:-.deps/kokkos-src.tgz}
PREBUILT=${PREBUILT:-.device/$PRESET-bin.tar.xz}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$RES"
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-cores}
bench=build/$PRESET/perf/spmv_bench
cli=build/$PRESET/src/app/cispmv
data=unit_tests/data
log() { echo "=== $(date -u +%H:%M:%S) $*" | tee -a "$RES/log.txt"; }
rc() { echo "$1: exit code $2" | tee -a "$RES/log.txt"; }

build() {
  log "device"; nvidia-smi | tee "$RES/nvidia-smi.txt"
  local kokkos=3
  case "$PRESET" in *kokkos4) kokkos=4 ;; esac
  log "bootstrap Kokkos ($ARCH, Kokkos $kokkos)"
  bash cmake/bootstrap.sh --preset "${PRESET%-kokkos4}" --kokkos "$kokkos" --arch "$ARCH" --source "$KOKKOS_TGZ" \
    --jobs "$JOBS" >"$RES/bootstrap.txt" 2>&1 || { tail -30 "$RES/bootstrap.txt"; exit 1; }
  log "configure + build ($PRESET preset)"
  cmake --preset "$PRESET" >"$RES/configure.txt" 2>&1 || { tail -30 "$RES/configure.txt"; exit 1; }
  # shellcheck disable=SC2086  # TARGETS is a list
  cmake --build --preset "$PRESET" --parallel "$JOBS" ${TARGETS:+--target $TARGETS} >"$RES/build.txt" 2>&1 ||
    { grep -B2 -A8 error "$RES/build.txt" | head -60; exit 1; }
  log "built"
}

# programs built on another x86-64 host (no build here: a call's minutes go to runs)
prebuilt() {
  log "device"; nvidia-smi | tee "$RES/nvidia-smi.txt"
  local f tree lib name p
  for f in $PREBUILT; do
    log "unpack $f"
    # (grep reads the whole listing: stopping at the first match would end tar with SIGPIPE, a failure under pipefail)
    tree=$(tar tJf "$f" | grep -oE '^(\./)?build/[^/]+/PACKED$') || { echo "$f: no build/<preset>/PACKED"; exit 1; }
    tree=${tree%%$'\n'*}
    tar xJf "$f" || exit 1
    tee -a "$RES/log.txt" <"$tree"
    # the build's absolute paths (the tests' data, ctest's files) reach this checkout through a link
    p=$(sed -n 's/^source //p' "$tree")
    if [ "$p" != "$PWD" ] && [ ! -e "$p" ]; then mkdir -p "$(dirname "$p")" && ln -s "$PWD" "$p" || exit 1; fi
    # and ctest runs CMake and CTest by the paths the build recorded (the consumers' install and builds): this host's
    for tool in cmake:CMAKE_COMMAND ctest:CMAKE_CTEST_COMMAND; do
      p=$(sed -n "s/^${tool#*:}:INTERNAL=//p" "$(dirname "$tree")/CMakeCache.txt" 2>/dev/null)
      if [ -n "$p" ] && [ ! -e "$p" ] && command -v "${tool%%:*}" >/dev/null; then
        mkdir -p "$(dirname "$p")" && ln -s "$(command -v "${tool%%:*}")" "$p" || exit 1
      fi
    done
    for lib in "$(dirname "$tree")"/lib/*; do  # (the packed libraries this host has not)
      name=$(basename "$lib")  # (awk reads all of ldconfig's list: no early exit for pipefail to see)
      [ -e "$lib" ] && ! ldconfig -p | awk -v n="$name" '$1 == n {f = 1} END {exit !f}' &&
        cp "$lib" /usr/local/lib/ && echo "installed $name"
    done
    ldconfig
  done
  log "unpacked"
}

run_bench() {  # tag, matrix, filter, iterations
  "$bench" --matrix "$2" --iterations "$4" --repetitions 5 --out-dir "$RES" --benchmark_filter="$3" \
    >"$RES/bench-$1.txt" 2>&1
  rc "bench $1" $?
}

bench() {
  local base='kokkos-kernels/native|cusparse-csr/default|cusparse-sell'
  local fci="$base|ci-factored/(iter|alpha-beta/iter|same-spin/iter)|csell/automatic/lanes:1/sort:64/"
  log "spmv_bench: the four matrices of the performance table"
  run_bench fc "fcidump:$data/h2o_631g_fc.fcidump:8:all-irreps" "$fci" 20
  run_bench ae "fcidump:$data/h2o_631g.fcidump:10:all-irreps" "$fci" 10
  run_bench paper32k-1 paper32k-1 "$base|csell/automatic/|hybrid/vector/iter|hybrid16/vector/iter" 20
  run_bench scaled scaled-1048576 "$base|csell/automatic/lanes:1/sort:1024/" 10
}

run_ci() {  # tag, cispmv ci arguments
  local tag=$1
  shift
  /usr/bin/time -v "$cli" ci "$@" --json "$RES/ci-$tag.json" >"$RES/ci-$tag.txt" 2>"$RES/ci-$tag.time"
  rc "ci $tag ($*)" $?
  grep -E "Elapsed|Maximum resident" "$RES/ci-$tag.time" | tee -a "$RES/log.txt"
  grep -E "^automatic|^memory plan|^timings|^total|^     [1-5] " "$RES/ci-$tag.txt" | tee -a "$RES/log.txt"
}

ci() {
  log "cispmv ci end to end"
  run_ci h2o_631g "$data/h2o_631g.fcidump" --level 10 --all-irreps
  run_ci h2o_631g-roots5 "$data/h2o_631g.fcidump" --level 10 --all-irreps --roots 5
  run_ci h2o_631g_fc "$data/h2o_631g_fc.fcidump" --level 8 --all-irreps
  run_ci h2o_631gd_fc "$data/h2o_631gd_fc.fcidump" --level 8 --all-irreps
  run_ci h2o_631gd "$data/h2o_631gd.fcidump" --level 10 --all-irreps
  local f
  for f in ${CI_EXTRA:-}; do run_ci "$(basename "$f" .fcidump)" "$f" --level 99; done
}

for stage in "$@"; do
  case "$stage" in
    build) build ;;
    prebuilt) prebuilt ;;
    test)
      log "ctest --preset $PRESET"
      ctest --preset "$PRESET" 2>&1 | tee "$RES/ctest.txt" | tail -15 ;;
    bench) bench ;;
    ci) ci ;;
    report)
      log "report"
      python3 perf/report.py "$RES" --commit "${CISPMV_COMMIT:-unknown}" --date "$(date -u +%F)" \
        --command "perf/run_on_device.sh $*" >"$RES/report.txt" 2>&1
      tail -40 "$RES/report.txt" ;;
    *) echo "run_on_device.sh: unknown stage $stage (build prebuilt test bench ci report)" >&2; exit 2 ;;
  esac
done
