#!/usr/bin/env python3
"""Writes the frozen-core FCIDUMP of an all-electron one: its first NCORE orbitals doubly occupied.

    python3 freeze_core_fcidump.py h2o_631gd.fcidump h2o_631gd_fc.fcidump [--ncore 1]

With core orbitals c (the first NCORE, the lowest in energy in PySCF's and Molpro's FCIDUMPs) and
active orbitals p, q, r, s (the others, renumbered from 1), in chemists' notation (pq|rs):
  core energy  E0' = E0 + sum_c [2 h_cc + sum_d (2 (cc|dd) - (cd|dc))]
  one-electron h'_pq = h_pq + sum_c [2 (pq|cc) - (pc|cq)]
  two-electron (pq|rs) unchanged, ORBSYM of the active orbitals kept, NELEC reduced by 2 NCORE.
This is what PySCF's CASCI get_h1eff/get_h2eff give for the same orbitals, computed from the file
alone, so the frozen-core file holds exactly the integrals of the all-electron one it comes from.
Needs PySCF (pip install pyscf) for reading and writing FCIDUMPs.
"""
import argparse

import numpy
from pyscf import ao2mo
from pyscf.tools import fcidump


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--ncore", type=int, default=1)
    a = p.parse_args()
    d = fcidump.read(a.src, molpro_orbsym=False)  # ORBSYM as written, so written back unchanged
    norb, nelec, nc = d["NORB"], d["NELEC"], a.ncore
    if not 0 < nc < norb or 2 * nc > nelec:
        raise SystemExit("freeze_core_fcidump: --ncore %d does not fit %d orbitals, %d electrons" % (nc, norb, nelec))
    h1 = numpy.asarray(d["H1"])
    g = ao2mo.restore(1, d["H2"], norb)  # (pq|rs), all four indices
    c, act = slice(0, nc), slice(nc, norb)
    ecore = d["ECORE"] + 2.0 * numpy.trace(h1[c, c])
    ecore += 2.0 * numpy.einsum("ccdd->", g[c, c, c, c]) - numpy.einsum("cddc->", g[c, c, c, c])
    h1eff = h1[act, act] + 2.0 * numpy.einsum("pqcc->pq", g[act, act, c, c]) - numpy.einsum("pccq->pq", g[act, c, c, act])
    h2eff = ao2mo.restore(4, g[act, act, act, act].copy(), norb - nc)
    orbsym = list(d.get("ORBSYM", [1] * norb))[nc:]
    if d.get("ISYM", 1) != 1:
        raise SystemExit("freeze_core_fcidump: ISYM %d; PySCF writes ISYM=1 only" % d["ISYM"])
    fcidump.from_integrals(a.dst, h1eff, h2eff, norb - nc, nelec - 2 * nc, ecore, d.get("MS2", 0), orbsym, tol=1e-15)


if __name__ == "__main__":
    main()
