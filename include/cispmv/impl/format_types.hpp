#pragma once
// Type names every cispmv format carries (Kokkos Kernels style), in one place.

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace cispmv {

/// The host execution space on which every format is built from CSR (converters, readers, generator).
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;

}  // namespace cispmv

namespace cispmv::impl {

template <class Scalar, class Ordinal, class Offset, class Device>
struct FormatTypes {
  static_assert(std::is_integral_v<Ordinal> && std::is_signed_v<Ordinal>,
                "cispmv: Ordinal must be a signed integer (padding is marked with column -1)");
  static_assert(std::is_integral_v<Offset>, "cispmv: Offset must be an integer type");
  static_assert(std::is_floating_point_v<Scalar>, "cispmv: Scalar must be float or double");

  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using device_type = typename Device::device_type;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
};

/// Copies `src` into a new View of the same data type and layout in `Space`'s memory space
/// (no copy if it is already there).
template <class Space, class View>
auto mirror_to(const View& src) {
  return Kokkos::create_mirror_view_and_copy(typename Space::memory_space(), src);
}

/// Bytes a View's allocation holds.
template <class View>
std::size_t view_bytes(const View& v) {
  return v.span() * sizeof(typename View::value_type);
}

}  // namespace cispmv::impl
