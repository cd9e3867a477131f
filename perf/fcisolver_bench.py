#!/usr/bin/env python3
"""cispmv's PySCF FCI solver against PySCF's direct_spin1, side by side in one process (docs/python.md).

    python3 perf/fcisolver_bench.py [--cas 12 14] [--casscf 12 14] [--macro N] [--json FILE]

RHF orbitals, no symmetry. For each active space (n electrons in n orbitals of N2/cc-pVDZ, R = 1.098 A) the CASCI
integrals go to both solvers (conv_tol 1e-10 each): `kernel` from no start vector, then `make_rdm12` of its
vector twice (the first call of a space builds its tables; CASSCF's later calls find them), timed; checked first:
the energies agree to 1e-8 and cispmv's density matrices of PySCF's vector equal PySCF's to 1e-9.
Then a CASSCF with each solver (conv_tol 1e-9) of a full valence space: ethylene/cc-pVDZ's (12e, 12o) at
--casscf 12, staggered ethane/cc-pVDZ's (14e, 14o) at --casscf 14 (N2's (12e, 12o), which holds a 1s orbital,
drifted for 50 macro iterations with cispmv's solver, by its approx_kernel or by PySCF's own response steps through
contract_2e): its wall time, the time inside the fcisolver's calls and their count, and the energies, which must
agree to 1e-7. With --macro N both CASSCFs stop after N macro iterations (PySCF's (14e, 14o) takes ~2 minutes an
iteration on 16 cores; their energies there differ by the solvers' CI response steps: cispmv's approx_kernel, PySCF's
contract_2e), and cispmv's then runs on to convergence alone; PySCF's own CASSCF, started from its orbitals and CI
vector, must stay at its energy (to 1e-7).
Prints a table and writes JSON. Needs PySCF and the cispmv package (python3 -m pip install ./python).
"""
import argparse
import json
import os
import platform
import subprocess
import time

import numpy
from pyscf import fci, gto, lib, mcscf, scf

import cispmv
import cispmv.fci


class Timed:
    """An fcisolver whose protocol calls are timed (seconds and count per method)."""

    METHODS = ("kernel", "make_rdm1", "make_rdm12", "absorb_h1e", "contract_2e", "approx_kernel", "spin_square")

    def __init__(self, solver):
        self.solver, self.seconds, self.calls = solver, {}, {}
        for name in self.METHODS:
            if hasattr(solver, name):
                setattr(self, name, self._wrap(name, getattr(solver, name)))

    def _wrap(self, name, f):
        def timed(*args, **kwargs):
            t = time.perf_counter()
            out = f(*args, **kwargs)
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t
            self.calls[name] = self.calls.get(name, 0) + 1
            return out
        return timed

    def __getattr__(self, name):
        return getattr(self.solver, name)

    def __setattr__(self, name, value):
        if name in ("solver", "seconds", "calls") or name in Timed.METHODS:
            object.__setattr__(self, name, value)
        else:
            setattr(self.solver, name, value)


def solvers(mol):
    ours = cispmv.fci.FCISolver(mol)
    ref = fci.direct_spin1.FCISolver(mol)
    for s in (ours, ref):
        s.conv_tol = 1e-10
        s.max_cycle = 200
    return {"cispmv": ours, "pyscf": ref}


