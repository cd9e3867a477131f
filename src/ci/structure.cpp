// Structure statistics of a CI matrix over the excitation levels of its space.
#include "cispmv/ci/structure.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace cispmv::ci {

StructureStats structure_stats(const HostCsr& A, const DeterminantSpace& space) {
  if (static_cast<std::size_t>(A.num_rows) != space.size()) {
    throw std::invalid_argument("cispmv::ci_structure_stats: the matrix has " + std::to_string(A.num_rows) +
                                " rows, the space " + std::to_string(space.size()) + " determinants");
  }
  StructureStats st;
  const int nlevel = space.max_level + 1;
  st.rows = space.size();
  st.nnz = A.nnz();
  st.level_rows.assign(nlevel, 0);
  st.level_nnz.assign(nlevel, 0);
  st.level_block_nnz.assign(nlevel, std::vector<std::size_t>(nlevel, 0));
  st.leading_block_rows = space.level_offset[std::min(2, nlevel)];
  std::vector<int> level_of(space.size());
  for (int l = 0; l < nlevel; ++l) {
    st.level_rows[l] = space.level_size(l);
    for (std::size_t r = space.level_offset[l]; r < space.level_offset[l + 1]; ++r) level_of[r] = l;
  }
  st.min_row_length = st.rows == 0 ? 0 : static_cast<std::size_t>(-1);
  for (std::size_t r = 0; r < st.rows; ++r) {
    const std::size_t len = A.row_ptr(r + 1) - A.row_ptr(r);
    st.min_row_length = std::min(st.min_row_length, len);
    if (len > st.max_row_length) {
      st.max_row_length = len;
      st.max_row = r;
    }
    const int lr = level_of[r];
    st.level_nnz[lr] += len;
    for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      const std::size_t c = static_cast<std::size_t>(A.col_idx(k));
      ++st.level_block_nnz[lr][level_of[c]];
      if (r < st.leading_block_rows && c < st.leading_block_rows) ++st.leading_block_nnz;
    }
  }
  st.rest_nnz = st.nnz - st.leading_block_nnz;
  st.mean_row_length = st.rows == 0 ? 0.0 : static_cast<double>(st.nnz) / static_cast<double>(st.rows);
  return st;
}

}  // namespace cispmv::ci
