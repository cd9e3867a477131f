#pragma once
// What the single-process and the distributed `cispmv ci` share: the method's name and the
// reference the options ask for, the --json output.
#include "commands.hpp"

#include "cispmv/ci.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>

namespace cispmv::app {

/// Reads of the matrix `--format auto` plans for: a Davidson solve's iterations (H2O/6-31G full CI on
/// an H100, perf/results/2026-11-23-h100-session3/: 14, 17 and 20 for 1, 5 and 10 roots).
inline constexpr double davidson_reads = 20.0;

/// Bytes of Davidson's vectors for `rows` rows and `roots` roots: V and AV (max(24, 8 roots) columns
/// each), residuals, restart scratch, and the row-major blocks of the block products (roots > 1;
/// an even number of columns each).
inline double davidson_vector_bytes(int roots, double rows) {
  const int subspace = std::max(24, 8 * roots);
  const int block = std::min(16, roots);
  const double blocks = roots > 1 ? 2.0 * (block + block % 2) : 0.0;
  return (2.0 * subspace + 4.0 * roots + 4.0 + blocks) * rows * sizeof(double);
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
