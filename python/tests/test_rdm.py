"""cispmv.density_matrices against PySCF's make_rdm1 / make_rdm12 / make_rdm12s, on the same vectors."""

import numpy
import pytest
from pyscf.fci import direct_spin1, direct_spin1_symm

import cispmv


@pytest.mark.parametrize("case", ["h2o_cas", "o2_triplet"])
def test_density_matrices_equal_pyscf(case, request, rng):
    d = request.getfixturevalue(case)
    norb, nelec = d["norb"], d["nelec"]
    shape = (cispmv.num_strings(norb, nelec[0]), cispmv.num_strings(norb, nelec[1]))
    c = rng.standard_normal(shape)
    c /= numpy.linalg.norm(c)
    ours = cispmv.density_matrices(c, norb, nelec, spins=True)
    (dm1a, dm1b), (dm2aa, dm2ab, dm2bb) = direct_spin1.make_rdm12s(c, norb, nelec)
    dm1, dm2 = direct_spin1.make_rdm12(c, norb, nelec)
    for name, ref in [("dm1a", dm1a), ("dm1b", dm1b), ("dm2aa", dm2aa), ("dm2ab", dm2ab), ("dm2bb", dm2bb),
                      ("dm1", dm1), ("dm2", dm2)]:
        numpy.testing.assert_allclose(ours[name], ref, rtol=0, atol=1e-12, err_msg=name)
    summed = cispmv.density_matrices(c, norb, nelec)
    assert set(summed) == {"dm1", "dm2"}
    numpy.testing.assert_allclose(summed["dm1"], dm1, rtol=0, atol=1e-12)
    numpy.testing.assert_allclose(summed["dm2"], dm2, rtol=0, atol=1e-12)
    # the trace identities of an N-electron state
    n = sum(nelec)
    assert abs(numpy.trace(summed["dm1"]) - n) < 1e-11
    assert abs(numpy.einsum("ppqq", summed["dm2"]) - n * (n - 1)) < 1e-10


def test_density_matrices_give_the_energy(h2o_cas_symm):
    d = h2o_cas_symm
    e, c = direct_spin1_symm.FCI().kernel(d["h1e"], d["eri"], d["norb"], d["nelec"], orbsym=d["orbsym"], wfnsym=0)
    from pyscf import ao2mo
    eri = ao2mo.restore(1, d["eri"], d["norb"])
    r = cispmv.density_matrices(c, d["norb"], d["nelec"])
    energy = numpy.einsum("pq,qp", d["h1e"], r["dm1"]) + 0.5 * numpy.einsum("pqrs,pqrs", eri, r["dm2"])
    assert abs(energy - e) < 1e-10


def test_a_vector_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match="values for a 6 x 6 space"):
        cispmv.density_matrices(numpy.zeros(35), 4, (2, 2))
