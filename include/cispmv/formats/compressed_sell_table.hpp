#pragma once
/// \file formats/compressed_sell_table.hpp
/// Compressed Sliced ELLPACK's value table (formats/compressed_sell.hpp): which values it holds (the most frequent
/// ones of a sample of the matrix: frequent_values, sample_values), the bit-exact lookup the encoder uses
/// (ValueIndexMap), and the table's order, which decides what shares a cache line (ValueTableOrder: first use or
/// frequency by default per backend, or co-occurrence, regrouped after encoding by order_table_by_cooccurrence).

#include <Kokkos_Core.hpp>

#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/formats/csr.hpp"
#include "cispmv/impl/backend.hpp"
#include "cispmv/impl/convert_helpers.hpp"
#include "cispmv/impl/hash.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

namespace cispmv {
namespace impl {

/// csell's table order for execution space Exec (H100 and its host's 16 cores, frozen-core H2O/6-31G
/// full CI): a GPU's lookups are faster with the hot values packed first (0.381 against 0.392 ms: the
/// few lines they fill stay in L1); a CPU's with values that neighbouring rows use together sharing
/// lines (11.1 against 12.1 ms).
template <class Exec>
constexpr ValueTableOrder default_table_order() {
  return is_gpu_space_v<Exec> ? ValueTableOrder::frequency : ValueTableOrder::first_use;
}

/// csell's table order for a matrix multiplied many times on Exec (FormatParams::for_space: plans,
/// `cispmv run`, the benchmarks): on GPUs the co-occurrence order, whose ordering pass (a sample of
/// the layout's steps counted on the host, then every slot's index remapped: on our 2 cores 0.25 s for
/// the frozen-core FCI's 10^8 entries, beside a conversion of 0.85 s) a few thousand products repay.
/// H200, the library's plan, ms per product, frequency against co-occurrence order: frozen-core FCI
/// 0.2972 / 0.2854 (0.3029 / 0.2916 in a second run), all-electron FCI 2.226 / 2.071. The rest as
/// default_table_order (`cispmv ci`'s few dozen products keep that).
template <class Exec>
constexpr ValueTableOrder repeated_products_table_order() {
  return is_gpu_space_v<Exec> ? ValueTableOrder::cooccurrence : default_table_order<Exec>();
}

/// The bits of a value, for bit-exact table lookups (0.0 and -0.0, and NaN payloads, stay apart).
template <class Scalar>
KOKKOS_INLINE_FUNCTION std::uint64_t value_bits(Scalar v) {
  using Bits = std::conditional_t<sizeof(Scalar) == 8, std::uint64_t, std::uint32_t>;
  Bits b;
  memcpy(&b, &v, sizeof(Scalar));  // the one type pun C++17 allows, in host and CUDA device code
  return static_cast<std::uint64_t>(b);
}

/// A read-only open-addressing map from value bits to a table index (power-of-two size, at most half
/// full) in the memory of `Device`: the converter's lookup, safe from many threads on any backend.
template <class Device>
struct ValueIndexMap {
  Kokkos::View<const std::uint64_t*, Device> keys;
  Kokkos::View<const std::int32_t*, Device> slots;  ///< the table index of keys(s), -1 where empty
  std::uint64_t mask = 0;

