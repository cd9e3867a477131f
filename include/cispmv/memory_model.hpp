#pragma once
/// \file memory_model.hpp
/// The paper's storage formulas (section 4.1, Table 5), which every format header applies to itself
/// in its `paper_model_bytes` overload.

#include <cstddef>

namespace cispmv {

/// The paper's storage formulas, with its types as defaults: values double, column indices int,
/// row offsets / counts unsigned int. Results in bytes.
struct PaperMemoryModel {
  std::size_t value_bytes = sizeof(double);
  std::size_t index_bytes = sizeof(int);
  std::size_t offset_bytes = sizeof(unsigned int);
  /// CSR: AllNonZeros*(value + index) + (ROWS + 1)*offset.
  std::size_t csr(std::size_t rows, std::size_t nnz) const {
    return nnz * (value_bytes + index_bytes) + (rows + 1) * offset_bytes;
  }
  /// ELLPACK, equation (1): ROWS*MaxNonZeros*(value + index).
  std::size_t ell(std::size_t rows, std::size_t max_nonzeros) const {
    return rows * max_nonzeros * (value_bytes + index_bytes);
  }
  /// Sliced ELLPACK: the sum of the ELLPACK formula over the slices (section 4.1), i.e.
  /// (sum over slices of height * width) * (value + index).
  std::size_t sliced_ell(std::size_t padded_slots) const { return padded_slots * (value_bytes + index_bytes); }
  /// The proposed (hybrid) format: 3*ROWS*offset (AllNonZerosCount, StartArr, EndArr)
  /// + ROWS*BOUNDARY*(value + index) + CSRNonZeros*(value + index).
  std::size_t hybrid(std::size_t rows, std::size_t boundary, std::size_t csr_nonzeros) const {
    return 3 * rows * offset_bytes + rows * boundary * (value_bytes + index_bytes) +
           csr_nonzeros * (value_bytes + index_bytes);
  }
};

/// Mebibytes, as the paper's Table 5 reports ("MB": 2^20 bytes; matrix 1's proposed format,
/// 374,089,620 bytes, prints as 356.76).
inline double to_mib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace cispmv
