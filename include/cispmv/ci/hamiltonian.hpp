#pragma once
/// \file ci/hamiltonian.hpp
/// The CI Hamiltonian matrix of a determinant space, assembled into CSR, and its diagonal.

#include <Kokkos_Core.hpp>

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/formats/compressed_sell_encoder.hpp"
#include "cispmv/formats/csr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cispmv::ci {

/// Options of the Hamiltonian builder.
struct HamiltonianOptions {
  double drop_tolerance = 1e-14;  ///< off-diagonal elements with |H_ij| below this are not stored
  /// Integrals that break the ORBSYM symmetry (their orbitals' irreps multiply to a non-symmetric one)
  /// and are at most this large are noise of the integral transformation (PySCF writes ~1e-15): when
  /// all of them are, symmetry-forbidden matrix elements are taken as zero and never computed, which
  /// makes building an unrestricted space ~4x faster (D2h). A larger one, or a negative value here,
  /// makes the builder compute every element and drop by value alone.
  double symmetry_noise = 1e-12;
  /// Called between chunks of rows with the pass ("count" or "fill") and the fraction of rows done;
  /// the builder works in chunks so that long builds can report progress (may be empty).
  std::function<void(const char* pass, double fraction)> progress;
  /// Elements below drop_tolerance leave gaps in the rows (the counting pass counts what the rules can
  /// couple, without computing values); the rows are then packed in place through a buffer of this
  /// many elements (12 bytes each) at a time, not into a second matrix.
  std::size_t compaction_buffer = std::size_t{1} << 25;
  /// Which columns the builder keeps: every one (the default); only those in [first, end), renumbered
  /// from `first` (the matrix is then end - first columns wide); or only those outside [first, end),
  /// numbered as in the space. A distributed row block is built in these two parts, never whole
  /// (mpi::build_split_hamiltonian). The counting pass counts what is kept.
  struct ColumnWindow {
    enum class Keep { all, inside, outside } keep = Keep::all;
    std::int64_t first = 0, end = 0;
  } columns;
};

/// The CI Hamiltonian of `integrals` in `space` (without the core energy) as a CSR matrix in the
/// memory of `Exec`, built there: symmetric, both triangles stored, the diagonal always stored,
/// off-diagonal elements with |H_ij| < drop_tolerance dropped, column indices sorted within each row.
///
/// Design (string driven, no hashing, no sorting). A determinant is a pair of alpha and beta string
/// ids (DeterminantSpace::alpha / beta) and its index is computed from them (index_of). On the host,
/// each string gets its single and same-spin double replacement lists (target string id, the
/// same-spin part of the matrix element, the orbital pair), sorted by target id; these, the packed
/// two-electron integrals and the space's addressing tables are copied to Exec's memory. Row r =
/// (ia, ib) then walks the blocks (alpha rank, beta rank) of the space that its excitations reach,
/// in block order, and in each block merges the alpha targets (ia itself, its singles, its doubles)
/// with, for each, the beta targets it combines with (ib, its singles, and for ia itself its
/// doubles): the columns come out sorted, with the Slater-Condon element of each
/// (Mahmoud et al. 2018, section 2.1). Two passes over the rows in parallel (one thread per row):
/// count (the coupled columns alone, no values), prefix sum, fill (the values; those below the
/// tolerance are dropped and the rows packed afterwards when any were). Work O(nonzeros), extra
/// memory O(strings x excitations per string).
///
/// Instantiated for every enabled backend (Serial, OpenMP, Threads, Cuda, HIP).
template <class Exec>
CsrMatrix<double, int, std::size_t, Exec> build_hamiltonian(const Exec& exec, const FciDump& integrals,
                                                            const DeterminantSpace& space,
                                                            const HamiltonianOptions& options = {});

