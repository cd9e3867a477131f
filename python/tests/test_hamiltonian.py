"""cispmv.Hamiltonian against PySCF's direct_spin1 (products, diagonal, eigenpairs) and its refusals."""

import numpy
import pytest
from pyscf import fci
from pyscf.fci import direct_spin1, direct_spin1_symm

import cispmv


def _pyscf_product(d, c):
    h2 = direct_spin1.absorb_h1e(d["h1e"], d["eri"], d["norb"], d["nelec"], 0.5)
    return direct_spin1.contract_2e(h2, c, d["norb"], d["nelec"])


@pytest.mark.parametrize("case", ["h2o_cas", "o2_triplet"])
def test_products_and_diagonal_equal_pyscf(case, request, rng):
    d = request.getfixturevalue(case)
    h = cispmv.Hamiltonian(d["h1e"], d["eri"], d["norb"], d["nelec"], ecore=d["ecore"])
    assert h.shape == (cispmv.num_strings(d["norb"], d["nelec"][0]), cispmv.num_strings(d["norb"], d["nelec"][1]))
    assert h.size == h.shape[0] * h.shape[1]
    c = rng.standard_normal(h.shape)
    numpy.testing.assert_allclose(h.apply(c), _pyscf_product(d, c), rtol=0, atol=1e-11)
    stack = numpy.array([c, 2 * c])  # a block of vectors
    numpy.testing.assert_allclose(h.apply(stack)[1], 2 * _pyscf_product(d, c), rtol=0, atol=1e-10)
    hdiag = direct_spin1.make_hdiag(d["h1e"], d["eri"], d["norb"], d["nelec"]).reshape(h.shape)
    numpy.testing.assert_allclose(h.diagonal(), hdiag, rtol=0, atol=1e-11)


def test_eigenpairs_equal_pyscf(h2o_cas):
    d = h2o_cas
    ref = fci.direct_spin1.FCI()
    ref.conv_tol = 1e-14
    e_ref, c_ref = ref.kernel(d["h1e"], d["eri"], d["norb"], d["nelec"], ecore=d["ecore"], nroots=3)
    h = cispmv.Hamiltonian(d["h1e"], d["eri"], d["norb"], d["nelec"], ecore=d["ecore"])
    e, v, r, converged, _ = h.solve(nroots=3, tol=1e-9)
    assert converged and numpy.all(r < 1e-9)
    numpy.testing.assert_allclose(e, e_ref, rtol=0, atol=1e-10)
    for k in range(3):  # the same vectors up to sign
        assert abs(abs(numpy.vdot(v[k], c_ref[k])) - 1) < 1e-10
    # a start vector that is already the answer: converged at once
    e1, _, _, converged, iterations = h.solve(nroots=1, tol=1e-9, ci0=v[0])
    assert converged and iterations <= 1 and abs(e1[0] - e_ref[0]) < 1e-10


def test_symmetry_restricted_space_equals_pyscf(h2o_cas_symm):
    d = h2o_cas_symm
    for wfnsym in (0, 3):  # A1 and B2
        ref = direct_spin1_symm.FCI()
        ref.conv_tol = 1e-14
        e_ref, c_ref = ref.kernel(d["h1e"], d["eri"], d["norb"], d["nelec"], ecore=d["ecore"], orbsym=d["orbsym"],
                                  wfnsym=wfnsym)
        h = cispmv.Hamiltonian(d["h1e"], d["eri"], d["norb"], d["nelec"], ecore=d["ecore"], orbsym=d["orbsym"],
                               wfnsym=wfnsym)
        assert h.size < h.shape[0] * h.shape[1]
        e, v, _, converged, _ = h.solve(tol=1e-9)
        assert converged
        assert abs(e[0] - e_ref) < 1e-10
        assert abs(abs(numpy.vdot(v[0], c_ref)) - 1) < 1e-10
        outside = numpy.abs(c_ref) == 0  # PySCF's vector is zero outside the irrep: so is ours
        assert numpy.all(v[0][outside] == 0)


def test_integrals_in_every_packing_give_one_hamiltonian(h2o_cas, rng):
    from pyscf import ao2mo
    d = h2o_cas
    c = rng.standard_normal((cispmv.num_strings(9, 4),) * 2)
    products = [cispmv.Hamiltonian(d["h1e"], ao2mo.restore(s, d["eri"], 9), 9, (4, 4)).apply(c) for s in (1, 4, 8)]
    numpy.testing.assert_allclose(products[0], products[1], rtol=0, atol=1e-12)
    numpy.testing.assert_allclose(products[0], products[2], rtol=0, atol=1e-12)


def test_bad_input_is_refused_with_a_message(h2o_cas):
    d = h2o_cas
    with pytest.raises(ValueError, match="eri of shape"):
        cispmv.Hamiltonian(d["h1e"], numpy.zeros(7), 9, (4, 4))
    with pytest.raises(ValueError, match="h1e is"):
        cispmv.Hamiltonian(numpy.zeros((3, 3)), d["eri"], 9, (4, 4))
    with pytest.raises(ValueError, match="nelec"):
        cispmv.Hamiltonian(d["h1e"], d["eri"], 9, (10, 4))
    with pytest.raises(ValueError, match="orbsym value"):
        cispmv.Hamiltonian(d["h1e"], d["eri"], 9, (4, 4), orbsym=[0] * 8 + [9.5], wfnsym=0)
    h = cispmv.Hamiltonian(d["h1e"], d["eri"], 9, (4, 4))
    with pytest.raises(ValueError, match="values for a 126 x 126 space"):
        h.apply(numpy.zeros(5))
    with pytest.raises(ValueError, match="nroots"):
        h.solve(nroots=0)
    with pytest.raises(ValueError, match="complex"):
        h.apply(numpy.zeros((126, 126), dtype=complex))


def test_contract_2e_equals_pyscf_for_both_absorbed_forms(h2o_cas, rng):
    # CASSCF's CI response multiplies by contract_2e(absorb_h1e(h1e, eri, ..., 0.5), c): cispmv's own absorbed form,
    # and PySCF's array (what other PySCF code may pass), give PySCF's product
    import cispmv.fci
    d = h2o_cas
    solver = cispmv.fci.FCISolver()
    h2 = direct_spin1.absorb_h1e(d["h1e"], d["eri"], 9, (4, 4), 0.5)
    c = rng.standard_normal((126, 126))
    want = direct_spin1.contract_2e(h2, c, 9, (4, 4))
    numpy.testing.assert_allclose(solver.contract_2e(h2, c, 9, (4, 4)), want, rtol=0, atol=1e-11)
    ours = solver.absorb_h1e(d["h1e"], d["eri"], 9, (4, 4), 0.5)
    numpy.testing.assert_allclose(solver.contract_2e(ours, c.ravel(), 9, (4, 4)), want.ravel(), rtol=0, atol=1e-11)
