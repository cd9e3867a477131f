#!/usr/bin/env python3
"""Writes the FCIDUMP files and the reference energies that unit_tests/tst_ci.hpp checks against.

Independent program: PySCF (pip install pyscf; made with PySCF 2.14.0, NumPy 2.4, Python 3.11).
Run from anywhere:  python3 unit_tests/data/make_fcidump_refs.py
It rewrites, next to itself:
  h2_sto3g.fcidump        H2,  R = 0.74 A,  STO-3G, no symmetry (ORBSYM all 1), all electrons
  lih_sto3g.fcidump       LiH, R = 1.60 A,  STO-3G, no symmetry, all electrons
  h2o_631g.fcidump        H2O, 6-31G,  C2v, all 10 electrons in 13 orbitals
  h2o_631g_fc.fcidump     H2O, 6-31G,  C2v, O 1s frozen (frozen-core integrals): 8 electrons in 12 orbitals
  h2o_631gd.fcidump       H2O, 6-31G(d) with Cartesian d (6d, 19 orbitals = 38 spin-orbitals as in
                          Mahmoud et al. 2018, section 2.1), C2v, all 10 electrons
  ci_references.txt       the energies (see the header written into it)
H2O geometry (Angstrom): O 0 0 0.1173; H 0 +-0.7572 -0.4692 (R(OH) = 0.9572 A, HOH = 104.52 deg).
All molecules neutral singlets (charge 0, spin 0 -> MS2 = 0); RHF orbitals, canonical, tight SCF.

ORBSYM is written in Molpro numbering (1..8; molpro_orbsym=True) so that the product of two irreps is
XOR of (irrep - 1); PySCF's default (its own 0-based ids) is not a valid Knowles-Handy ORBSYM.
ISYM = 1 (A1): the ground states are totally symmetric.

Reference energies are total energies (eigenvalue + core energy), Eh, printed with 12 decimals:
  FCI  : pyscf.fci.direct_spin1 (no symmetry) or direct_spin1_symm (with orbsym, wfnsym = A1).
         These solvers work in the M_S = 0 determinant space WITHOUT a spin penalty, so their roots are
         the roots of the same determinant space cispmv builds (triplet M_S = 0 components included).
  CISD : pyscf.ci.CISD(mf).e_tot (spin-adapted RCISD; its ground-state energy equals the lowest
         eigenvalue of the determinant-space CISD over all alpha/beta singles and doubles of the RHF
         determinant, which is spin-complete).
A rerun rewrites the FCIDUMPs and ci_references.txt together: the RHF orbitals converge to ~1e-11,
so the integrals of two runs differ in their last digits (~1e-11) and the energies by ~1e-12, far
below the 1e-8 Eh the tests check; never mix files of different runs.
The determinant counts are counted here too, with itertools, from the definition (excitation level =
number of electrons moved out of the reference determinant, alpha + beta; optional irrep restriction).
"""
import itertools
import os

import numpy
from pyscf import ao2mo, ci, fci, gto, mcscf, scf, symm
from pyscf.tools import fcidump

HERE = os.path.dirname(os.path.abspath(__file__))
H2O_GEOMETRY = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"
FCI_CONV_TOL = 1e-13
CISD_CONV_TOL = 1e-12


def molpro_orbsym(mol, mo_coeff):
    """Molpro irrep numbers (1..8) of the MOs, or all 1 without symmetry."""
    if not mol.symmetry:
        return [1] * mo_coeff.shape[1]
    ids = symm.label_orb_symm(mol, mol.irrep_id, mol.symm_orb, mo_coeff)
    return [fcidump.ORBSYM_MAP[mol.groupname][i] for i in ids]


def pyscf_orbsym(mol, mo_coeff):
    return numpy.asarray(symm.label_orb_symm(mol, mol.irrep_id, mol.symm_orb, mo_coeff))


def run_rhf(mol):
    mf = scf.RHF(mol)
    mf.conv_tol = 1e-12
    mf.conv_tol_grad = 1e-9
    mf.kernel()
    assert mf.converged
    return mf


