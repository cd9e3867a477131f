#pragma once
/// \file impl/bits.hpp
/// Bit operations on 64-bit occupation strings that compile for the host and the device.

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace cispmv::impl {

/// Index of the lowest set bit of x (x != 0).
KOKKOS_FORCEINLINE_FUNCTION int lowest_bit(std::uint64_t x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return __builtin_ctzll(x);
#endif
}

}  // namespace cispmv::impl