def ci_calls(mf, n):
    mc = mcscf.CASCI(mf, n, n)
    h1e, ecore = mc.get_h1eff()
    eri = mc.get_h2eff()
    nelec = mc.nelecas
    out = {}
    vectors = {}
    for name, s in solvers(mf.mol).items():
        t = time.perf_counter()
        e, c = s.kernel(h1e, eri, n, nelec, ecore=ecore)
        t_kernel = time.perf_counter() - t
        t_rdm = []
        for _ in range(2):
            t = time.perf_counter()
            s.make_rdm12(c, n, nelec)
            t_rdm.append(time.perf_counter() - t)
        vectors[name] = c
        out[name] = {"energy": float(e), "kernel_s": t_kernel, "make_rdm12_s": t_rdm[0], "make_rdm12_again_s": t_rdm[1]}
    de = abs(out["cispmv"]["energy"] - out["pyscf"]["energy"])
    assert de < 1e-8, f"CAS({n},{n}): energies differ by {de:.2e}"
    ref = fci.direct_spin1.make_rdm12(vectors["pyscf"], n, nelec)
    ours = cispmv.fci.FCISolver(mf.mol).make_rdm12(vectors["pyscf"], n, nelec)
    for a, b in zip(ours, ref):
        assert numpy.max(numpy.abs(a - b)) < 1e-9, f"CAS({n},{n}): density matrices differ"
    dets = cispmv.num_strings(n, nelec[0]) * cispmv.num_strings(n, nelec[1])
    return {"active": [n, n], "determinants": dets, **out,
            "kernel_speedup": out["pyscf"]["kernel_s"] / out["cispmv"]["kernel_s"],
            "make_rdm12_speedup": out["pyscf"]["make_rdm12_s"] / out["cispmv"]["make_rdm12_s"],
            "make_rdm12_again_speedup": out["pyscf"]["make_rdm12_again_s"] / out["cispmv"]["make_rdm12_again_s"]}


def run_casscf(mf, n, solver, macro, start=None):
    """One CASSCF with `solver` (from `start` = (orbitals, CI vector) if given): its record and the CASSCF object."""
    mc = mcscf.CASSCF(mf, n, n)
    timed = Timed(solver)
    mc.fcisolver = timed
    mc.conv_tol = 1e-9
    if macro:
        mc.max_cycle_macro = macro
    t = time.perf_counter()
    mc.kernel(*(start or ()))
    wall = time.perf_counter() - t
    assert macro or mc.converged, f"CASSCF({n},{n}) did not converge"
    return {"energy": float(mc.e_tot), "converged": bool(mc.converged), "wall_s": wall,
            "fcisolver_s": sum(timed.seconds.values()), "calls": timed.calls, "seconds": timed.seconds}, mc


