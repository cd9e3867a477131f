"""cispmv.fci.FCISolver inside PySCF's CASCI and CASSCF: the same energies as PySCF's own solvers."""

import numpy
import pytest
from pyscf import fci, gto, mcscf, scf

import cispmv
import cispmv.fci


@pytest.fixture(scope="module")
def n2():
    mol = gto.M(atom="N 0 0 0; N 0 0 1.098", basis="cc-pvdz", verbose=0)
    return scf.RHF(mol).run()


@pytest.fixture(scope="module")
def h2o_symm():
    mol = gto.M(atom="O 0 0 0; H 0 -0.757 0.587; H 0 0.757 0.587", basis="cc-pvdz", symmetry=True, verbose=0)
    return scf.RHF(mol).run()


def _casscf(mf, ncas, nelecas, solver=None, wfnsym=None):
    mc = mcscf.CASSCF(mf, ncas, nelecas)
    if solver is not None:
        mc.fcisolver = solver
    if wfnsym is not None:
        mc.fcisolver.wfnsym = wfnsym
    mc.conv_tol = 1e-11
    mc.fcisolver.conv_tol = 1e-13
    mc.kernel()
    assert mc.converged
    return mc


def test_casscf_n2_equals_pyscf(n2):
    ref = _casscf(n2, 8, 10)
    ours = _casscf(n2, 8, 10, cispmv.fci.FCISolver(n2.mol))
    assert abs(ours.e_tot - ref.e_tot) < 1e-8
    dm1 = ours.fcisolver.make_rdm1(ours.ci, 8, (5, 5))
    numpy.testing.assert_allclose(dm1, fci.direct_spin1.make_rdm1(ours.ci, 8, (5, 5)), rtol=0, atol=1e-12)


def test_casscf_symmetry_restricted_singlet_equals_pyscf(h2o_symm):
    ref = _casscf(h2o_symm, 6, 6, wfnsym="A1")
    solver = cispmv.fci.FCISolver(h2o_symm.mol)
    ours = _casscf(h2o_symm, 6, 6, solver, wfnsym="A1")
    assert abs(ours.e_tot - ref.e_tot) < 1e-8
    assert solver.orbsym is not None  # PySCF's symmetry-adapted CASSCF labelled the orbitals
    ss, multiplicity = solver.spin_square(ours.ci, 6, (3, 3))
    assert abs(ss) < 1e-8 and abs(multiplicity - 1) < 1e-8


def test_casci_excited_roots_are_the_exact_ones(n2):
    # every M_S = 0 state, triplets too (PySCF's direct_spin1; its direct_spin0 keeps singlets alone). The reference
    # is the dense matrix of PySCF's own products, diagonalised: roots 3 and 4 are a degenerate triplet pair, which
    # PySCF's Davidson for 3 roots misses (it returns the fifth eigenvalue, -108.6885, as its third)
    mc = mcscf.CASCI(n2, 8, 10)
    h1e, ecore = mc.get_h1eff()
    h2 = fci.direct_spin1.absorb_h1e(h1e, mc.get_h2eff(), 8, (5, 5), 0.5)
    unit = numpy.eye(56 * 56)
    dense = numpy.array([fci.direct_spin1.contract_2e(h2, unit[i].reshape(56, 56), 8, (5, 5)).ravel()
                         for i in range(56 * 56)])
    exact, vectors = numpy.linalg.eigh(dense)
    mc.fcisolver = cispmv.fci.FCISolver(n2.mol, nroots=4, conv_tol=1e-13)
    mc.kernel()
    numpy.testing.assert_allclose(mc.e_tot, exact[:4] + ecore, rtol=0, atol=1e-10)
    for k, multiplicity in [(0, 1), (1, 3), (2, 3), (3, 3)]:
        assert abs(mc.fcisolver.spin_square(mc.ci[k], 8, (5, 5))[1] - multiplicity) < 1e-8
    for k in range(2):  # the non-degenerate roots: the same vectors up to sign
        assert abs(abs(numpy.vdot(mc.ci[k].ravel(), vectors[:, k])) - 1) < 1e-8


def test_what_the_solver_does_not_provide_is_named():
    solver = cispmv.fci.FCISolver()
    assert not hasattr(solver, "make_hdiag")
    with pytest.raises(AttributeError, match="does not provide 'trans_rdm12'"):
        solver.trans_rdm12(None, None, 4, (2, 2))
    with pytest.raises(NotImplementedError, match="reorder=False"):
        solver.make_rdm12(numpy.ones((6, 6)), 4, (2, 2), reorder=False)
