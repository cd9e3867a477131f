#!/usr/bin/env python3
"""PySCF's full CI of an FCIDUMP, timed: the yardstick of `cispmv ci` (perf/ci_end_to_end.sh).

    python3 perf/pyscf_fci.py FCIDUMP [--nroots K] [--solver direct_spin0|direct_spin1]

Reads the FCIDUMP with pyscf.tools.fcidump, runs the determinant-driven direct CI (no symmetry, the
whole M_S = 0 space, as `cispmv ci --all-irreps`), and prints one JSON line: energies (with the core
energy), the determinant count, wall seconds of the read and of the solve, peak resident memory (MB).
Needs PySCF (pip install pyscf).
"""
import argparse
import json
import resource
import time

import numpy
from pyscf import fci
from pyscf.tools import fcidump


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("fcidump")
    p.add_argument("--nroots", type=int, default=1)
    p.add_argument("--solver", default="direct_spin0", choices=["direct_spin0", "direct_spin1"])
    a = p.parse_args()
    t0 = time.perf_counter()
    d = fcidump.read(a.fcidump, molpro_orbsym=True)
    t1 = time.perf_counter()
    norb, nelec, ms2 = d["NORB"], d["NELEC"], d.get("MS2", 0)
    neleca, nelecb = (nelec + ms2) // 2, (nelec - ms2) // 2
    solver = getattr(fci, a.solver).FCI()
    solver.conv_tol = 1e-10
    solver.max_cycle = 200
    e, _ = solver.kernel(d["H1"], d["H2"], norb, (neleca, nelecb), ecore=d["ECORE"], nroots=a.nroots)
    t2 = time.perf_counter()
    from math import comb
    print(json.dumps({
        "solver": "pyscf.fci." + a.solver,
        "fcidump": a.fcidump,
        "determinants": comb(norb, neleca) * comb(norb, nelecb),
        "energies": [float(x) for x in numpy.atleast_1d(e)],
        "read_s": round(t1 - t0, 3),
        "solve_s": round(t2 - t1, 3),
        "total_s": round(t2 - t0, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }))


if __name__ == "__main__":
    main()