def casscf(mf, n, macro):
    """Both solvers' CASSCF (each stopped after `macro` macro iterations if given); with `macro`, then cispmv's to
    convergence and PySCF's own CASSCF from its orbitals and vector, which must stay at its energy (to 1e-7)."""
    out = {name: run_casscf(mf, n, s, macro)[0] for name, s in solvers(mf.mol).items()}
    de = abs(out["cispmv"]["energy"] - out["pyscf"]["energy"])
    assert macro or de < 1e-7, f"CASSCF({n},{n}): energies differ by {de:.2e}"
    r = {"active": [n, n], "max_cycle_macro": macro, **out, "energy_difference": de,
         "fcisolver_speedup": out["pyscf"]["fcisolver_s"] / out["cispmv"]["fcisolver_s"],
         "wall_speedup": out["pyscf"]["wall_s"] / out["cispmv"]["wall_s"]}
    if macro:
        r["cispmv_converged"], mc = run_casscf(mf, n, solvers(mf.mol)["cispmv"], None)
        r["pyscf_from_cispmv"] = run_casscf(mf, n, solvers(mf.mol)["pyscf"], None, (mc.mo_coeff, mc.ci))[0]
        de = abs(r["pyscf_from_cispmv"]["energy"] - r["cispmv_converged"]["energy"])
        assert de < 1e-7, f"CASSCF({n},{n}): PySCF's CASSCF from cispmv's converged point moved by {de:.2e}"
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cas", type=int, nargs="*", default=[12, 14], help="active spaces (n electrons, n orbitals)")
    p.add_argument("--casscf", type=int, nargs="*", default=[12], help="CASSCF active spaces")
    p.add_argument("--macro", type=int, help="stop both CASSCFs after this many macro iterations (then cispmv's alone "
                   "to convergence)")
    p.add_argument("--json", help="write the results here")
    a = p.parse_args()
    mol = gto.M(atom="N 0 0 0; N 0 0 1.098", basis="cc-pvdz", verbose=0)
    mf = scf.RHF(mol).run()
    ethylene = gto.M(atom="C 0 0 0.6695; C 0 0 -0.6695; H 0 0.9289 1.2321; H 0 -0.9289 1.2321; "
                          "H 0 0.9289 -1.2321; H 0 -0.9289 -1.2321", basis="cc-pvdz", verbose=0)
    # staggered ethane: C-C 1.536 A, C-H 1.091 A, CCH 111.2 degrees
    z, rho = 0.768 + 1.091 * numpy.cos(numpy.radians(68.8)), 1.091 * numpy.sin(numpy.radians(68.8))
    hydrogens = [(rho * numpy.cos(numpy.radians(phi)), rho * numpy.sin(numpy.radians(phi)), sign * z)
                 for sign, phis in ((1, (0, 120, 240)), (-1, (60, 180, 300))) for phi in phis]
    ethane = gto.M(atom="C 0 0 0.768; C 0 0 -0.768; " + "; ".join("H %.6f %.6f %.6f" % h for h in hydrogens),
                   basis="cc-pvdz", verbose=0)
    valence = {12: ("C2H4", ethylene), 14: ("C2H6", ethane)}
    for n in a.casscf:
        if n not in valence:
            p.error(f"--casscf {n}: the full valence spaces are 12 (ethylene) and 14 (ethane)")
    mf_casscf = {n: scf.RHF(valence[n][1]).run() for n in set(a.casscf)}
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        commit = ""
    result = {"molecule": "N2/cc-pVDZ, R = 1.098 A, C1; CASSCF: C2H4 (12) and C2H6 (14) /cc-pVDZ, C1", "backend": cispmv.backend(), "host": platform.node(),
              "cpu_threads": lib.num_threads(), "commit": commit, "date": time.strftime("%Y-%m-%d"),
              "ci": [], "casscf": []}
    for n in a.cas:
        r = ci_calls(mf, n)
        result["ci"].append(r)
        print(f"CAS({n},{n}) {r['determinants']} determinants: kernel {r['pyscf']['kernel_s']:.2f} s (PySCF, "
              f"{result['cpu_threads']} threads) / {r['cispmv']['kernel_s']:.3f} s (cispmv on {result['backend']}) "
              f"= {r['kernel_speedup']:.1f}x; make_rdm12 {r['pyscf']['make_rdm12_s']:.2f} / "
              f"{r['cispmv']['make_rdm12_s']:.3f} s = {r['make_rdm12_speedup']:.1f}x, again {r['pyscf']['make_rdm12_again_s']:.2f} / "
              f"{r['cispmv']['make_rdm12_again_s']:.3f} s = {r['make_rdm12_again_speedup']:.1f}x", flush=True)
    for n in a.casscf:
        r = casscf(mf_casscf[n], n, a.macro)
        result["casscf"].append(r)
        stop = f" (both stopped after {a.macro} macro iterations)" if a.macro else ""
        print(f"{valence[n][0]} CASSCF({n},{n}){stop}: wall {r['pyscf']['wall_s']:.1f} / {r['cispmv']['wall_s']:.1f} s "
              f"({r['wall_speedup']:.1f}x), in the fcisolver {r['pyscf']['fcisolver_s']:.1f} / "
              f"{r['cispmv']['fcisolver_s']:.2f} s ({r['fcisolver_speedup']:.1f}x); E {r['pyscf']['energy']:.10f} / "
              f"{r['cispmv']['energy']:.10f}", flush=True)
        if a.macro:
            c = r["cispmv_converged"]
            print(f"{valence[n][0]} CASSCF({n},{n}) with cispmv to convergence: wall {c['wall_s']:.1f} s, in the "
                  f"fcisolver {c['fcisolver_s']:.2f} s, calls {c['calls']}; E {c['energy']:.10f}", flush=True)
            v = r["pyscf_from_cispmv"]
            print(f"  PySCF's CASSCF from that point: E {v['energy']:.10f}, converged {v['converged']}, "
                  f"{v['wall_s']:.1f} s, calls {v['calls']}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