def count_determinants(norb, nalpha, nbeta, max_level, orbsym=None, irrep=None):
    """Counts the determinants of excitation level <= max_level (and of the given Molpro irrep)."""
    def strings(nel):
        # histogram of (level, irrep) over the strings of one spin; the space is their product
        hist = {}
        for occ in itertools.combinations(range(norb), nel):
            level = sum(1 for p in range(nel) if p not in occ)
            sym = 0
            if orbsym is not None:
                for p in occ:
                    sym ^= orbsym[p] - 1
            hist[(level, sym)] = hist.get((level, sym), 0) + 1
        return hist
    count = 0
    for (la, sa), na in strings(nalpha).items():
        for (lb, sb), nb in strings(nbeta).items():
            if la + lb <= max_level and (irrep is None or (sa ^ sb) == irrep - 1):
                count += na * nb
    return count


def write_all_electron(mf, path):
    fcidump.from_scf(mf, path, tol=1e-15, molpro_orbsym=True)


def reference_line(name, fname, level, restrict, method, dets, energies):
    es = " ".join("%.12f" % e for e in energies)
    return "%-14s %-22s %2d %d %-5s %8d %d %s" % (name, fname, level, restrict, method, dets, len(energies), es)


def main():
    lines = []

    # ---------------------------------------------------------------- H2 / STO-3G, full CI, 4 roots
    mol = gto.M(atom="H 0 0 0; H 0 0 0.74", basis="sto-3g", unit="Angstrom", symmetry=False, verbose=0)
    mf = run_rhf(mol)
    write_all_electron(mf, os.path.join(HERE, "h2_sto3g.fcidump"))
    norb = mf.mo_coeff.shape[1]
    h1 = mf.mo_coeff.T @ mf.get_hcore() @ mf.mo_coeff
    eri = ao2mo.full(mol, mf.mo_coeff)
    solver = fci.direct_spin1.FCI()
    solver.conv_tol = FCI_CONV_TOL
    e, _ = solver.kernel(h1, eri, norb, mol.nelec, ecore=mol.energy_nuc(), nroots=4)
    lines.append(reference_line("h2_sto3g", "h2_sto3g.fcidump", 2, 0, "FCI",
                                count_determinants(norb, 1, 1, 2), e))

    # ---------------------------------------------------------------- LiH / STO-3G, full CI, 2 roots
    mol = gto.M(atom="Li 0 0 0; H 0 0 1.60", basis="sto-3g", unit="Angstrom", symmetry=False, verbose=0)
    mf = run_rhf(mol)
    write_all_electron(mf, os.path.join(HERE, "lih_sto3g.fcidump"))
    norb = mf.mo_coeff.shape[1]
    h1 = mf.mo_coeff.T @ mf.get_hcore() @ mf.mo_coeff
    eri = ao2mo.full(mol, mf.mo_coeff)
    solver = fci.direct_spin1.FCI()
    solver.conv_tol = FCI_CONV_TOL
    e, _ = solver.kernel(h1, eri, norb, mol.nelec, ecore=mol.energy_nuc(), nroots=2)
    lines.append(reference_line("lih_sto3g", "lih_sto3g.fcidump", 4, 0, "FCI",
                                count_determinants(norb, 2, 2, 4), e))

    # ---------------------------------------------------------------- H2O / 6-31G, all electrons: CISD
    mol = gto.M(atom=H2O_GEOMETRY, basis="6-31g", unit="Angstrom", symmetry="C2v", verbose=0)
    mf = run_rhf(mol)
    write_all_electron(mf, os.path.join(HERE, "h2o_631g.fcidump"))
    norb = mf.mo_coeff.shape[1]
    orbsym = molpro_orbsym(mol, mf.mo_coeff)
    myci = ci.CISD(mf)
    myci.conv_tol = CISD_CONV_TOL
    myci.kernel()
    assert myci.converged
    lines.append(reference_line("h2o_631g_cisd", "h2o_631g.fcidump", 2, 0, "CISD",
                                count_determinants(norb, 5, 5, 2), [myci.e_tot]))
    lines.append(reference_line("h2o_631g_cisd_a1", "h2o_631g.fcidump", 2, 1, "CISD",
                                count_determinants(norb, 5, 5, 2, orbsym, 1), [myci.e_tot]))

    # ---------------------------------------------------------------- H2O / 6-31G, frozen O 1s: FCI in A1
    ncore, ncas, nelecas = 1, norb - 1, (4, 4)
    mc = mcscf.CASCI(mf, ncas, nelecas)
    h1eff, ecore = mc.get_h1eff()
    h2eff = ao2mo.restore(4, mc.get_h2eff(), ncas)
    cas_mo = mf.mo_coeff[:, ncore:]
    orbsym_fc = molpro_orbsym(mol, cas_mo)
    fcidump.from_integrals(os.path.join(HERE, "h2o_631g_fc.fcidump"), h1eff, h2eff, ncas, sum(nelecas),
                           ecore, 0, orbsym_fc, tol=1e-15)
    solver = fci.direct_spin1_symm.FCI(mol)
    solver.conv_tol = FCI_CONV_TOL
    solver.wfnsym = "A1"
    e, _ = solver.kernel(h1eff, h2eff, ncas, nelecas, ecore=ecore, nroots=2,
                         orbsym=pyscf_orbsym(mol, cas_mo))
    lines.append(reference_line("h2o_631g_fc_fci", "h2o_631g_fc.fcidump", 8, 1, "FCI",
                                count_determinants(ncas, 4, 4, 8, orbsym_fc, 1), e))
    # Frozen-core CISD on the same integrals: a level-2 check on the file with a nonzero core energy.
    myci = ci.CISD(mf, frozen=ncore)
    myci.conv_tol = CISD_CONV_TOL
    myci.kernel()
    assert myci.converged
    lines.append(reference_line("h2o_631g_fc_cisd", "h2o_631g_fc.fcidump", 2, 1, "CISD",
                                count_determinants(ncas, 4, 4, 2, orbsym_fc, 1), [myci.e_tot]))

    # ---------------------------------------------------------------- H2O / 6-31G(d), 6d: CISD
    mol = gto.M(atom=H2O_GEOMETRY, basis="6-31g*", unit="Angstrom", symmetry="C2v", cart=True, verbose=0)
    mf = run_rhf(mol)
    write_all_electron(mf, os.path.join(HERE, "h2o_631gd.fcidump"))
    norb = mf.mo_coeff.shape[1]
    assert norb == 19
    orbsym = molpro_orbsym(mol, mf.mo_coeff)
    myci = ci.CISD(mf)
    myci.conv_tol = CISD_CONV_TOL
    myci.kernel()
    assert myci.converged
    lines.append(reference_line("h2o_631gd_cisd", "h2o_631gd.fcidump", 2, 0, "CISD",
                                count_determinants(norb, 5, 5, 2), [myci.e_tot]))
    lines.append(reference_line("h2o_631gd_cisd_a1", "h2o_631gd.fcidump", 2, 1, "CISD",
                                count_determinants(norb, 5, 5, 2, orbsym, 1), [myci.e_tot]))

    with open(os.path.join(HERE, "ci_references.txt"), "w") as f:
        f.write("# Written by make_fcidump_refs.py (PySCF); read by unit_tests/tst_ci.hpp.\n")
        f.write("# Columns: name  fcidump  level  restrict_to_ISYM(0/1)  method  determinants  nroots"
                "  total energies (Eh, lowest first)\n")
        f.write("# 'level' is the maximum excitation level (a level >= NELEC is full CI);"
                " 'determinants' is counted independently\n")
        f.write("# in the script from the definition of the space (M_S = MS2/2, excitation level <= level,"
                " irrep = ISYM if restricted).\n")
        for line in lines:
            f.write(line + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