/// Rows [first, end) of the same matrix (end - first rows, all the space's columns or the window of
/// options.columns; row i is the space's determinant first + i), built on `exec` the same way: a
/// process's block of a distributed Hamiltonian, which then never exists whole anywhere. Throws
/// std::invalid_argument for a row range or a column window outside the space.
template <class Exec>
CsrMatrix<double, int, std::size_t, Exec> build_hamiltonian_rows(const Exec& exec, const FciDump& integrals,
                                                                 const DeterminantSpace& space, std::int64_t first,
                                                                 std::int64_t end,
                                                                 const HamiltonianOptions& options = {});

/// The number of elements the builder's counting pass finds in each of the rows [first, end) (the
/// structurally possible ones, before the drop tolerance, in every column whatever options.columns
/// says), counted on `exec`: the weights that balance a distributed Hamiltonian's row blocks.
template <class Exec>
std::vector<std::uint64_t> hamiltonian_row_counts(const Exec& exec, const FciDump& integrals,
                                                  const DeterminantSpace& space, std::int64_t first, std::int64_t end,
                                                  const HamiltonianOptions& options = {});

/// The same on the host execution space, as a HostCsr.
HostCsr build_hamiltonian(const FciDump& integrals, const DeterminantSpace& space, double drop_tolerance = 1e-14);

/// Exact number of nonzeros of every row of the Hamiltonian of `rows` (a sample of row indices), as
/// the builder's counting pass finds them, on the host: what the memory estimate extrapolates.
std::vector<std::size_t> hamiltonian_row_lengths(const FciDump& integrals, const DeterminantSpace& space,
                                                 const std::vector<std::int64_t>& rows,
                                                 const HamiltonianOptions& options = {});

/// Whether the Hamiltonian the builder makes of these (with these options) couples no two irreps of the
/// space's determinants: true when the space holds one irrep, or when every integral that breaks
/// ORBSYM is noise (HamiltonianOptions::symmetry_noise), so that the builder never computes an element
/// between two irreps. Then each irrep is a block of rows the Davidson may search on its own
/// (solvers::DavidsonOptions::row_blocks); otherwise the irreps are coupled and are no such blocks.
bool irreps_uncoupled(const FciDump& integrals, const DeterminantSpace& space, const HamiltonianOptions& options = {});

/// True when every integral whose orbitals' irreps (`orbsym`, 1..8) multiply to another irrep than the
/// totally symmetric one is at most `noise` in magnitude: then a symmetry-forbidden matrix element is
/// zero (up to that noise of the integral transformation) without computing it.
bool integrals_obey_symmetry(const FciDump& integrals, const std::vector<int>& orbsym, double noise);

/// The diagonal of a host CSR matrix (zero where a row stores none): the Davidson preconditioner.
Kokkos::View<double*, Kokkos::HostSpace> csr_diagonal(const HostCsr& A);

/// The diagonal of a CSR matrix in any memory space, computed on `exec`; for a row block whose row 0
/// is row `first` of the whole matrix, the block's part of the diagonal (entry r is A(r, first + r)).
template <class Exec, class Device>
Kokkos::View<double*, typename Exec::memory_space> csr_diagonal(const Exec& exec,
                                                                const CsrMatrix<double, int, std::size_t, Device>& A,
                                                                std::int64_t first = 0) {
  Kokkos::View<double*, typename Exec::memory_space> d("cispmv::csr_diagonal", static_cast<std::size_t>(A.num_rows));
  const auto row_ptr = A.row_ptr;
  const auto col_idx = A.col_idx;
  const auto values = A.values;
  Kokkos::parallel_for(
      "cispmv::csr_diagonal", Kokkos::RangePolicy<Exec>(exec, 0, A.num_rows), KOKKOS_LAMBDA(const int r) {
        double v = 0.0;
        for (std::size_t k = row_ptr(r); k < row_ptr(r + 1); ++k) {
          if (col_idx(k) == r + first) v += values(k);
        }
        d(r) = v;
      });
  return d;
}

