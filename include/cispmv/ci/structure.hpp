#pragma once
/// \file ci/structure.hpp
/// Structure statistics of a CI matrix over the excitation levels of its determinant space.

#include "cispmv/ci/determinants.hpp"
#include "cispmv/formats/csr.hpp"

#include <cstddef>
#include <vector>

namespace cispmv::ci {

/// Structure of a CI matrix over its excitation levels: the blocks that the paper's reference region
/// (low levels, dense-ish) and expansion region (high levels, very sparse) are made of.
struct StructureStats {
  std::size_t rows = 0;
  std::size_t nnz = 0;
  std::size_t min_row_length = 0;
  std::size_t max_row_length = 0;
  double mean_row_length = 0.0;
  std::size_t max_row = 0;  ///< a row of maximal length (the first)
  /// Rows of levels 0..1 (reference and singles): nonzeros in the square block of those rows and
  /// columns, and everywhere else.
  std::size_t leading_block_rows = 0;
  std::size_t leading_block_nnz = 0;
  std::size_t rest_nnz = 0;
  std::vector<std::size_t> level_rows;                    ///< determinants per level
  std::vector<std::size_t> level_nnz;                     ///< nonzeros in the rows of each level
  std::vector<std::vector<std::size_t>> level_block_nnz;  ///< [row level][column level] nonzeros
};

/// Computes StructureStats of a CI matrix whose rows are ordered as `space`.
StructureStats structure_stats(const HostCsr& A, const DeterminantSpace& space);

}  // namespace cispmv::ci