  ValueIndexMap() = default;
  /// Built on the host from the table's keys (value_bits of each value, in table order), then copied.
  explicit ValueIndexMap(const std::vector<std::uint64_t>& table_keys) {
    std::size_t size = 16;
    while (size < 2 * table_keys.size()) size *= 2;
    mask = size - 1;
    Kokkos::View<std::uint64_t*, Kokkos::HostSpace> k("csell::index_keys", size);
    Kokkos::View<std::int32_t*, Kokkos::HostSpace> s(
        Kokkos::view_alloc("csell::index_slots", Kokkos::WithoutInitializing), size);
    Kokkos::deep_copy(s, -1);
    for (std::size_t i = 0; i < table_keys.size(); ++i) {
      std::uint64_t at = splitmix64_mix(table_keys[i]) & mask;
      while (s(at) >= 0) at = (at + 1) & mask;
      k(at) = table_keys[i];
      s(at) = static_cast<std::int32_t>(i);
    }
    keys = mirror_to<Device>(k);
    slots = mirror_to<Device>(s);
  }
  /// The index of `key`, or -1.
  KOKKOS_INLINE_FUNCTION std::int32_t find(std::uint64_t key) const {
    std::uint64_t at = splitmix64_mix(key) & mask;
    while (slots(at) >= 0) {
      if (keys(at) == key) return slots(at);
      at = (at + 1) & mask;
    }
    return -1;
  }
};

/// The value table of A: its most frequent values (by bits), at most `max_size`, most frequent first,
/// ties by bits (deterministic). Frequencies are counted on at most `max_samples` entries spread evenly
/// over the matrix (all of them for smaller matrices): the table is a choice of what to compress, so a
/// sample suffices, and the encoding stays exact whatever the table holds. A matrix in device memory
/// is sampled there; only the samples come to the host.
template <class Scalar, class Ordinal, class Offset, class Device>
std::vector<Scalar> frequent_values(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A, std::size_t max_size,
                                    double* coverage = nullptr, std::size_t max_samples = std::size_t(1) << 25) {
  using Exec = typename CsrMatrix<Scalar, Ordinal, Offset, Device>::execution_space;
  const std::size_t nnz = A.nnz();
  const std::size_t stride = std::max<std::size_t>(1, (nnz + max_samples - 1) / std::max<std::size_t>(1, max_samples));
  const std::size_t count = nnz == 0 ? 0 : (nnz - 1) / stride + 1;
  Kokkos::View<std::uint64_t*, typename Exec::memory_space> sampled(
      Kokkos::view_alloc("cispmv::frequent_values::samples", Kokkos::WithoutInitializing), count);
  const auto values = A.values;
  Kokkos::parallel_for(
      "cispmv::frequent_values::sample",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(count)),
      KOKKOS_LAMBDA(const std::int64_t i) { sampled(i) = value_bits(values(static_cast<std::size_t>(i) * stride)); });
  const auto bits = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sampled);  // no copy on the host
  std::sort(bits.data(), bits.data() + count);
  std::vector<std::pair<std::size_t, std::uint64_t>> counted;  // (count, bits)
  for (std::size_t i = 0; i < count;) {
    std::size_t j = i;
    while (j < count && bits(j) == bits(i)) ++j;
    counted.emplace_back(j - i, bits(i));
    i = j;
  }
  const std::size_t keep = std::min(max_size, counted.size());
  std::partial_sort(
      counted.begin(), counted.begin() + static_cast<std::ptrdiff_t>(keep), counted.end(),
      [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  std::vector<Scalar> table(keep);
  std::size_t covered = 0;
  for (std::size_t i = 0; i < keep; ++i) covered += counted[i].first;
  if (coverage != nullptr) *coverage = count == 0 ? 1.0 : static_cast<double>(covered) / static_cast<double>(count);
  for (std::size_t i = 0; i < keep; ++i) {
    using Bits = std::conditional_t<sizeof(Scalar) == 8, std::uint64_t, std::uint32_t>;
    const Bits b = static_cast<Bits>(counted[i].second);
    std::memcpy(&table[i], &b, sizeof(Scalar));
  }
  return table;
}

/// Up to `quota` of A's values, evenly strided, into samples(at, ...); returns how many.
template <class Scalar, class Ordinal, class Offset, class Device, class Samples>
std::size_t sample_values(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A, std::size_t quota,
                          const Samples& samples, std::size_t at) {
  using Exec = typename CsrMatrix<Scalar, Ordinal, Offset, Device>::execution_space;
  const std::size_t nnz = A.nnz();
  const std::size_t stride = std::max<std::size_t>(1, (nnz + quota - 1) / quota);
  const std::size_t count = nnz == 0 ? 0 : (nnz - 1) / stride + 1;
  const auto values = A.values;
  Kokkos::parallel_for(
      "cispmv::to_compressed_sell::samples",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(count)),
      KOKKOS_LAMBDA(const std::int64_t j) {
        samples(at + static_cast<std::size_t>(j)) = values(static_cast<std::size_t>(j) * stride);
      });
  return count;
}

/// The most frequent values that ValueTableOrder::cooccurrence regroups (a multiple of
/// cooccurrence_line: whole lines), and about how many warp steps (slots of a slice) it samples, in
/// whole slices spread evenly over the matrix.
inline constexpr int cooccurrence_hot_values = 4096;
inline constexpr std::size_t cooccurrence_sampled_steps = std::size_t(1) << 16;
/// Values per line of the co-occurrence order: a 128-byte line of doubles, one value per bank pair
/// (and the lanes of a half-warp, whose steps it counts).
inline constexpr int cooccurrence_line = 16;

/// The slices of C whose steps order_table_by_cooccurrence samples, about `sampled_steps` steps of
/// whole slices spread evenly over C: slice sampled[i]'s slots go to [packed_at[i], packed_at[i + 1])
/// of the packed sample (packed_at holds 0 on entry).
template <class Scalar, class Ordinal, class Offset, class Device>
void sample_slices(const CompressedSellMatrix<Scalar, Ordinal, Offset, Device>& C, const std::size_t sampled_steps,
                   std::vector<Ordinal>& sampled, std::vector<std::size_t>& packed_at) {
  const Ordinal h = C.slice_height;
  const Ordinal num_slices = C.num_slices();
  const auto slice_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C.slice_ptr);
  const std::size_t steps =
      static_cast<std::size_t>(slice_ptr(num_slices) - slice_ptr(0)) / static_cast<std::size_t>(h);
  const Ordinal stride = static_cast<Ordinal>(std::clamp<std::size_t>(steps / std::max<std::size_t>(1, sampled_steps),
                                                                      1, static_cast<std::size_t>(num_slices)));
  for (Ordinal s = 0; s < num_slices; s += stride) {
    sampled.push_back(s);
    packed_at.push_back(packed_at.back() + static_cast<std::size_t>(slice_ptr(s + 1) - slice_ptr(s)));
  }
}

