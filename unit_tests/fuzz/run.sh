#!/usr/bin/env bash
# Builds the three reader fuzzers (fuzz_readers.cpp) with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each on a copy of its committed corpus for SECONDS seconds.
# A crash, a sanitizer report, a leak or a timeout fails the script; the input that did it is kept
# in OUT (printed), so it can become a test.
#
#   unit_tests/fuzz/run.sh [SECONDS per reader, default 60] [OUT folder, default build/fuzz]
#
# Needs clang++ with libFuzzer (Debian: clang-14, libclang-rt-14-dev) and the Kokkos that
# cmake/bootstrap.sh installed in .deps/openmp (the readers return Kokkos Views); the sources are
# compiled here directly, with the build's generated headers from build/openmp/include.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
seconds=${1:-60}
out=${2:-$top/build/fuzz}
cxx=${CLANGXX:-$(command -v clang++ || command -v clang++-14 || true)}
[ -n "$cxx" ] || { echo "fuzz/run.sh: clang++ is not installed (Debian: clang-14 libclang-rt-14-dev)" >&2; exit 2; }
kokkos="$top/.deps/openmp/install"
[ -f "$kokkos/lib/libkokkoscore.a" ] || { echo "fuzz/run.sh: no Kokkos in $kokkos (run cmake/bootstrap.sh)" >&2; exit 2; }
[ -f "$top/build/openmp/include/cispmv/version.hpp" ] || { echo "fuzz/run.sh: configure the openmp preset first" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)  # the fuzzers run inside it
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fopenmp -I"$top/include" -I"$top/build/openmp/include" -isystem "$kokkos/include")
libs=("$kokkos/lib/libkokkoscore.a" -ldl -lpthread)
spmv_sources=("$top/src/spmv/io_matrix_market.cpp" "$top/src/spmv/io_binary.cpp" "$top/src/spmv/memory_budget.cpp")
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1}
status=0
# build the three, then run them side by side (each single-threaded: SECONDS of wall time each, the
# whole stage SECONDS long instead of 3 x SECONDS)
corpus_of() { case $1 in matrix_market) echo mtx ;; binary) echo cispmv ;; fcidump) echo fcidump ;; esac; }
for target in matrix_market binary fcidump; do
  case $target in
    matrix_market) define=CISPMV_FUZZ_MATRIX_MARKET sources=("${spmv_sources[@]}") ;;
    binary) define=CISPMV_FUZZ_BINARY sources=("${spmv_sources[@]}") ;;
    fcidump) define=CISPMV_FUZZ_FCIDUMP sources=("$top/src/ci/fcidump.cpp") ;;
  esac
  echo "=== fuzz_$target: build"
  "$cxx" "${flags[@]}" -D$define "$top/unit_tests/fuzz/fuzz_readers.cpp" "${sources[@]}" "${libs[@]}" -o "$out/fuzz_$target"
done
pids=()
for target in matrix_market binary fcidump; do
  corpus=$(corpus_of $target)
  work="$out/corpus-$target"
  rm -rf "$work" && mkdir -p "$work" && cp "$top/unit_tests/fuzz/corpus/$corpus"/* "$work"/
  echo "=== fuzz_$target: $seconds s on $(ls "$work" | wc -l) seed inputs"
  (cd "$out" && "$out/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -print_final_stats=1 "$work" 2>"$out/fuzz_$target.log") &
  pids+=($!)
done
i=0
for target in matrix_market binary fcidump; do
  corpus=$(corpus_of $target)
  work="$out/corpus-$target"
  if ! wait "${pids[$i]}"; then
    echo "fuzz/run.sh: fuzz_$target FAILED; the end of its log ($out/fuzz_$target.log):" >&2
    tail -40 "$out/fuzz_$target.log" >&2
    ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* 2>/dev/null >&2 || true
    status=1
  else
    echo -n "fuzz_$target: "
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/fuzz_$target.log" | tr '\n' ' '
    echo "new corpus entries: $(( $(ls "$work" | wc -l) - $(ls "$top/unit_tests/fuzz/corpus/$corpus" | wc -l) ))"
  fi
  i=$((i + 1))
done
exit $status
