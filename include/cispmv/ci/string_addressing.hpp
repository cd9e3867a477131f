#pragma once
/// \file ci/string_addressing.hpp
/// Every occupation string of k electrons in n orbitals, in increasing value (the order of PySCF's `cistring`:
/// address sum_i C(o_i, i + 1) over the occupied orbitals o_0 < o_1 < ...), and what a CI vector laid out as a dense
/// (alpha strings x beta strings) array needs: the address of a string, each string's single replacements
/// (PySCF's link tables), and where each determinant of a DeterminantSpace sits in such an array. The dense layout
/// is how a CI vector travels to and from Python (python/) and what the density matrices (ci/rdm.hpp) read.

#include "cispmv/ci/determinants.hpp"

#include <cstdint>
#include <vector>

namespace cispmv::ci {

/// C(n, k) for 0 <= k <= n <= 64 (0 outside), exactly; std::overflow_error where it exceeds int64.
std::int64_t binomial(int n, int k);

/// The C(n, k) strings of k electrons in n orbitals (n <= 64), in increasing value.
std::vector<std::uint64_t> all_strings(int n, int k);

/// The position of `string` among all_strings(n, popcount(string)): sum over its occupied orbitals o_0 < o_1 < ...
/// of C(o_i, i + 1).
std::int64_t string_address(std::uint64_t string);

/// Single replacements of every string of k electrons in n orbitals (all_strings order). For string K, its entries
/// [K * per_string, (K + 1) * per_string) list each I and (r, s) with <K| a+_r a_s |I> = sign != 0: r occupied in
/// K, s empty in K or s = r (then I = K, sign +1), so that <K|E_rs|c> = sum of sign * c(I) over K's entries with pair
/// r * n + s. sign = (-1)^(electrons strictly between r and s), whatever order a string's creators are written in.
struct StringLinks {
  int num_orbitals = 0;
  int num_electrons = 0;
  std::int64_t num_strings = 0;
  int per_string = 0;                ///< k (n - k + 1)
  std::vector<std::int32_t> source;  ///< I's address
  std::vector<std::int16_t> pair;    ///< r * n + s
  std::vector<std::int8_t> sign;     ///< +1 or -1
};

/// The link table of k electrons in n orbitals; std::invalid_argument for impossible counts or more than 2^31
/// strings.
StringLinks string_links(int n, int k);

/// Where each determinant of `space` sits in the dense (alpha strings x beta strings) array of all strings of its
/// orbitals and electrons: at [index], alpha address * C(n, num_beta) + beta address. For a listed space and one of
/// strings alone.
std::vector<std::int64_t> dense_positions(const DeterminantSpace& space);

}  // namespace cispmv::ci