/// The slots (deltas and value indices) of the sampled slices, packed one after the other into delta
/// and index, gathered where C lives.
template <class Scalar, class Ordinal, class Offset, class Device, class Slots>
void gather_sampled_slots(const CompressedSellMatrix<Scalar, Ordinal, Offset, Device>& C,
                          const std::vector<Ordinal>& sampled, const std::vector<std::size_t>& packed_at,
                          const Slots& delta, const Slots& index) {
  using Matrix = CompressedSellMatrix<Scalar, Ordinal, Offset, Device>;
  using Exec = typename Matrix::execution_space;
  using Mem = typename Matrix::memory_space;
  using Team = typename Kokkos::TeamPolicy<Exec>::member_type;
  const std::size_t n_sampled = sampled.size();
  Kokkos::View<const Ordinal*, Kokkos::HostSpace> sampled_host(sampled.data(), n_sampled);
  Kokkos::View<const std::size_t*, Kokkos::HostSpace> packed_host(packed_at.data(), n_sampled + 1);
  const auto sampled_dev = Kokkos::create_mirror_view_and_copy(Mem(), sampled_host);
  const auto packed_dev = Kokkos::create_mirror_view_and_copy(Mem(), packed_host);
  const auto from_ptr = C.slice_ptr;
  const auto col_delta = C.col_delta;
  const auto value_index = C.value_index;
  Kokkos::parallel_for(
      "cispmv::to_compressed_sell::cooccurrence_samples",
      Kokkos::TeamPolicy<Exec>(static_cast<int>(n_sampled), Kokkos::AUTO), KOKKOS_LAMBDA(const Team& team) {
        const int i = team.league_rank();
        const std::size_t to = packed_dev(i);
        const std::size_t from = static_cast<std::size_t>(from_ptr(sampled_dev(i)));
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, packed_dev(i + 1) - to), [&](const std::size_t k) {
          delta(to + k) = col_delta(from + k);
          index(to + k) = value_index(from + k);
        });
      });
}

