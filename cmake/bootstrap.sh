#!/usr/bin/env bash
# Builds and installs the dependencies of cispmv -- Kokkos and Kokkos Kernels -- into
# .deps/<preset>/install (Kokkos 3.4.01, the default) or .deps/<preset>-kokkos4/install (4.6.01).
#
#   cmake/bootstrap.sh [--preset openmp|cuda|k20] [--kokkos 3|4] [--arch ARCH] [--source DIR|TGZ] [--jobs N]
#   cmake/bootstrap.sh [--kokkos 3|4] --pack FILE.tgz   # pack the patched sources (to carry to a GPU host)
#
# Versions (--kokkos, or $CISPMV_KOKKOS):
#   3 (3.4.01, default): Kokkos 3.4.01 + Kokkos Kernels 3.4.01 from Debian's trilinos 13.2.0 sources.
#   4 (4.6.01): Kokkos 4.6.01 + Kokkos Kernels 4.6.02, the upstream release archives; no registry
#     offers them, so --source names them: a folder holding kokkos-4.6.01.tgz and
#     kokkos-kernels-4.6.02.tgz (e.g. ../shared/deps), a folder holding kokkos/ and kokkos-kernels/,
#     or a --pack tarball.
#
# Where the sources come from, first match wins:
#   1. --source DIR|TGZ (alias --kokkos-source; or $CISPMV_KOKKOS_SOURCE): as above; for 3.4.01 a
#      folder holding kokkos/ and kokkos-kernels/ (e.g. Trilinos' packages/) or a --pack tarball.
#      Used on hosts without a package registry.
#   2. .deps/src (3.4.01) or .deps/src-4.6.01, extracted and patched by an earlier run.
#   3. 3.4.01 only: `apt-get source trilinos`, through a private apt state under .deps/apt: the deb-src
#      entries are derived from this machine's own Debian entries (same URIs and suites), so no host
#      name is written anywhere and the system's apt configuration is left untouched. Only
#      packages/kokkos and packages/kokkos-kernels are extracted.
# The patches in cmake/patches/kokkos-<version>/ are applied once (each file says why it exists).
#
# If Kokkos_ROOT and KokkosKernels_ROOT are set (an existing, e.g. Trilinos, installation) nothing is
# built: CMake finds those through find_package.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=openmp
arch=""
source_arg="${CISPMV_KOKKOS_SOURCE:-}"
kokkos_major="${CISPMV_KOKKOS:-3}"
jobs=$(nproc)
pack=""

die() { echo "bootstrap: error: $*" >&2; exit 1; }
note() { echo "bootstrap: $*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset=${2:?--preset needs a value}; shift 2 ;;
    --arch) arch=${2:?--arch needs a value}; shift 2 ;;
    --source|--kokkos-source) source_arg=${2:?$1 needs a value}; shift 2 ;;
    --kokkos) kokkos_major=${2:?--kokkos needs 3 or 4}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a value}; shift 2 ;;
    --pack) pack=${2:?--pack needs a file name}; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

case "$kokkos_major" in
  3|3.4|3.4.01) kokkos_version=3.4.01 kernels_version=3.4.01 suffix="" ;;
  4|4.6|4.6.01) kokkos_version=4.6.01 kernels_version=4.6.02 suffix="-kokkos4" ;;
  *) die "unknown --kokkos '$kokkos_major': expected 3 (3.4.01) or 4 (4.6.01)" ;;
esac

case "$preset" in
  openmp) ;;
  cuda) arch=${arch:-HOPPER90} ;;
  k20) arch=${arch:-KEPLER35} ;;
  *) die "unknown preset '$preset': expected openmp, cuda or k20" ;;
esac

if [ -n "${Kokkos_ROOT:-}" ] && [ -n "${KokkosKernels_ROOT:-}" ] && [ -z "$pack" ]; then
  note "Kokkos_ROOT=$Kokkos_ROOT and KokkosKernels_ROOT=$KokkosKernels_ROOT are set: nothing to build."
  exit 0
