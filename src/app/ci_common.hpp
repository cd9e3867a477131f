#pragma once
// What the single-process and the distributed `cispmv ci` share: the method's name and the
// reference the options ask for, the --json output.
#include "commands.hpp"

#include "cispmv/ci.hpp"
#include "cispmv/solvers/davidson_options.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::app {

/// Reads of the matrix `--format auto` plans for: a Davidson solve's iterations (H2O/6-31G full CI on
/// an H100: 14, 17 and 20 for 1, 5 and 10 roots).
inline constexpr double davidson_reads = 20.0;

/// Bytes of Davidson's vectors for `rows` rows, `roots` roots and `guards` blocks' guards (the irreps of
/// irrep_blocks; see DavidsonOptions::row_blocks) with its default subspace (solvers::davidson_memory_plan: V and
/// AV, residuals, restart scratch, and the row-major blocks of the block products) on the default execution space.
inline double davidson_vector_bytes(int roots, double rows, int guards = 0, int max_subspace = 0) {
  solvers::DavidsonOptions o;
  o.num_roots = roots;
  o.max_subspace = max_subspace;
  return solvers::davidson_memory_plan<Kokkos::DefaultExecutionSpace>(static_cast<std::size_t>(rows), o, guards, true)
      .bytes;
}

/// How many irreps the space's determinants have (1 when it is restricted to one): from the irreps of the alpha
/// and beta strings of each block of the space (O(strings)).
inline int irrep_count(const ci::DeterminantSpace& space) {
  if (space.irrep != 0) return 1;
  const std::size_t nkb = static_cast<std::size_t>(space.beta.max_rank()) + 1;
  auto irreps_of_rank = [](const ci::SpinStrings& s, std::size_t k) {
    std::uint32_t mask = 0;
    for (std::size_t j = s.rank_offset[k]; j < s.rank_offset[k + 1]; ++j) mask |= 1u << s.irrep[j];
    return mask;
  };
  std::uint32_t all = 0;
  for (std::size_t ka = 0; ka + 1 < space.alpha.rank_offset.size(); ++ka) {
    for (std::size_t kb = 0; kb < nkb; ++kb) {
      if (space.block_start[ka * nkb + kb] < 0) continue;
      const std::uint32_t a = irreps_of_rank(space.alpha, ka), b = irreps_of_rank(space.beta, kb);
      for (int i = 0; i < 8; ++i) {
        for (int j = 0; j < 8; ++j) {
          if (((a >> i) & 1u) && ((b >> j) & 1u)) all |= 1u << (i ^ j);
        }
      }
    }
  }
  int n = 0;
  for (; all != 0; all &= all - 1) ++n;
  return n;
}

/// The irrep (0-7) of each determinant of the rows [first, end), where the space's determinants have
/// more than one and the Hamiltonian of `dump` couples none of them (ci::irreps_uncoupled: the
/// integrals obey ORBSYM): Davidson's row_blocks (a root of an irrep that the start vectors do not
/// reach would otherwise be missed; see DavidsonOptions::row_blocks). Else empty.
inline std::vector<int> irrep_blocks(const ci::FciDump& dump, const ci::DeterminantSpace& space, std::size_t first,
                                     std::size_t end) {
  if (irrep_count(space) < 2 || !ci::irreps_uncoupled(dump, space)) return {};
  std::vector<int> blocks(end - first);
  space.for_each_determinant([&](std::int32_t ja, std::int32_t jb, std::size_t i) {
    if (i >= first && i < end) {
      blocks[i - first] = static_cast<int>(space.alpha.irrep[static_cast<std::size_t>(ja)] ^
                                           space.beta.irrep[static_cast<std::size_t>(jb)]);
    }
  });
  return blocks;
}

/// The line `cispmv ci` prints for a solve over several irreps: in how many of them the Davidson's
/// guard settled, i.e. showed the irrep's next root above the last root asked for (DavidsonOptions::
/// row_blocks; an irrep whose whole basis went into the roots has no guard).
inline std::string guards_line(int guards, int irreps) {
  return "irreps: " + std::to_string(irreps) + ", each searched; in " + std::to_string(guards) +
         " the next root lies above the last root asked for";
}

/// "full CI", "CISD", ... for a space.
inline std::string method_name(const ci::DeterminantSpace& space) {
  const int full = std::min(space.num_alpha, space.num_orbitals - space.num_alpha) +
                   std::min(space.num_beta, space.num_orbitals - space.num_beta);
  if (space.max_level >= full) return "full CI";
  static const char* names[] = {"HF (reference only)", "CIS", "CISD", "CISDT", "CISDTQ"};
  if (space.max_level <= 4) return names[space.max_level];
  return "CI up to excitation level " + std::to_string(space.max_level);
}

/// The ORBSYM numbering --orbsym names.
inline ci::OrbsymNumbering orbsym_numbering(const CiCommandOptions& o) {
  return o.orbsym == "pyscf"    ? ci::OrbsymNumbering::pyscf
         : o.orbsym == "molpro" ? ci::OrbsymNumbering::molpro
                                : ci::OrbsymNumbering::automatic;
}

/// The reference the options ask for (automatic when none).
inline ci::ReferenceRequest reference_request(const CiCommandOptions& o) {
  ci::ReferenceRequest r;
  if (!o.occupied_alpha.empty() || !o.occupied_beta.empty()) {
    if (o.occupied_alpha.empty() || o.occupied_beta.empty()) {
      throw std::invalid_argument("cispmv ci: --alpha and --beta go together (the occupied orbitals of each spin)");
    }
    r.alpha = ci::parse_orbital_list(o.occupied_alpha, "--alpha");
    r.beta = ci::parse_orbital_list(o.occupied_beta, "--beta");
  }
  if (!o.docc.empty()) r.docc = ci::parse_irrep_counts(o.docc, "--docc");
  if (!o.socc.empty()) r.socc = ci::parse_irrep_counts(o.socc, "--socc");
  return r;
}

/// The --json output: to `out` alone for "-", else into the file (its writability was checked before
/// the run).
inline void write_ci_json(const nlohmann::json& j, const std::string& path, std::ostream& out) {
  if (path == "-") {
    out << j.dump(2) << std::endl;
    return;
  }
  std::ofstream f(path, std::ios::trunc);
  if (!(f << j.dump(2) << "\n")) throw std::runtime_error("cispmv ci: cannot write " + path);
}

}  // namespace cispmv::app