/// weight(a, b) (row-major, hot x hot, symmetric): the sampled half-warp steps (cooccurrence_line
/// lanes of a slice at the same slot) that read hot values a and b. `length`: C's row_length on the
/// host; delta and index: the sampled slots on the host (sample_slices, gather_sampled_slots).
template <class Matrix, class Length, class Slots>
std::vector<float> cooccurrence_weights(const Matrix& C, const int hot,
                                        const std::vector<typename Matrix::ordinal_type>& sampled,
                                        const std::vector<std::size_t>& packed_at, const Length& length,
                                        const Slots& delta, const Slots& index) {
  using Ordinal = typename Matrix::ordinal_type;
  constexpr int line = cooccurrence_line;
  const Ordinal h = C.slice_height;
  const std::size_t n_hot = static_cast<std::size_t>(hot);
  std::vector<float> weight(n_hot * n_hot, 0.f);
  const Ordinal lanes_total = C.num_lanes();
  for (std::size_t i = 0; i < sampled.size(); ++i) {
    const Ordinal first_lane = sampled[i] * h;
    const std::size_t width = (packed_at[i + 1] - packed_at[i]) / static_cast<std::size_t>(h);
    for (std::size_t k = 0; k < width; ++k) {
      for (Ordinal half = 0; half < h; half += line) {
        int v[line];
        int m = 0;
        for (Ordinal l = half; l < half + line && first_lane + l < lanes_total; ++l) {
          if (k >= static_cast<std::size_t>(length(first_lane + l))) continue;  // padding
          const std::size_t slot = packed_at[i] + k * static_cast<std::size_t>(h) + static_cast<std::size_t>(l);
          if (delta(slot) == Matrix::jump_delta || index(slot) >= hot) continue;
          v[m++] = index(slot);
        }
        std::sort(v, v + m);
        m = static_cast<int>(std::unique(v, v + m) - v);
        for (int a = 0; a < m; ++a)  // v is sorted: the upper triangle, mirrored below
          for (int b = a + 1; b < m; ++b)
            weight[static_cast<std::size_t>(v[a]) * n_hot + static_cast<std::size_t>(v[b])] += 1.f;
      }
    }
  }
  constexpr std::size_t tile = 64;  // mirrored tile by tile (a plain transposed loop misses the cache on every write)
  for (std::size_t a0 = 0; a0 < n_hot; a0 += tile)
    for (std::size_t b0 = a0; b0 < n_hot; b0 += tile)
      for (std::size_t a = a0; a < std::min(n_hot, a0 + tile); ++a)
        for (std::size_t b = std::max(b0, a + 1); b < std::min(n_hot, b0 + tile); ++b)
          weight[b * n_hot + a] = weight[a * n_hot + b];
  return weight;
}

