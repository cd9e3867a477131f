"""cispmv: configuration-interaction Hamiltonians on Kokkos, from Python.

``cispmv.Hamiltonian`` is the factored CI Hamiltonian (never assembled) of one-electron integrals ``h1e`` and
two-electron integrals ``eri`` (chemists' notation, any of PySCF's packings) over a full-CI space, with products,
its diagonal and a Davidson solve. ``cispmv.density_matrices`` forms one- and two-particle density matrices.
``cispmv.fci.FCISolver`` plugs both into PySCF's CASCI/CASSCF (``mc.fcisolver = cispmv.fci.FCISolver(mol)``).

CI vectors are NumPy arrays of shape ``(na, nb)``: alpha strings by beta strings, every string of the orbitals in
increasing value as an occupation bit mask (PySCF's ``cistring`` order), so PySCF's and cispmv's vectors are
interchangeable. All work runs on Kokkos' default execution space (``cispmv.backend()``: a GPU in a CUDA build,
the host's threads in an OpenMP one), initialised on import and finalised at exit.
"""

import atexit

import numpy

from . import _core

__all__ = ["Hamiltonian", "density_matrices", "backend", "num_strings"]

atexit.register(_core.finalize)


def backend():
    """Kokkos' default execution space, e.g. 'OpenMP' or 'Cuda'."""
    return _core.backend()


def num_strings(norb, nelec):
    """C(norb, nelec): the strings of one spin."""
    return _core.num_strings(int(norb), int(nelec))


def _nelec(nelec, spin=None):
    """(alpha, beta) from a tuple, or from a total and 2S (spin; default: as even as possible)."""
    if isinstance(nelec, (int, numpy.integer)):
        nelec = int(nelec)
        s = (nelec % 2) if spin is None else int(spin)
        if s < 0 or (nelec - s) % 2 or s > nelec:
            raise ValueError(f"cispmv: {nelec} electrons cannot have 2S = {s}")
        return (nelec + s) // 2, (nelec - s) // 2
    a, b = nelec
    return int(a), int(b)


def _eri_8fold(eri, norb):
    """(pq|rs) of real orbitals packed 8-fold (PySCF's ao2mo.restore(8) layout), from 1-, 2- or 4-index forms."""
    eri = numpy.asarray(eri, dtype=numpy.float64)
    npair = norb * (norb + 1) // 2
    if eri.ndim == 1 and eri.size == npair * (npair + 1) // 2:
        return numpy.ascontiguousarray(eri)
    if eri.ndim == 2 and eri.shape == (npair, npair):
        return numpy.ascontiguousarray(eri[numpy.tril_indices(npair)])
    if eri.ndim == 4 and eri.shape == (norb,) * 4:
        tril = numpy.tril_indices(norb)
        eri4 = eri[tril[0], tril[1]][:, tril[0], tril[1]]
        return numpy.ascontiguousarray(eri4[numpy.tril_indices(npair)])
    raise ValueError(f"cispmv: eri of shape {eri.shape} is none of the 1-, 2- or 4-index forms of {norb} orbitals")


def _dense(c, shape, what):
    """c as rows of na * nb float64 values (a vector, an (na, nb) array, or a stack of either)."""
    c = numpy.asarray(c)
    if numpy.iscomplexobj(c):
        raise ValueError(f"cispmv: {what} is complex; real CI vectors only")
    size = shape[0] * shape[1]
    if c.size % size or c.size == 0:
        raise ValueError(f"cispmv: {what} has {c.size} values for a {shape[0]} x {shape[1]} space")
    return numpy.ascontiguousarray(c, dtype=numpy.float64).reshape(-1, size)


class Hamiltonian:
    """The factored CI Hamiltonian of (h1e, eri) over the full-CI space of ``nelec`` electrons in ``norb`` orbitals.

    h1e: (norb, norb); eri: (pq|rs) in chemists' notation, as (norb,)*4, 4-fold (npair, npair) or 8-fold packed;
    nelec: (alpha, beta) or a total (spin: 2S, as PySCF's); ecore: a constant added to the energies.
    orbsym: each orbital's irrep as PySCF's ids (D2h and its subgroups; ids >= 10 of linear molecules are taken
    modulo 10); wfnsym: the irrep of the space (PySCF's id), which then holds only determinants of that irrep.
    apply(c) returns H c without ecore; vectors are (na, nb) arrays in PySCF's string order.
    """

    def __init__(self, h1e, eri, norb, nelec, ecore=0.0, orbsym=None, wfnsym=None, spin=None):
        norb = int(norb)
        self.norb = norb
        self.nelec = _nelec(nelec, spin)
        h1e = numpy.ascontiguousarray(h1e, dtype=numpy.float64)
        sym = [] if orbsym is None else [int(g) % 10 for g in numpy.asarray(orbsym).ravel()]
        wfn = -1 if wfnsym is None else int(wfnsym) % 10
        self._h = _core.Hamiltonian(h1e, _eri_8fold(eri, norb), norb, self.nelec[0], self.nelec[1], float(ecore),
                                    sym, wfn)
        self.shape = tuple(self._h.shape)
        self.ecore = float(ecore)

    @property
    def size(self):
        """Determinants of the space (those of wfnsym only, where given)."""
        return self._h.size

    def apply(self, c):
        """H c (no ecore) for an (na, nb) vector, or for each of a stack of them (k, na, nb)."""
        x = _dense(c, self.shape, "c")
        y = self._h.apply(x)
        return y.reshape(numpy.shape(c)) if numpy.ndim(c) != 1 else y.ravel()

    def diagonal(self):
        """The diagonal (no ecore) as an (na, nb) array, zero outside the space."""
        return self._h.diagonal().reshape(self.shape)

    def solve(self, nroots=1, tol=1e-6, max_cycle=100, max_space=0, ci0=None):
        """The nroots lowest eigenpairs by Davidson to residual norm tol: (energies + ecore, vectors (nroots, na, nb),
        residual norms, converged, iterations). ci0: start vectors (one (na, nb) array, or several)."""
        start = None if ci0 is None else _dense(ci0, self.shape, "ci0")
        e, v, r, conv, it = self._h.solve(int(nroots), float(tol), int(max_cycle), int(max_space), start)
        return numpy.asarray(e), v.reshape((nroots,) + self.shape), numpy.asarray(r), conv, it


def density_matrices(c, norb, nelec, spins=False):
    """Density matrices of the CI vector c ((na, nb) or flat), PySCF's conventions (fci.direct_spin1):
    dm1[p, q] = <q+ p>, dm2[p, q, r, s] = <p+ r+ s q>, spin-summed; with spins also dm1a, dm1b, dm2aa, dm2ab, dm2bb.
    Returns a dict of arrays."""
    norb = int(norb)
    na, nb = _nelec(nelec)
    shape = (num_strings(norb, na), num_strings(norb, nb))
    x = _dense(c, shape, "c")
    if x.shape[0] != 1:
        raise ValueError("cispmv.density_matrices: one vector at a time")
    out = _core.density_matrices(x[0], norb, na, nb, bool(spins))
    return {k: v.reshape((norb,) * (2 if k.startswith("dm1") else 4)) for k, v in out.items()}
