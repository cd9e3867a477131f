#!/usr/bin/env bash
# `cispmv ci` end to end (read, reference, space, Hamiltonian, format, Davidson) beside PySCF's
# direct-CI FCI (perf/pyscf_fci.py) on the same machine, one after the other, each FCIDUMP full CI
# over all irreps. Writes OUT/ci-<name>.json (cispmv), OUT/pyscf-<name>.json, OUT/time-<name>.txt
# (GNU time: wall seconds and peak memory), and OUT/ci_end_to_end.md, the table.
#
#   perf/ci_end_to_end.sh OUT_DIR [build dir, default build/openmp] [FCIDUMP ...]
#
# Default FCIDUMPs: unit_tests/data/h2o_631g_fc.fcidump (245,025 determinants) and
# unit_tests/data/h2o_631g.fcidump (1,656,369 determinants, 1.09e9 nonzeros, 13 GB in CSR).
# PySCF is optional (pip install pyscf): without it its columns say "not run". CI_ARGS: more options of
# `cispmv ci`, e.g. CI_ARGS=--singlet (the states direct_spin0 keeps, c = c^T).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: perf/ci_end_to_end.sh OUT_DIR [BUILD_DIR] [FCIDUMP ...]}
build=${2:-$top/build/openmp}
shift $(( $# >= 2 ? 2 : 1 ))
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$top/unit_tests/data/h2o_631g_fc.fcidump" "$top/unit_tests/data/h2o_631g.fcidump")
mkdir -p "$out"
cli="$build/src/app/cispmv"
[ -x "$cli" ] || { echo "ci_end_to_end.sh: no $cli (build first)" >&2; exit 1; }
have_pyscf=0
python3 -c 'import pyscf' 2>/dev/null && have_pyscf=1
table="$out/ci_end_to_end.md"
{
  echo "| FCIDUMP | determinants | nonzeros | cispmv: H built on | H (s) | Davidson (s) | SpMV (ms each) | format | total wall (s) | peak RSS (GB) | energy (Eh) | PySCF wall (s) | PySCF peak RSS (GB) | PySCF energy (Eh) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$table"
for f in "${files[@]}"; do
  name=$(basename "$f" .fcidump)
  echo "=== cispmv ci $f --level 99 --all-irreps ${CI_ARGS:-}"
  /usr/bin/time -f '%e %M' -o "$out/time-$name.txt" \
    "$cli" ci "$f" --level 99 --all-irreps ${CI_ARGS:-} --json "$out/ci-$name.json" | tee "$out/ci-$name.txt"
  read -r wall rss_kb <"$out/time-$name.txt"
  py_wall="not run" py_rss="not run" py_e="not run"
  if [ $have_pyscf = 1 ]; then
    echo "=== python3 perf/pyscf_fci.py $f"
    /usr/bin/time -f '%e %M' -o "$out/time-pyscf-$name.txt" python3 "$top/perf/pyscf_fci.py" "$f" | tail -1 \
      | tee "$out/pyscf-$name.json"
    read -r py_wall py_rss_kb <"$out/time-pyscf-$name.txt"
    py_rss=$(python3 -c "print(f'{$py_rss_kb/1048576:.2f}')")
    py_e=$(python3 -c "import json; print(f\"{json.load(open('$out/pyscf-$name.json'))['energies'][0]:.10f}\")")
  fi
  python3 - "$out/ci-$name.json" "$wall" "$rss_kb" "$py_wall" "$py_rss" "$py_e" "$name" >>"$table" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
wall, rss_kb, py_wall, py_rss, py_e, name = sys.argv[2:]
t = j["timings_s"]
d = j["davidson"]
spmv_ms = 1e3 * t["spmv"] / max(1, d["spmv_calls"])
print(f"| {name} | {j['space']['determinants']:,} | {j['matrix']['nonzeros']:,} | {j['matrix']['built_on']} | "
      f"{t['hamiltonian']:.2f} | {t['davidson']:.2f} | {spmv_ms:.1f} | {d['format']} | {float(wall):.1f} | "
      f"{int(rss_kb) / 1048576:.2f} | {d['energies'][0]:.10f} | {py_wall} | {py_rss} | {py_e} |")
PY
done
cat "$table"