/// The hot values in lines of cooccurrence_line: each seeded by the most frequent value not yet
/// placed, then filled with the unplaced values that weigh most with the line so far.
inline std::vector<std::vector<int>> cooccurrence_lines(const std::vector<float>& weight, const int hot) {
  constexpr int line = cooccurrence_line;
  const std::size_t n_hot = static_cast<std::size_t>(hot);
  auto row = [&](int a) { return weight.data() + static_cast<std::size_t>(a) * n_hot; };  // weight(a, .), symmetric
  std::vector<int> line_of(n_hot, -1);
  std::vector<std::vector<int>> lines;
  std::vector<double> tie(n_hot);
  for (int seed = 0; seed < hot; ++seed) {
    if (line_of[seed] >= 0) continue;
    std::vector<int> members{seed};
    line_of[seed] = static_cast<int>(lines.size());
    const float* seed_row = row(seed);
    for (int u = 0; u < hot; ++u) tie[u] = seed_row[u];
    while (static_cast<int>(members.size()) < line) {
      int best = -1;
      for (int u = 0; u < hot; ++u)
        if (line_of[u] < 0 && (best < 0 || tie[u] > tie[best])) best = u;
      line_of[best] = line_of[seed];
      members.push_back(best);
      const float* best_row = row(best);
      for (int u = 0; u < hot; ++u) tie[u] += best_row[u];
    }
    lines.push_back(std::move(members));
  }
  return lines;
}

/// The table position of each hot value: line li's values take positions li * cooccurrence_line + the
/// bank pairs (position mod cooccurrence_line), the value sharing most with those placed so far first,
/// each to the free position whose values (over all lines placed) share least with it.
inline std::vector<int> cooccurrence_positions(const std::vector<float>& weight, const int hot,
                                               const std::vector<std::vector<int>>& lines) {
  constexpr int line = cooccurrence_line;
  const std::size_t n_hot = static_cast<std::size_t>(hot);
  auto row = [&](int a) { return weight.data() + static_cast<std::size_t>(a) * n_hot; };  // weight(a, .), symmetric
  std::vector<int> position(n_hot);
  std::vector<double> on_pair(n_hot * line, 0.0);  // (value, position mod 16): weight to values placed there
  for (std::size_t li = 0; li < lines.size(); ++li) {
    auto members = lines[li];
    auto load = [&](int v) {
      double sum = 0;
      for (int c = 0; c < line; ++c) sum += on_pair[static_cast<std::size_t>(v) * line + c];
      return sum;
    };
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return load(a) > load(b); });
    bool used[line] = {};
    for (const int v : members) {
      int best = -1;
      for (int c = 0; c < line; ++c) {
        const double here = on_pair[static_cast<std::size_t>(v) * line + c];
        if (!used[c] && (best < 0 || here < on_pair[static_cast<std::size_t>(v) * line + best])) best = c;
      }
      used[best] = true;
      position[v] = static_cast<int>(li) * line + best;
      const float* v_row = row(v);
      for (int u = 0; u < hot; ++u) on_pair[static_cast<std::size_t>(u) * line + best] += v_row[u];
    }
  }
  return position;
}

/// Moves C's hot values to `position` (the rest stay where they are) and remaps the slots' indices to
/// match, where C lives (padding and jump slots keep index 0).
template <class Scalar, class Ordinal, class Offset, class Device>
void remap_value_table(const CompressedSellMatrix<Scalar, Ordinal, Offset, Device>& C,
                       const std::vector<int>& position) {
  using Matrix = CompressedSellMatrix<Scalar, Ordinal, Offset, Device>;
  using Exec = typename Matrix::execution_space;
  using Mem = typename Matrix::memory_space;
  const std::size_t table_size = C.value_table.extent(0);
  const std::size_t n_hot = position.size();
  Kokkos::View<std::uint16_t*, Kokkos::HostSpace> remap("csell::cooccurrence_remap", table_size);
  for (std::size_t v = 0; v < table_size; ++v) remap(v) = static_cast<std::uint16_t>(v < n_hot ? position[v] : v);
  const auto table_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C.value_table);
  Kokkos::View<Scalar*, Kokkos::HostSpace> reordered("csell::value_table", table_size);
  for (std::size_t v = 0; v < table_size; ++v) reordered(remap(v)) = table_host(v);
  Kokkos::deep_copy(C.value_table, reordered);
  const auto remap_dev = Kokkos::create_mirror_view_and_copy(Mem(), remap);
  const Matrix M = C;
  Kokkos::parallel_for(
      "cispmv::to_compressed_sell::cooccurrence_remap",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<Ordinal>>(0, C.num_lanes()), KOKKOS_LAMBDA(const Ordinal lane) {
        Offset slot = M.lane_start(lane);
        for (Ordinal k = 0; k < M.row_length(lane); ++k, slot += static_cast<Offset>(M.slice_height)) {
          if (M.col_delta(slot) != Matrix::jump_delta) M.value_index(slot) = remap_dev(M.value_index(slot));
        }
      });
}