fi

deps="$top/.deps"
patches="$top/cmake/patches/kokkos-$kokkos_version"
if [ "$kokkos_version" = 3.4.01 ]; then src="$deps/src"; else src="$deps/src-$kokkos_version"; fi
stamp="$src/.cispmv-patched"
patch_sum=$(cat "$patches"/*.patch | sha256sum | cut -c1-16)

# ---------------------------------------------------------------------------------------- sources
fetch_with_apt() {
  command -v apt-get >/dev/null || die "no --source given, no .deps/src, and apt-get is not available"
  local codename apt="$deps/apt" dl="$deps/download"
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "cannot read VERSION_CODENAME from /etc/os-release"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d" "$dl"
  rm -f "$apt"/sources.list.d/*
  # deb822 files: copy every stanza of type deb whose suites include this release, as deb-src.
  local f n=0
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    awk -v code="$codename" '
      function flush() { if (block != "" && isdeb && hascode) printf "%s\n", block; block=""; isdeb=0; hascode=0 }
      /^[[:space:]]*$/ { flush(); next }
      /^Types:/ { isdeb = ($0 ~ /(^|[[:space:]])deb([[:space:]]|$)/); block = block "Types: deb-src\n"; next }
      /^Suites:/ { if ($0 ~ ("(^|[[:space:]])" code "([[:space:]-]|$)")) hascode=1 }
      { block = block $0 "\n" }
      END { flush() }' "$f" >"$apt/sources.list.d/derived-$n.sources"
    n=$((n + 1))
  done
  # one-line files: "deb URI suite comp..." becomes "deb-src URI suite comp...".
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -e "$f" ] || continue
    grep -E "^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?[^[:space:]]+[[:space:]]+$codename([-/][^[:space:]]*)?[[:space:]]" "$f" |
      sed -E 's/^deb([[:space:]])/deb-src\1/' >"$apt/sources.list.d/derived-$n.list" || true
    n=$((n + 1))
  done
  grep -qsh . "$apt"/sources.list.d/* || die "found no Debian '$codename' entry in /etc/apt to derive a deb-src entry from"
  local opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
              -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Debug::NoLocking=1")
  note "fetching the trilinos source package (about 166 MB) with a private apt state in $apt"
  apt-get "${opts[@]}" -qq update || die "apt-get update (deb-src entries derived from /etc/apt) failed"
  (cd "$dl" && apt-get "${opts[@]}" -qq source --download-only trilinos) ||
    die "apt-get source trilinos failed"
  local orig
  orig=$(ls "$dl"/trilinos_13.2.0.orig.tar.* 2>/dev/null | head -n1)
  [ -n "$orig" ] || die "apt-get source did not deliver trilinos_13.2.0.orig.tar.*: found $(ls "$dl")"
  extract_orig "$orig"
}

extract_orig() {
  local orig=$1 tmp
  tmp=$(mktemp -d "$deps/extract.XXXX")
  note "extracting packages/kokkos and packages/kokkos-kernels from $(basename "$orig")"
  tar -xf "$orig" -C "$tmp" --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  rm -rf "$src"
  mkdir -p "$src"
  mv "$tmp"/*/packages/kokkos "$tmp"/*/packages/kokkos-kernels "$src"/
  rm -rf "$tmp"
}

use_given_source() {
  local given=$1
  local kt="$given/kokkos-$kokkos_version.tgz" kkt="$given/kokkos-kernels-$kernels_version.tgz"
  if [ -d "$given" ] && [ -f "$kt" ] && [ -f "$kkt" ]; then  # the two release archives
    note "extracting $(basename "$kt") and $(basename "$kkt") from $given"
    rm -rf "$src"; mkdir -p "$src"
    tar -xzf "$kt" -C "$src" || die "cannot extract '$kt'"
    tar -xzf "$kkt" -C "$src" || die "cannot extract '$kkt'"
    [ -d "$src/kokkos" ] && [ -d "$src/kokkos-kernels" ] || die "'$kt' and '$kkt' must hold kokkos/ and kokkos-kernels/"
  elif [ -f "$given" ]; then
    rm -rf "$src"; mkdir -p "$src"
    tar -xzf "$given" -C "$src" || die "cannot extract '$given'"
    # accept a tarball whose top level is one folder holding kokkos/ and kokkos-kernels/
    if [ ! -d "$src/kokkos" ]; then
      local inner; inner=$(find "$src" -mindepth 2 -maxdepth 3 -type d -name kokkos -print -quit)
      [ -n "$inner" ] || die "'$given' holds no kokkos/ folder"
      mv "$(dirname "$inner")"/kokkos "$(dirname "$inner")"/kokkos-kernels "$src"/
    fi
  elif [ -d "$given" ]; then
    [ -d "$given/kokkos" ] && [ -d "$given/kokkos-kernels" ] ||
      die "'$given' must hold kokkos/ and kokkos-kernels/ (e.g. Trilinos' packages/ folder), or kokkos-$kokkos_version.tgz and kokkos-kernels-$kernels_version.tgz"
    if [ "$(cd "$given" && pwd)" != "$src" ]; then
      rm -rf "$src"; mkdir -p "$src"
      cp -a "$given/kokkos" "$given/kokkos-kernels" "$src"/
    fi
  else
    die "--source '$given' is neither a folder nor a file"
  fi
}

apply_patches() {
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$patch_sum" ]; then return; fi
  [ ! -f "$stamp" ] || die "$src was patched with other patches (an old --pack tarball?); pack it again"
  local p
  for p in "$patches"/*.patch; do
    note "applying $(basename "$p")"
    patch -d "$src" -p1 -s -N <"$p" || die "patch $(basename "$p") does not apply to $src"
  done
  echo "$patch_sum" >"$stamp"
}

check_version() {
  if [ "$kokkos_version" = 3.4.01 ]; then
    grep -q "3.4.01" "$src/kokkos/master_history.txt" 2>/dev/null ||
      die "$src/kokkos is not Kokkos 3.4.01 (master_history.txt does not name it)"
  else
    local v
    v=$(sed -nE 's/^set\(Kokkos_VERSION_(MAJOR|MINOR|PATCH) ([0-9]+)\)/\2/p' "$src/kokkos/CMakeLists.txt" 2>/dev/null | paste -sd.)
    [ "$v" = "4.6.1" ] || die "$src/kokkos is not Kokkos $kokkos_version (its CMakeLists.txt says '${v:-nothing}')"
    grep -qE "KokkosKernels_VERSION_MINOR 6\)" "$src/kokkos-kernels/CMakeLists.txt" &&
      grep -qE "KokkosKernels_VERSION_PATCH 2\)" "$src/kokkos-kernels/CMakeLists.txt" ||
      die "$src/kokkos-kernels is not Kokkos Kernels $kernels_version"
  fi
}

mkdir -p "$deps"
if [ -n "$source_arg" ]; then
  use_given_source "$source_arg"
elif [ "$kokkos_version" != 3.4.01 ] && { [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$patch_sum" ]; }; then
  die "Kokkos $kokkos_version is not in any package registry: give its release archives with --source DIR (a folder holding kokkos-$kokkos_version.tgz and kokkos-kernels-$kernels_version.tgz, e.g. ../shared/deps)"
elif [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$patch_sum" ]; then
  # first run, or the patches changed: start again from pristine sources
  orig=$(ls "$deps"/download/trilinos_13.2.0.orig.tar.* 2>/dev/null | head -n1 || true)
  if [ -n "$orig" ]; then extract_orig "$orig"; else fetch_with_apt; fi
fi
check_version
apply_patches

if [ -n "$pack" ]; then
  tar -czf "$pack" -C "$src" .cispmv-patched kokkos kokkos-kernels
  note "wrote $pack ($(du -h "$pack" | cut -f1))"
  exit 0
fi

# ---------------------------------------------------------------------------------------- build
prefix="$deps/$preset$suffix/install"
build="$deps/$preset$suffix/build"
config_sum=$(printf '%s %s %s %s pic' "$preset" "$arch" "$patch_sum" "$kokkos_version" | sha256sum | cut -c1-16)
if [ -f "$prefix/.cispmv-config" ] && [ "$(cat "$prefix/.cispmv-config")" = "$config_sum" ]; then
  note "Kokkos $kokkos_version and Kokkos Kernels $kernels_version for preset '$preset' are already installed in $prefix"
  exit 0
fi

# position-independent code: the static libraries also link into a shared object (the Python module, python/)
kokkos_opts=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$prefix"
             -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON)
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
case "$preset" in
  cuda|k20)
    command -v nvcc >/dev/null || die "preset '$preset' needs nvcc on PATH"
    sm=$(printf '%s' "$arch" | sed -E 's/[A-Z]+([0-9]+)$/sm_\1/')
    export NVCC_WRAPPER_DEFAULT_ARCH="$sm"
    kokkos_opts+=(-DCMAKE_CXX_COMPILER="$src/kokkos/bin/nvcc_wrapper" -DKokkos_ENABLE_CUDA=ON
                  -DKokkos_ENABLE_CUDA_LAMBDA=ON "-DKokkos_ARCH_$arch=ON")
    ;;
esac

rm -rf "$build"
note "building Kokkos $kokkos_version for preset '$preset'${arch:+ (arch $arch)} with $jobs jobs"
log="$deps/$preset$suffix-kokkos-configure.log"
cmake -S "$src/kokkos" -B "$build/kokkos" "${gen[@]}" "${kokkos_opts[@]}" >"$log" 2>&1 ||
  { tail -n 40 "$log"; die "configuring Kokkos failed (log: $log)"; }
cmake --build "$build/kokkos" --parallel "$jobs" || die "building Kokkos failed"
cmake --install "$build/kokkos" >/dev/null || die "installing Kokkos failed"

note "building Kokkos Kernels $kernels_version (ETI off, cuBLAS/cuSPARSE TPLs off)"
kk_opts=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix"
         -DCMAKE_POSITION_INDEPENDENT_CODE=ON
         -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF
         -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF -DKokkosKernels_ENABLE_TESTS=OFF)
# 4.x: only the components cispmv uses (sparse and what it needs), and no cuSOLVER/cuBLAS TPLs either
[ "$kokkos_version" = 3.4.01 ] || kk_opts+=(-DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF
  -DKokkosKernels_ENABLE_COMPONENT_SPARSE=ON -DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF
  -DKokkosKernels_ENABLE_TPL_BLAS=OFF -DKokkosKernels_ENABLE_TPL_LAPACK=OFF)
case "$preset" in cuda|k20) kk_opts+=(-DCMAKE_CXX_COMPILER="$src/kokkos/bin/nvcc_wrapper") ;; esac
log="$deps/$preset$suffix-kokkoskernels-configure.log"
cmake -S "$src/kokkos-kernels" -B "$build/kokkos-kernels" "${gen[@]}" "${kk_opts[@]}" >"$log" 2>&1 ||
  { tail -n 40 "$log"; die "configuring Kokkos Kernels failed (log: $log)"; }
cmake --build "$build/kokkos-kernels" --parallel "$jobs" || die "building Kokkos Kernels failed"
cmake --install "$build/kokkos-kernels" >/dev/null || die "installing Kokkos Kernels failed"
rm -rf "$build"
echo "$config_sum" >"$prefix/.cispmv-config"
note "installed Kokkos $kokkos_version and Kokkos Kernels $kernels_version for preset '$preset' in $prefix"
