import sys, time
from pyscf import fci, lib
from pyscf.tools import fcidump
d = fcidump.read(sys.argv[1], molpro_orbsym=True)
norb, nelec = d["NORB"], d["NELEC"]
n = int(sys.argv[2])
s = fci.direct_spin1.FCI(); s.conv_tol=1e-10; s.max_cycle=200; s.verbose=5
t=time.time()
e,_ = s.kernel(d["H1"], d["H2"], norb, (nelec//2, nelec//2), ecore=d["ECORE"], nroots=n)
print("E", e, time.time()-t)