/// Regroups the hot values of C's table (most frequent first on entry; the first
/// cooccurrence_hot_values of them, whole lines of 16) so that the values a GPU's warp step reads
/// together share 128-byte lines, and remaps C's value indices to match; the product is bit for bit
/// the same. Why (H200): a warp's gather costs the L1 about one cycle per ~6 sectors it looks up, and
/// a step of the frozen-core FCI's csell looks up ~18 sectors of the table in frequency order; lines
/// of values that share steps cut that to ~14.5 and the product by 4 % (all-electron: 7 %). Even 2^14
/// sampled steps order the table about as well as all 3.1M (table sectors per step 14.55 against
/// 14.49, our 2 cores); the default takes 2^16. How: the steps of whole slices spread evenly over C,
/// about `sampled_steps` of them (their slots gathered on Device, counted on the host), give, for each
/// pair of hot values, the half-warp steps (16 lanes of a slice at the same slot) that read both.
/// Lines are then filled greedily: the most frequent value not yet placed, then the 15 unplaced values
/// that share most steps with the line so far. Inside each line the values take the 16 bank pairs
/// (position mod 16), the one sharing most steps with the values already placed first, each where
/// those it shares steps with weigh least (half a warp's doubles on one bank pair cost the data pipe a
/// wavefront each, as a gather probe kernel measured on the H200). Lines are 16 values whatever the
/// scalar (for float half a 128-byte line; measured for double only). Tables with fewer than 32
/// values, or slices not made of half-warps, are left as they are.
template <class Scalar, class Ordinal, class Offset, class Device>
void order_table_by_cooccurrence(CompressedSellMatrix<Scalar, Ordinal, Offset, Device>& C,
                                 std::size_t sampled_steps = cooccurrence_sampled_steps) {
  using Mem = typename CompressedSellMatrix<Scalar, Ordinal, Offset, Device>::memory_space;
  constexpr int line = cooccurrence_line;
  const std::size_t table_size = C.value_table.extent(0);
  const int hot = static_cast<int>(std::min<std::size_t>(table_size, cooccurrence_hot_values) / line * line);
  const Ordinal h = C.slice_height;
  if (!C.uses_table || hot < 2 * line || h % line != 0 || C.num_slices() <= 0) return;
  std::vector<Ordinal> sampled;
  std::vector<std::size_t> packed_at{0};
  sample_slices(C, sampled_steps, sampled, packed_at);
  const auto length = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C.row_length);
  Kokkos::View<std::uint16_t*, Mem> delta(Kokkos::view_alloc("csell::sampled_delta", Kokkos::WithoutInitializing),
                                          packed_at.back());
  Kokkos::View<std::uint16_t*, Mem> index(Kokkos::view_alloc("csell::sampled_index", Kokkos::WithoutInitializing),
                                          packed_at.back());
  gather_sampled_slots(C, sampled, packed_at, delta, index);
  const auto delta_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), delta);
  const auto index_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), index);
  const std::vector<float> weight = cooccurrence_weights(C, hot, sampled, packed_at, length, delta_host, index_host);
  remap_value_table(C, cooccurrence_positions(weight, hot, cooccurrence_lines(weight, hot)));
  Kokkos::fence();
}

}  // namespace impl
}  // namespace cispmv
