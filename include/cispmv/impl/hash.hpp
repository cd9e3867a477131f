#pragma once
// splitmix64 (Steele, Lea, Flood 2014): the one integer mixer of cispmv, used by the matrix
// generator (counter-based, so every row is reproducible on any thread count), the determinant
// hash index and the tests' deterministic random numbers.

#include <Kokkos_Macros.hpp>

#include <cstdint>

namespace cispmv::impl {

/// The splitmix64 finaliser: a bijection of 64-bit integers that spreads neighbouring inputs evenly.
KOKKOS_INLINE_FUNCTION constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The golden-ratio increment of the splitmix64 sequence.
inline constexpr std::uint64_t splitmix64_gamma = 0x9E3779B97F4A7C15ull;

/// The splitmix64 generator: state advances by the golden-ratio increment, output is mixed.
struct SplitMix64 {
  std::uint64_t state;
  explicit constexpr SplitMix64(std::uint64_t seed) : state(seed) {}
  constexpr std::uint64_t next() { return splitmix64_mix(state += splitmix64_gamma); }
};

}  // namespace cispmv::impl
