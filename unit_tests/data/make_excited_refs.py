"""Excited-state references for the block Davidson tests: the lowest 5 roots of FCIDUMPs already here.

Independent program: PySCF (pip install pyscf; made with PySCF 2.14.0). Run from anywhere:
    python3 unit_tests/data/make_excited_refs.py
It reads the FCIDUMPs that make_fcidump_refs.py wrote (it does not rewrite them, so the energies belong
to exactly these integrals) and rewrites the block between the markers below in ci_references.txt.
Solvers as in make_fcidump_refs.py: direct_spin1 (every irrep) or direct_spin1_symm (orbsym, wfnsym
= ISYM), no spin penalty: the roots of the M_S = 0 determinant space, triplet components included.
"""
import itertools
import os

import numpy

from pyscf import fci
from pyscf.fci import cistring
from pyscf.tools import fcidump

HERE = os.path.dirname(os.path.abspath(__file__))
BEGIN = "# --- excited states (make_excited_refs.py) ---"
END = "# --- end of excited states ---"
# name, FCIDUMP, restrict to ISYM, roots
CASES = [
    ("lih_sto3g_5roots", "lih_sto3g.fcidump", 0, 5),
    ("h2o_631g_fc_fci_5roots", "h2o_631g_fc.fcidump", 1, 5),
]


def determinants(norb, nelec, restrict, d):
    """M_S = 0 determinants of the space (of irrep ISYM when restricted), counted from the definition."""
    n = nelec // 2
    if not restrict:
        return cistring.num_strings(norb, n) ** 2
    orbsym = [s - 1 for s in d["ORBSYM"]]
    per_irrep = {}
    for occ in itertools.combinations(range(norb), n):
        s = 0
        for p in occ:
            s ^= orbsym[p]
        per_irrep[s] = per_irrep.get(s, 0) + 1
    return sum(c * per_irrep.get(s ^ (d["ISYM"] - 1), 0) for s, c in per_irrep.items())


def main():
    lines = [BEGIN, "# Lowest 5 roots; level 99 = full CI."]
    for name, fname, restrict, nroots in CASES:
        d = fcidump.read(os.path.join(HERE, fname))  # ORBSYM and ISYM as written: Molpro irreps 1..8
        ids = fcidump.read(os.path.join(HERE, fname), molpro_orbsym=True)["ORBSYM"]  # PySCF's irrep ids
        norb, nelec = d["NORB"], d["NELEC"]
        if restrict:
            solver = fci.direct_spin1_symm.FCI()
            solver.orbsym = numpy.asarray(ids)
            solver.wfnsym = [i for i, m in zip(ids, d["ORBSYM"]) if m == d["ISYM"]][0]
        else:
            solver = fci.direct_spin1.FCI()
        solver.conv_tol = 1e-13
        solver.max_cycle = 500
        e, _ = solver.kernel(d["H1"], d["H2"], norb, nelec, ecore=d["ECORE"], nroots=nroots)
        es = " ".join("%.12f" % x for x in e)
        lines.append("%-22s %-22s %2d %d %-5s %8d %d %s" % (name, fname, 99, restrict, "FCI",
                                                           determinants(norb, nelec, restrict, d), nroots, es))
        print(lines[-1])
    lines.append(END)
    path = os.path.join(HERE, "ci_references.txt")
    with open(path) as f:
        text = f.read()
    if BEGIN in text:
        text = text[: text.index(BEGIN)] + text[text.index(END) + len(END) + 1:]
    with open(path, "w") as f:
        f.write(text.rstrip("\n") + "\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
