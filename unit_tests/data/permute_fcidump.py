#!/usr/bin/env python3
"""Writes an FCIDUMP with its orbitals in irrep-blocked (Pitzer) order, as Psi4 and Molpro write them.

    python3 permute_fcidump.py h2o_631g.fcidump h2o_631g_pitzer.fcidump

Orbital p of the output is the p-th orbital of the input when the orbitals are sorted by ORBSYM (stable,
so the energy order is kept within an irrep). Integrals, ORBSYM and orbital energies are renumbered; the
Hamiltonian, and so every CI energy, is unchanged, while "the first NELEC/2 orbitals" are no longer the
Hartree-Fock determinant: the test of cispmv's reference determinant (unit_tests/tst_ci.hpp). Needs only
the Python standard library.
"""
import re
import sys


def main(src, dst):
    text = open(src).read()
    end = re.search(r"(&END|/)\s*\n", text)
    header, body = text[: end.start()], text[end.end():]
    orbsym = [int(x) for x in re.search(r"ORBSYM\s*=\s*([\d,\s]+?)\s*,?\s*(ISYM|\w+\s*=|$)", header).group(1).replace(",", " ").split()]
    order = sorted(range(len(orbsym)), key=lambda p: (orbsym[p], p))  # new -> old
    new_of_old = {old + 1: new + 1 for new, old in enumerate(order)}
    new_orbsym = [orbsym[old] for old in order]
    header = re.sub(r"ORBSYM\s*=\s*[\d,\s]+?(?=\s*,?\s*ISYM)", "ORBSYM=" + ",".join(map(str, new_orbsym)), header)
    out = [header.rstrip() + "\n &END\n"]
    for line in body.splitlines():
        f = line.split()
        if len(f) != 5:
            continue
        idx = [new_of_old.get(int(i), 0) for i in f[1:]]
        out.append("%s %d %d %d %d\n" % (f[0], *idx))
    open(dst, "w").write("".join(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
