#!/usr/bin/env bash
# Applies .clang-format to cispmv's C++ sources (`cmake/format.sh`), or checks that it is applied
# (`cmake/format.sh --check`, as CI does: exits 1 and names the files that differ).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null || { echo "format.sh: clang-format is not installed" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.hpp' '*.cpp')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format.sh: not formatted with .clang-format ($(clang-format --version)): ${bad[*]}" >&2
    echo "format.sh: run cmake/format.sh to apply it" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
