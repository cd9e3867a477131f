#!/usr/bin/env bash
# Packs the GPU programs built here for a GPU host, so that a run there starts at once instead of spending its first
# minutes on a cold build (bootstrap + spmv_bench + the CUDA tests take ~500 s on 16 cores).
#
#   [TARGETS="spmv_bench ..."] perf/pack_binaries.sh [PRESET] [FILE]   # default: cuda, .device/<preset>-bin.tar.xz
#   TARGETS=all perf/pack_binaries.sh [PRESET] [FILE]                   # the whole test suite (ctest --preset)
#
# Builds spmv_bench, cispmv and cispmv_test_cuda (or TARGETS of them) of the preset's tree (build/<preset>,
# configured: `cmake --preset`), strips them, and packs them with a PACKED note (commit, source folder, date). With
# TARGETS=all it builds everything and packs the build tree without its objects, and the preset's Kokkos
# (.deps/<preset>/install, for the installed-tree consumers), so that `ctest --preset PRESET` runs there.
# perf/run_on_device.sh's `prebuilt` stage unpacks them (PREBUILT=FILE) and links the source folder the build
# recorded to the checkout there. Only where both machines are x86-64 with the same CUDA major and the preset's Kokkos
# arch is the GPU's (HOPPER90 for H100 / H200); the programs link cuSPARSE and the CUDA runtime dynamically, Kokkos
# and Kokkos Kernels statically.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
preset=${1:-cuda}
out=${2:-.device/$preset-bin.tar.xz}
tree=build/$preset
[ -f "$tree/CMakeCache.txt" ] || { echo "pack_binaries: $tree is not configured (cmake --preset $preset)" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "pack_binaries: this machine is $(uname -m); the GPU host is x86-64" >&2; exit 1; }
targets=${TARGETS:-spmv_bench cispmv_cli cispmv_test_cuda}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$targets" = all ]; then
  cmake --build "$tree"
  # the tree as ctest and the consumers' install step read it: executables, libraries, CMake's scripts and exports
  mkdir -p "$tmp/$tree"
  (cd "$tree" && find . -type f ! -name '*.o' ! -name '*.d' ! -name '.ninja_*' ! -path '*/CMakeFiles/*.dir/*' \
    ! -path './consumer-*' -print0 | tar cf - --null -T -) | tar xf - -C "$tmp/$tree"
  find "$tmp/$tree" -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip "$1"' _ {} \;
  mkdir -p "$tmp/.deps/$preset"
  cp -a ".deps/$preset/install" "$tmp/.deps/$preset/"
  programs=""  # (those the tree has: a tree configured with CISPMV_ENABLE_PERF=OFF has no spmv_bench)
  for p in src/app/cispmv perf/spmv_bench; do [ ! -f "$tree/$p" ] || programs="$programs $p"; done
else
  cmake --build "$tree" --target $targets
  programs=""
  for t in $targets; do
    case $t in
      spmv_bench) p=perf/spmv_bench ;;
      cispmv_cli) p=src/app/cispmv ;;
      cispmv_test_cuda) p=unit_tests/cispmv_test_cuda ;;
      *) echo "pack_binaries: unknown target '$t' (spmv_bench, cispmv_cli, cispmv_test_cuda, or all)" >&2; exit 1 ;;
    esac
    programs="$programs $p"
    mkdir -p "$tmp/$tree/$(dirname "$p")"
    strip -o "$tmp/$tree/$p" "$tree/$p"
  done
fi
# shared libraries of this distribution's packages that a CUDA host may lack (Google Benchmark, fmt): packed beside
# the programs; `prebuilt` installs those the host has not (the CUDA driver, libcuda.so.1, is the GPU host's)
mkdir -p "$tmp/$tree/lib"
missing() { for p in $programs; do ldd "$tree/$p"; done | grep "not found" | grep -v "libcuda\.so" || true; }
if [ -n "$(missing)" ]; then
  echo "pack_binaries: libraries not found here:" >&2
  missing >&2
  exit 1
fi
for p in $programs; do ldd "$tree/$p"; done | awk '$3 ~ /^\// {print $3}' |
  sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux* | libstdc++.so* | libgcc_s.so* | \
        libgomp.so* | libcuda*.so* | libcusparse*.so* | libcublas*.so* | libnvJitLink*.so* | libmpi*.so* | libopen-*.so*) ;;
      *) cp -L "$lib" "$tmp/$tree/lib/" ;;
    esac
  done
{
  echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- include src perf unit_tests || echo ' with uncommitted changes')"
  echo "source $PWD"
  echo "preset $preset"
  echo "targets $targets"
  echo "host flags $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$tree/CMakeCache.txt") $(sed -n 's/^CMAKE_CXX_FLAGS_RELEASE:STRING=//p' "$tree/CMakeCache.txt")"
  echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$tmp/$tree/PACKED"
mkdir -p "$(dirname "$out")"
tar cJf "$out" -C "$tmp" build $([ "$targets" = all ] && echo .deps)  # (not ".": the folder's mode would land there)
echo "pack_binaries: $out ($(du -h "$out" | cut -f1)): $(tr '\n' ';' <"$tmp/$tree/PACKED")"
# host code below -O2 (a tree configured to build faster) slows Kokkos' launch path, which a product waits on (H100:
# the frozen core's factored product 0.131-0.144 ms at -O0 against 0.122-0.123 at -O3, the kernels the same)
if grep -qE '^host flags .*-O[01]( |$)' "$tmp/$tree/PACKED"; then
  echo "pack_binaries: warning: host code at -O0/-O1: fine for the tests, not for timings" >&2
fi
