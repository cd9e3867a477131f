"""PySCF's FCI-solver protocol on cispmv: ``mc.fcisolver = cispmv.fci.FCISolver(mol)``.

CASCI and CASSCF call ``kernel`` (the CI problem of each set of orbitals), ``make_rdm1`` / ``make_rdm12`` (the
density matrices that the orbital optimisation needs), ``absorb_h1e`` + ``contract_2e`` (the products of CASSCF's
CI response) and ``spin_square``; all of them run on cispmv's factored Hamiltonian and density-matrix kernels
(cispmv.Hamiltonian, cispmv.density_matrices). With symmetry (``orbsym`` and ``wfnsym``, which PySCF's symmetry-adapted
CASCI/CASSCF set) the space holds only determinants of the wanted irrep. An attribute of PySCF's solvers that this
one does not provide (e.g. what ``mc.newton()`` needs: make_hdiag, trans_rdm12) raises AttributeError naming it.

Convergence: ``conv_tol`` is PySCF's energy tolerance; the Davidson stops at residual norm ``sqrt(conv_tol) / 10``:
the energy's error, ~ residual^2 / gap, stays below conv_tol for gaps down to 0.01 Eh. (N2/cc-pVDZ's CASSCF(10e, 10o),
conv_tol 1e-9: 14 macro iterations, against 16 at ``sqrt(conv_tol)``, the looser half of PySCF's own test.)
"""

import sys

import numpy
from pyscf import lib
from pyscf.fci import addons, spin_op
from pyscf.fci import direct_spin1_symm

import cispmv

__all__ = ["FCISolver", "FCI"]


class _Absorbed:
    """What absorb_h1e returns and contract_2e takes: fac * (the one-electron part folded into the two-electron one),
    kept as the integrals it came from, with the Hamiltonian built once for all the products that use it."""

    def __init__(self, h1e, eri, norb, nelec, fac, solver):
        self.h1e, self.eri, self.norb, self.nelec, self.fac = h1e, eri, norb, nelec, fac
        self.solver = solver
        self._hamiltonian = None

    def hamiltonian(self):
        if self._hamiltonian is None:
            self._hamiltonian = self.solver._hamiltonian(self.h1e, self.eri, self.norb, self.nelec, 0.0)
        return self._hamiltonian


