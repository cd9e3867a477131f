#pragma once
// Small pieces the format converters share (each format's converter lives in its own header).

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cispmv::impl {

/// The host execution space every converter runs on.
using HostExec = Kokkos::DefaultHostExecutionSpace;

/// A copy of a host vector in memory space Mem (a View labelled `label`): what the CI builders hand their
/// host-built tables to the execution space with.
template <class T, class Mem>
Kokkos::View<T*, Mem> view_of(const std::string& label, const std::vector<T>& v) {
  Kokkos::View<T*, Mem> out(Kokkos::view_alloc(label, Kokkos::WithoutInitializing), v.size());
  Kokkos::deep_copy(
      out, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.size()));
  return out;
}

/// The longest row of a CSR row map (0 for no rows).
template <class Ordinal, class RowPtr>
Ordinal max_row_length(const RowPtr& row_ptr, Ordinal num_rows) {
  Ordinal longest = 0;
  Kokkos::parallel_reduce(
      "cispmv::max_row_length", Kokkos::RangePolicy<HostExec>(0, num_rows),
      [&](const Ordinal r, Ordinal& m) { m = std::max(m, static_cast<Ordinal>(row_ptr(r + 1) - row_ptr(r))); },
      Kokkos::Max<Ordinal>(longest));
  return std::max<Ordinal>(0, longest);  // Max starts from the lowest value (no rows)
}

/// Replaces v by its exclusive prefix sum and returns the total.
template <class Offset>
Offset exclusive_scan_in_place(std::vector<Offset>& v) {
  Offset sum = 0;
  for (auto& e : v) {
    const Offset n = e;
    e = sum;
    sum += n;
  }
  return sum;
}

/// n as a `To`, or std::overflow_error naming `what`.
template <class To, class From>
To checked_size(From n, const char* what) {
  if (n > static_cast<From>(std::numeric_limits<To>::max())) {
    throw std::overflow_error(std::string("cispmv: ") + what + " (" + std::to_string(n) +
                              ") does not fit the Offset type; use Offset = std::size_t");
  }
  return static_cast<To>(n);
}

/// Builds a host CSR (type Csr) from per-row lengths and a per-row copy function
/// entry(r, j) -> (column, value): how every format converts back to CSR.
template <class Csr, class Ordinal, class Length, class Entry>
Csr csr_from_rows(const char* label, Ordinal rows, Ordinal cols, const Length& length, const Entry& entry) {
  using Offset = typename Csr::size_type;
  std::vector<Offset> ptr(static_cast<std::size_t>(rows) + 1, 0);
  for (Ordinal r = 0; r < rows; ++r) ptr[r + 1] = ptr[r] + static_cast<Offset>(length(r));
  Csr A(label, rows, cols, ptr.back());
  for (Ordinal r = 0; r <= rows; ++r) A.row_ptr(r) = ptr[r];
  Kokkos::parallel_for(label, Kokkos::RangePolicy<HostExec>(0, rows), [&](const Ordinal r) {
    for (Offset j = 0; j < ptr[r + 1] - ptr[r]; ++j) {
      const auto e = entry(r, j);
      A.col_idx(ptr[r] + j) = e.first;
      A.values(ptr[r] + j) = e.second;
    }
  });
  return A;
}

}  // namespace cispmv::impl
