#!/usr/bin/env bash
# One entry point for a fresh machine: installs what is missing, builds Kokkos/Kokkos Kernels
# (cmake/bootstrap.sh), configures and builds cispmv with a CMake preset, then does one job.
#
#   cmake/dev.sh [--preset openmp|cuda|k20] [--kokkos 3|4] [--arch ARCH] [--source DIR|TGZ] run [cispmv run options]
#   cmake/dev.sh [--preset ...] test [ctest options]
#   cmake/dev.sh [--preset ...] build
#   cmake/dev.sh [--preset ...] cli [any cispmv command line]
#
# `run` is the main job (the cispmv program on its built-in default matrix: only the program is built), `test` the
# test suite (everything is built), `build` everything, `cli` the program with any command line.
# --kokkos 4 builds against Kokkos 4.6.01 + Kokkos Kernels 4.6.02 (preset <preset>-kokkos4; --source
# names the release archives, e.g. ../shared/deps); the default is Kokkos 3.4.01.
# With Kokkos_ROOT and KokkosKernels_ROOT set, the installed Kokkos is used instead of .deps/.
# CISPMV_CMAKE_ARGS (e.g. "-DCISPMV_WARNINGS_AS_ERRORS=ON", as CI sets it) goes to the configure step.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

preset=openmp
kokkos=3
boot_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset=${2:?}; boot_args+=(--preset "$2"); shift 2 ;;
    --kokkos) kokkos=${2:?}; boot_args+=(--kokkos "$2"); shift 2 ;;
    --arch|--source|--kokkos-source|--jobs) boot_args+=("$1" "${2:?}"); shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
job=${1:-}
[ -n "$job" ] || { sed -n '2,16p' "$0"; exit 2; }
shift

# System packages: the build tools and the libraries cispmv's tests, benchmarks and CLI use.
need=()
have_header() { [ -e "/usr/include/$1" ] || [ -e "/usr/local/include/$1" ]; }
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
command -v patch >/dev/null || need+=(patch)
have_header gtest/gtest.h || need+=(libgtest-dev)
have_header benchmark/benchmark.h || need+=(libbenchmark-dev)
have_header CLI/CLI.hpp || need+=(libcli11-dev)
have_header fmt/format.h || need+=(libfmt-dev)
have_header nlohmann/json.hpp || need+=(nlohmann-json3-dev)
command -v mpicxx >/dev/null && command -v mpiexec >/dev/null || need+=(libopenmpi-dev openmpi-bin)  # CiSpmv::mpi
if [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "dev.sh: installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "dev.sh: error: missing ${need[*]}; install them (Debian/Ubuntu package names) and retry" >&2
    exit 1
  fi
fi

# ccache where the machine has it (not installed here): a unit whose preprocessed source and flags it has seen is not
# compiled again, also in another clone (paths under the clone's parent are hashed relative to it). Set for the first
# configure of a build directory (Kokkos' in bootstrap.sh, then cispmv's); CMAKE_CXX_COMPILER_LAUNCHER= turns it off.
if command -v ccache >/dev/null && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER+set}" ]; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$top")}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  export CCACHE_COMPILERCHECK="${CCACHE_COMPILERCHECK:-content}"  # (Kokkos' nvcc_wrapper is installed anew per clone)
fi

if [ -z "${Kokkos_ROOT:-}" ] || [ -z "${KokkosKernels_ROOT:-}" ]; then
  bash "$top/cmake/bootstrap.sh" "${boot_args[@]}"
fi

case "$kokkos" in
  3|3.4|3.4.01) ;;
  4|4.6|4.6.01) preset="$preset-kokkos4" ;;
  *) echo "dev.sh: unknown --kokkos '$kokkos' (3 or 4)" >&2; exit 2 ;;
esac
jobs=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
# shellcheck disable=SC2086  # CISPMV_CMAKE_ARGS is a list of arguments
cmake --preset "$preset" ${CISPMV_CMAKE_ARGS:-} >/dev/null
# the main job and the command line need the program alone; the tests need everything
case "$job" in
  run|cli) cmake --build --preset "$preset" --parallel "$jobs" --target cispmv_cli ;;
  *) cmake --build --preset "$preset" --parallel "$jobs" ;;
esac

case "$job" in
  build) ;;
  run) "build/$preset/src/app/cispmv" run "$@" ;;
  cli) "build/$preset/src/app/cispmv" "$@" ;;
  test) ctest --preset "$preset" "$@" ;;
  *) echo "dev.sh: unknown job '$job' (run, test, build or cli)" >&2; exit 2 ;;
esac
