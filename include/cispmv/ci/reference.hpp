#pragma once
/// \file ci/reference.hpp
/// The reference determinant of a truncated CI: the determinant the excitation levels count from.
/// Chosen as quantum chemistry programs do (aufbau on orbital energies, honouring the target irrep),
/// or given by the user as occupied orbitals or as occupations per irrep (Psi4's DOCC / SOCC).

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"

#include <string>
#include <vector>

namespace cispmv::ci {

/// What the user asked for. Empty: automatic (see choose_reference). Either explicit orbitals or
/// occupations per irrep, not both.
struct ReferenceRequest {
  std::vector<int> alpha;  ///< occupied alpha orbitals, 0-based
  std::vector<int> beta;   ///< occupied beta orbitals, 0-based
  std::vector<int> docc;   ///< doubly occupied orbitals per irrep (ORBSYM numbering 1..: entry h-1 for irrep h)
  std::vector<int> socc;   ///< singly occupied (alpha) orbitals per irrep; empty: none
  bool automatic() const { return alpha.empty() && beta.empty() && docc.empty() && socc.empty(); }
};

/// The reference determinant and how it was found.
struct Reference {
  Determinant determinant;
  std::string method;                    ///< how it was chosen, for the report
  std::vector<double> orbital_energies;  ///< the orbital energies aufbau used (alpha, Fock diagonal or the file's)
  double energy = 0.0;                   ///< <reference|H|reference> without the core energy
};

/// Chooses the reference determinant of `dump` with (NELEC + MS2)/2 alpha and (NELEC - MS2)/2 beta
/// electrons.
///
/// Automatic: aufbau (lowest orbital energies occupied, each spin separately, ties by orbital number)
/// on the file's orbital energies when it has them, otherwise on the diagonal of the Fock matrix of the
/// reference itself, found self-consistently: start from the core Hamiltonian h(p,p), occupy, compute
///   f_alpha(p) = h(p,p) + sum_{q in alpha} [(pp|qq) - (pq|qp)] + sum_{q in beta} (pp|qq)
/// (and f_beta alike), occupy again, until the occupation repeats (the lowest-energy determinant of a
/// cycle is kept). With `restrict_to_isym`, a determinant of another irrep than ISYM is moved to ISYM by
/// the single excitation of least orbital-energy cost that does it.
///
/// By request: the given orbitals (checked: counts, range, duplicates, and the irrep if restricted),
/// or per irrep the lowest-energy orbitals of that irrep (DOCC in both spins, SOCC in alpha only; the
/// sums must be the electron counts). Throws std::invalid_argument naming the FCIDUMP's field that
/// disagrees.
Reference choose_reference(const FciDump& dump, bool restrict_to_isym, const ReferenceRequest& request = {});

/// Parses a list of 1-based orbital numbers with ranges, e.g. "1-3,5,7-8", into 0-based orbitals.
/// Throws std::invalid_argument naming `what` (the option) on malformed text.
std::vector<int> parse_orbital_list(const std::string& text, const std::string& what);

/// Parses counts per irrep, e.g. "3,0,1,1" (Psi4's DOCC order is the irrep order of ORBSYM).
std::vector<int> parse_irrep_counts(const std::string& text, const std::string& what);

/// "alpha 1-5, beta 1-5; DOCC [3,0,1,1] SOCC [0,0,0,0]": occupied orbitals (1-based, the file's
/// numbering) and occupations per irrep.
std::string describe_determinant(const Determinant& d, int num_orbitals, const std::vector<int>& orbsym);

}  // namespace cispmv::ci
