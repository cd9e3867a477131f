// `cispmv stats`, `generate` and `convert`, and loading a matrix by file name or suite name.
#include "commands.hpp"

#include <fmt/format.h>

#include "cispmv/boundary.hpp"
#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/generator.hpp"
#include "cispmv/io.hpp"
#include "cispmv/memory_model.hpp"
#include "cispmv/stats.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace cispmv::app {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

HostCsr load_matrix(const std::string& name_or_path, std::string& description) {
  const auto t0 = std::chrono::steady_clock::now();
  std::error_code ec;
  if (std::filesystem::exists(name_or_path, ec)) {  // a file (or stream): read_matrix opens it once
    HostCsr A = read_matrix(name_or_path);
    description = fmt::format("{} (read in {:.1f} s)", name_or_path, seconds_since(t0));
    return A;
  }
  if (ci::is_hamiltonian_spec(name_or_path)) {
    const ci::HamiltonianSpec spec = ci::parse_hamiltonian_spec(name_or_path);
    HostCsr A = ci::build_hamiltonian(spec);
    description = fmt::format("{} (CI Hamiltonian of {} up to excitation level {}, built in {:.1f} s)", name_or_path,
                              spec.fcidump, spec.level, seconds_since(t0));
    return A;
  }
  const bool looks_like_suite = name_or_path.rfind("paper32k-", 0) == 0 || name_or_path.rfind("scaled-", 0) == 0;
  if (!looks_like_suite) {
    throw std::invalid_argument("'" + name_or_path + "' is neither a readable file nor a suite matrix (" +
                                "paper32k-1..paper32k-10, scaled-<rows>; `cispmv generate --list`) nor a CI " +
                                "Hamiltonian (fcidump:FILE:LEVEL)");
  }
  HostCsr A = generate_suite_matrix(name_or_path, true);
  description = fmt::format("{} (generated in {:.1f} s)", name_or_path, seconds_since(t0));
  return A;
}

int stats_command(const std::string& matrix, int boundary_option, std::ostream& out) {
  std::string description;
  const HostCsr A = load_matrix(matrix, description);
  validate(A);
  const auto choice = choose_boundary(A);
  const int boundary = boundary_option >= 0 ? boundary_option : choice.boundary;
  check_boundary(boundary, A);
  const auto s = compute_stats(A, boundary, choice.reference_width);
  const PaperMemoryModel paper;
  out << "matrix: " << description << "\n";
  out << fmt::format("rows {} cols {} nnz {}\n", s.rows, s.cols, s.nnz);
  out << fmt::format("BOUNDARY {} ({}), reference width {} columns{}\n", boundary,
                     boundary_option >= 0 ? "given" : "automatic", choice.reference_width,
                     choice.reference_detected ? "" : " (no reference region detected)");
  out << fmt::format("reference nnz {} expansion nnz {} longest row {} (row {}) mean row {:.2f} shortest row {}\n",
                     s.reference_nnz, s.expansion_nnz, s.longest_row_length, s.longest_row, s.mean_row_length,
                     s.min_row_length);
  out << fmt::format("sparsity reference {:.6f} expansion {:.6f} total {:.6f}\n", s.reference_sparsity,
                     s.expansion_sparsity, s.total_sparsity);
  out << fmt::format("paper memory model (MiB): csr {:.2f} ell {:.2f} hybrid {:.2f}\n",
                     to_mib(paper.csr(s.rows, s.nnz)), to_mib(paper.ell(s.rows, s.longest_row_length)),
                     to_mib(paper.hybrid(s.rows, boundary, s.expansion_nnz)));
  return 0;
}

int generate_command(const std::string& name, const std::string& output, bool list, std::ostream& out) {
  if (list) {
    for (const auto& n : suite_names()) out << n << "\n";
    return 0;
  }
  if (name.empty() || output.empty()) throw std::invalid_argument("generate needs a name and -o FILE");
  const HostCsr A = generate_suite_matrix(name, true);
  write_matrix(output, A);
  out << fmt::format("wrote {} ({} x {}, {} nonzeros)\n", output, A.num_rows, A.num_cols, A.nnz());
  return 0;
}

int convert_command(const std::string& input, const std::string& output, std::ostream& out) {
  std::string description;
  const HostCsr A = load_matrix(input, description);
  write_matrix(output, A);
  out << fmt::format("wrote {} from {} ({} nonzeros)\n", output, description, A.nnz());
  return 0;
}

}  // namespace cispmv::app