/// Rows [first, end) of the same matrix (options.columns applies) as Compressed Sliced ELLPACK, built
/// in blocks of block_rows rows, each built as CSR on `exec`, encoded and freed
/// (to_compressed_sell_by_blocks): the CSR never exists whole, so a Hamiltonian whose CSR does not fit
/// beside its csell still can be held. Each block is built twice (count, fill), and a share of up to 8
/// of them once more (the value table's samples). `diagonal` (optional; end - first entries): the
/// rows' diagonal elements (zero where the column window leaves them out). `each_block` (optional):
/// called with every block as built (e.g. to see which columns the rows read).
template <class Exec>
struct HamiltonianCsr {  // (a nested name: each_block's type below takes no part in deducing Exec)
  using type = CsrMatrix<double, int, std::size_t, Exec>;
};
template <class Exec>
CompressedSellMatrix<double, int, std::size_t, Exec> build_hamiltonian_csell(
    const Exec& exec, const FciDump& integrals, const DeterminantSpace& space, std::int64_t first, std::int64_t end,
    int block_rows, const HamiltonianOptions& options = {},
    const Kokkos::View<double*, typename Exec::memory_space>& diagonal = {},
    const std::function<void(const typename HamiltonianCsr<Exec>::type&)>& each_block = {}) {
  using Keep = HamiltonianOptions::ColumnWindow::Keep;
  HamiltonianOptions quiet = options;
  quiet.progress = nullptr;  // the builder's passes run per block, many times over
  const bool inside = options.columns.keep == Keep::inside;
  const int cols =
      static_cast<int>(inside ? options.columns.end - options.columns.first : static_cast<std::int64_t>(space.size()));
  const std::int64_t shift = inside ? options.columns.first : 0;  // the diagonal's column numbering
  return to_compressed_sell_by_blocks<double, int, std::size_t, Exec>(
      static_cast<int>(end - first), cols, block_rows, [&](int a, int b) {
        const auto block = build_hamiltonian_rows(exec, integrals, space, first + a, first + b, quiet);
        if (diagonal.extent(0) > 0) {
          Kokkos::deep_copy(
              Kokkos::subview(diagonal, std::make_pair(static_cast<std::size_t>(a), static_cast<std::size_t>(b))),
              csr_diagonal(exec, block, first + a - shift));
        }
        if (each_block) each_block(block);
        return block;
      });
}

/// Rows per block for build_hamiltonian_csell: as many as `budget` bytes of CSR hold at `row_bytes`
/// bytes a row, a multiple of 32 (a slice), at least 32.
inline int hamiltonian_block_rows(double row_bytes, double budget) {
  return static_cast<int>(std::max(32.0, std::floor(budget / row_bytes / 32) * 32));
}

/// A CI Hamiltonian named where a matrix file would be: `fcidump:FILE:LEVEL[:all-irreps]`, e.g.
/// `fcidump:unit_tests/data/h2o_631g.fcidump:10` (LEVEL >= the number of electrons is full CI). The
/// space keeps the determinants of irrep ISYM (as `cispmv ci` does by default), or of every irrep with
/// `:all-irreps`.
struct HamiltonianSpec {
  std::string fcidump;           ///< path of the FCIDUMP file
  int level = 0;                 ///< maximum excitation level
  bool restrict_to_isym = true;  ///< false with ":all-irreps"
};

/// True when `text` names a Hamiltonian (starts with "fcidump:") rather than a file or suite matrix.
bool is_hamiltonian_spec(const std::string& text);

/// Parses `fcidump:FILE:LEVEL[:all-irreps]` (FILE may itself contain ':'). Throws
/// std::invalid_argument naming the spec and what is wrong (no file, no level, a level that is not a
/// positive integer).
HamiltonianSpec parse_hamiltonian_spec(const std::string& text);

/// Reads the FCIDUMP, builds the space of `spec` and its Hamiltonian (without the core energy), as
/// build_hamiltonian does: what the benchmarks and `cispmv run` multiply with.
HostCsr build_hamiltonian(const HamiltonianSpec& spec);

}  // namespace cispmv::ci
