#!/usr/bin/env python3
"""Writes the FCIDUMP of the classic full-CI benchmark: H2O/cc-pVDZ, all electrons, at the 1.0 Re geometry of
Olsen, Jorgensen, Koch, Balkova and Bartlett, J. Chem. Phys. 104, 8007 (1996), Table 1.

    python3 perf/make_olsen_fcidump.py [OUT]          (default h2o_ccpvdz_olsen.fcidump)
    python3 perf/make_olsen_fcidump.py OUT --c1       (the same integrals without symmetry: ORBSYM all 1)

O (0, 0, -0.004762593), H (0, +-0.80184232855, -0.56034446694) Angstrom, cc-pVDZ (24 orbitals), RHF (the paper's
-76.0240385603 Eh), C2v. The file is PySCF's default FCIDUMP (its own ORBSYM numbering), which `cispmv ci` reads as
it is. Its full CI in A1, 451,681,246 determinants: Olsen et al.'s -76.241860 Eh.

    cispmv ci h2o_ccpvdz_olsen.fcidump --level 10

Needs PySCF (pip install pyscf); a few seconds. Not needed by the tests.
"""
import argparse

from pyscf import gto, scf
from pyscf.tools import fcidump


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", nargs="?", default="h2o_ccpvdz_olsen.fcidump")
    p.add_argument("--c1", action="store_true", help="no symmetry: ORBSYM all 1 (the C1 space, 1.8e9 determinants)")
    a = p.parse_args()
    mol = gto.M(
        atom="O 0 0 -0.004762593; H 0 0.80184232855 -0.56034446694; H 0 -0.80184232855 -0.56034446694",
        unit="Angstrom",
        basis="cc-pvdz",
        symmetry=not a.c1,
        verbose=0,
    )
    mf = scf.RHF(mol)
    mf.conv_tol = 1e-12
    e = mf.kernel()
    if not mf.converged:
        raise SystemExit("make_olsen_fcidump.py: RHF did not converge")
    fcidump.from_scf(mf, a.out)
    print(f"{a.out}: {mol.nao} orbitals, {mol.nelectron} electrons, RHF {e:.10f} Eh (Olsen et al.: -76.0240385603)")


if __name__ == "__main__":
    main()