class FCISolver(lib.StreamObject):
    """A PySCF fcisolver on cispmv (see the module's docstring). Settings as PySCF's: conv_tol, max_cycle, max_space
    (0: cispmv's choice), nroots, spin, orbsym, wfnsym, davidson_only (always)."""

    pspace_size = 0  # (read by CASSCF's CI response: no explicit P-space, every product through contract_2e)

    def __init__(self, mol=None, **kwargs):
        self.mol = mol
        self.stdout = mol.stdout if mol is not None else sys.stdout
        self.verbose = mol.verbose if mol is not None else lib.logger.NOTE
        self.max_memory = mol.max_memory if mol is not None else lib.param.MAX_MEMORY
        self.conv_tol = 1e-10
        self.max_cycle = 100
        self.max_space = 0
        self.nroots = 1
        self.spin = None
        self.orbsym = None
        self.wfnsym = None
        self.davidson_only = True
        self.converged = False
        self.eci = None
        self.ci = None
        self.norb = None
        self.nelec = None
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __getattr__(self, name):
        # only reached for attributes nothing defines: PySCF's optional protocol (hasattr) sees False, a call a message
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"cispmv.fci.FCISolver does not provide '{name}' (PySCF's direct_spin1 does; cispmv "
                             "implements kernel, make_rdm1(s), make_rdm12(s), spin_square, absorb_h1e, contract_2e)")

    def dump_flags(self, verbose=None):
        log = lib.logger.new_logger(self, verbose)
        log.info("******** cispmv.fci.FCISolver on %s ********", cispmv.backend())
        log.info("conv_tol = %g (residual %g), max_cycle = %d, nroots = %d", self.conv_tol,
                 0.1 * numpy.sqrt(self.conv_tol), self.max_cycle, self.nroots)
        if self.orbsym is not None:
            log.info("orbsym = %s, wfnsym = %s", list(numpy.asarray(self.orbsym) % 10), self.wfnsym)
        return self

    # ------------------------------------------------------------------------------------------ the CI problem
    def _symmetry(self, norb, nelec, orbsym=None, wfnsym=None):
        orbsym = self.orbsym if orbsym is None else orbsym
        if orbsym is None or len(orbsym) == 0:
            return None, None
        orbsym = numpy.asarray(orbsym)
        wfnsym = self.wfnsym if wfnsym is None else wfnsym
        wfn = direct_spin1_symm._id_wfnsym(self, norb, nelec, orbsym, wfnsym)
        return orbsym % 10, int(wfn) % 10

    def _hamiltonian(self, h1e, eri, norb, nelec, ecore, orbsym=None, wfnsym=None):
        sym, wfn = self._symmetry(norb, nelec, orbsym, wfnsym)
        return cispmv.Hamiltonian(h1e, eri, norb, nelec, ecore=ecore, orbsym=sym, wfnsym=wfn)

    def kernel(self, h1e, eri, norb, nelec, ci0=None, ecore=0, nroots=None, tol=None, max_cycle=None,
               max_space=None, orbsym=None, wfnsym=None, **kwargs):
        """The nroots lowest states of h1e, eri (+ ecore): (e, ci) as PySCF's FCI solvers return them (a float and an
        (na, nb) array for one root; arrays and a list of them for several)."""
        nelec = addons._unpack_nelec(nelec, self.spin)
        nroots = self.nroots if nroots is None else nroots
        tol = self.conv_tol if tol is None else tol
        max_cycle = self.max_cycle if max_cycle is None else max_cycle
        max_space = self.max_space if max_space is None else max_space
        h = self._hamiltonian(h1e, eri, norb, nelec, ecore, orbsym, wfnsym)
        start = self._start(ci0, h.shape, nroots)
        e, v, _, conv, _ = h.solve(nroots, 0.1 * numpy.sqrt(tol), max_cycle, max_space or 0, start)
        self.norb, self.nelec, self.converged = norb, nelec, bool(conv)
        if nroots == 1:
            self.eci, self.ci = float(e[0]), v[0]
        else:
            self.eci, self.ci = e, [v[k] for k in range(nroots)]
        return self.eci, self.ci

    @staticmethod
    def _start(ci0, shape, nroots):
        """Start vectors from PySCF's ci0 (None, a bool from CASSCF, an array, flat or (na, nb), or a list): at least
        nroots of them, else none."""
        if ci0 is None or isinstance(ci0, (bool, numpy.bool_)):
            return None
        vectors = list(ci0) if isinstance(ci0, (list, tuple)) else [ci0]
        size = shape[0] * shape[1]
        out = []
        for c in vectors:
            c = numpy.asarray(c, dtype=numpy.float64)
            if c.size != size:
                raise ValueError(f"cispmv.fci.FCISolver: ci0 has {c.size} values for a {shape[0]} x {shape[1]} space")
            if numpy.any(c):
                out.append(c.ravel())
        return numpy.array(out) if len(out) >= nroots else None

    def approx_kernel(self, h1e, eri, norb, nelec, ci0=None, ecore=0, tol=None, max_cycle=None, **kwargs):
        """CASSCF's CI response: a few Davidson steps from ci0."""
        return self.kernel(h1e, eri, norb, nelec, ci0=ci0, ecore=ecore, tol=tol, max_cycle=max_cycle or 4,
                           nroots=1)

    # ------------------------------------------------------------------------------------------ products
    def absorb_h1e(self, h1e, eri, norb, nelec, fac=1):
        """The one-electron part folded into the two-electron one, scaled by fac (PySCF's meaning; for contract_2e)."""
        return _Absorbed(numpy.asarray(h1e), numpy.asarray(eri), norb, addons._unpack_nelec(nelec, self.spin), fac,
                         self)

    def contract_2e(self, eri, fcivec, norb, nelec, link_index=None, **kwargs):
        """sum (pq|rs) E_pq E_rs c for PySCF's absorbed two-electron operator: 2 fac H c for absorb_h1e(..., fac)'s
        result; for an array of integrals, the Hamiltonian whose two-electron part is 2 eri and one-electron part
        sum_q (pq|qs), which is the same sum."""
        nelec = addons._unpack_nelec(nelec, self.spin)
        if isinstance(eri, _Absorbed):
            h, scale = eri.hamiltonian(), 2.0 * eri.fac
        else:
            from pyscf import ao2mo
            eri4 = ao2mo.restore(1, numpy.asarray(eri, dtype=numpy.float64), norb)
            h = self._hamiltonian(numpy.einsum("pqqs->ps", eri4), 2.0 * eri4, norb, nelec, 0.0)
            scale = 1.0
        shape = numpy.shape(fcivec)
        return (scale * h.apply(numpy.asarray(fcivec).reshape(h.shape))).reshape(shape)

    # ------------------------------------------------------------------------------------------ density matrices
    def _rdm(self, fcivec, norb, nelec, spins):
        return cispmv.density_matrices(fcivec, norb, addons._unpack_nelec(nelec, self.spin), spins=spins)

    def make_rdm1(self, fcivec, norb, nelec, link_index=None, **kwargs):
        return self._rdm(fcivec, norb, nelec, False)["dm1"]

    def make_rdm1s(self, fcivec, norb, nelec, link_index=None, **kwargs):
        d = self._rdm(fcivec, norb, nelec, True)
        return d["dm1a"], d["dm1b"]

    def make_rdm12(self, fcivec, norb, nelec, link_index=None, reorder=True, **kwargs):
        if not reorder:
            raise NotImplementedError("cispmv.fci.FCISolver.make_rdm12: reorder=False (the <E_pq E_rs> form)")
        d = self._rdm(fcivec, norb, nelec, False)
        return d["dm1"], d["dm2"]

    def make_rdm12s(self, fcivec, norb, nelec, link_index=None, reorder=True, **kwargs):
        if not reorder:
            raise NotImplementedError("cispmv.fci.FCISolver.make_rdm12s: reorder=False (the <E_pq E_rs> form)")
        d = self._rdm(fcivec, norb, nelec, True)
        return (d["dm1a"], d["dm1b"]), (d["dm2aa"], d["dm2ab"], d["dm2bb"])

    def spin_square(self, fcivec, norb, nelec):
        """(<S^2>, 2S + 1) from the spin-resolved density matrices."""
        (dm1a, dm1b), (dm2aa, dm2ab, dm2bb) = self.make_rdm12s(fcivec, norb, nelec)
        return spin_op.spin_square_general(dm1a, dm1b, dm2aa, dm2ab, dm2bb, numpy.eye(norb))

    def energy(self, h1e, eri, fcivec, norb, nelec):
        """<c|H|c> without a core energy, from the density matrices."""
        from pyscf import ao2mo
        dm1, dm2 = self.make_rdm12(fcivec, norb, nelec)
        eri4 = ao2mo.restore(1, numpy.asarray(eri, dtype=numpy.float64), norb)
        return float(numpy.einsum("pq,qp", h1e, dm1) + 0.5 * numpy.einsum("pqrs,pqrs", eri4, dm2))


def FCI(mol=None, **kwargs):
    """A cispmv FCISolver (PySCF's fci.FCI(mol) spelled for cispmv)."""
    return FCISolver(mol, **kwargs)
