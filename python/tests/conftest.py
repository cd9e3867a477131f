"""Shared integrals for the Python tests: active spaces of small molecules from PySCF (RHF, then CASCI's effective
integrals), computed once per session."""

import numpy
import pytest
from pyscf import gto, mcscf, scf


def _active(atom, basis, ncas, nelecas, symmetry=False, spin=0):
    mol = gto.M(atom=atom, basis=basis, symmetry=symmetry, spin=spin, verbose=0)
    mf = scf.RHF(mol).run() if spin == 0 else scf.ROHF(mol).run()
    mc = mcscf.CASCI(mf, ncas, nelecas)
    h1e, ecore = mc.get_h1eff()
    eri = mc.get_h2eff()
    orbsym = getattr(mf.mo_coeff, "orbsym", None)
    if orbsym is not None:
        orbsym = numpy.asarray(orbsym)[mc.ncore:mc.ncore + ncas]
    return dict(mol=mol, mf=mf, h1e=h1e, eri=eri, ecore=ecore, norb=ncas, nelec=mc.nelecas, orbsym=orbsym)


H2O = "O 0 0 0; H 0 -0.757 0.587; H 0 0.757 0.587"


@pytest.fixture(scope="session")
def h2o_cas():
    """H2O/6-31G, 8 electrons in 9 orbitals (C1): 15,876 determinants."""
    return _active(H2O, "6-31g", 9, 8)


@pytest.fixture(scope="session")
def h2o_cas_symm():
    """The same active space with C2v symmetry labels."""
    return _active(H2O, "6-31g", 9, 8, symmetry=True)


@pytest.fixture(scope="session")
def o2_triplet():
    """O2/6-31G triplet (ROHF), an open shell: 12 electrons in 8 orbitals, 7 alpha and 5 beta."""
    return _active("O 0 0 0; O 0 0 1.21", "6-31g", 8, (7, 5), spin=2)


@pytest.fixture
def rng():
    return numpy.random.default_rng(7)
