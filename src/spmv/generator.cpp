/// \file generator.cpp
/// CI-like matrix generator and the named suite (see cispmv/generator.hpp).
///
/// Every random decision of row r comes from a counter-based generator keyed by (seed, r, stream),
/// so rows can be generated in any order, by any number of threads, twice (once to count, once to
/// fill) with the same result. Row lengths are computed in integer arithmetic: floating-point
/// contraction (FMA) differs between compilers and flags and must not change a pattern.

#include "cispmv/generator.hpp"
#include "cispmv/impl/hash.hpp"
#include "cispmv/impl/profiling.hpp"
#include "cispmv/memory_budget.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cispmv {

namespace {

// ------------------------------------------------------------------------------ random numbers

using impl::splitmix64_mix;

/// High and low words of a 64 x 64-bit product, portably (the same bits on every platform).
struct Product128 {
  std::uint64_t hi, lo;
};
inline Product128 mul128(std::uint64_t a, std::uint64_t b) {
#if defined(__SIZEOF_INT128__)
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return {static_cast<std::uint64_t>(p >> 64), static_cast<std::uint64_t>(p)};
#else
  const std::uint64_t a_lo = a & 0xFFFFFFFFULL, a_hi = a >> 32;
  const std::uint64_t b_lo = b & 0xFFFFFFFFULL, b_hi = b >> 32;
  const std::uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo, p3 = a_hi * b_hi;
  const std::uint64_t mid = (p0 >> 32) + (p1 & 0xFFFFFFFFULL) + (p2 & 0xFFFFFFFFULL);
  return {p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32), (mid << 32) | (p0 & 0xFFFFFFFFULL)};
#endif
}

/// Independent random streams of a row.
enum class Stream : std::uint64_t { length = 0, reference = 1, expansion = 2, value = 3, diagonal = 4 };

/// A splitmix64 sequence started at a hash of (seed, row, stream): a counter-based generator, so
/// a row's numbers never depend on other rows or on the thread that draws them.
class RowRng {
 public:
  RowRng(std::uint64_t seed_key, std::int64_t row, Stream stream)
      : rng_(splitmix64_mix(
            seed_key ^ splitmix64_mix(static_cast<std::uint64_t>(row) * 8 + static_cast<std::uint64_t>(stream)))) {}

  std::uint64_t next() { return rng_.next(); }
  /// Uniform in [0, bound) for bound >= 1 (Lemire's multiply-shift; bias < bound / 2^64).
  std::uint64_t below(std::uint64_t bound) { return mul128(next(), bound).hi; }
  /// Uniform in [0, 1) with 53 random bits (an exact product: no rounding, no contraction).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  impl::SplitMix64 rng_;
};

/// Off-diagonal value: uniform in +-[0.1, 1] as an exact multiple of 2^-53.
inline double offdiagonal_value(RowRng& rng) {
  constexpr std::uint64_t lowest = 900719925474100ULL;  // ceil(0.1 * 2^53)
  constexpr std::uint64_t range = (std::uint64_t(1) << 53) - lowest + 1;
  const std::uint64_t x = rng.next();
  const double magnitude = static_cast<double>(lowest + mul128(x, range).hi) * 0x1.0p-53;
  return (x & 1) ? -magnitude : magnitude;
}

// ------------------------------------------------------------------------------ row lengths

constexpr int fixed_bits = 24;  // fixed-point fraction bits of means and spreads
constexpr std::uint64_t fixed_one = std::uint64_t(1) << fixed_bits;

/// m in units of 2^-24 (m <= 2^31, so this fits easily).
std::uint64_t to_fixed(double m) { return static_cast<std::uint64_t>(std::llround(std::ldexp(m, fixed_bits))); }

/// floor(mean * factor + carry) where mean is in units 2^-24, factor in units 2^-48 and carry a
/// uniform 64-bit fraction: the product has 72 fraction bits, of which the top 64 meet the carry.
inline std::int64_t scaled_floor(std::uint64_t mean_q, std::uint64_t factor_q, std::uint64_t carry) {
  const Product128 p = mul128(mean_q, factor_q);
  const std::uint64_t integer = p.hi >> 8;
  const std::uint64_t fraction = (p.hi << 56) | (p.lo >> 8);
  return static_cast<std::int64_t>(integer + (fraction + carry < fraction ? 1 : 0));
}

/// Expansion length of a row with mean `mean_q`: floor(m (1 + a u) + v), u in (-1, 1) from 24
/// random bits (symmetric around 0), v in [0, 1): uniform on [m(1 - a), m(1 + a)], mean m.
inline std::int64_t expansion_length(RowRng& rng, std::uint64_t mean_q, std::uint64_t spread_q) {
  const auto u = static_cast<std::int64_t>(rng.next() >> (64 - fixed_bits));
  const std::int64_t s = 2 * u - static_cast<std::int64_t>(fixed_one - 1);  // odd, in [-(2^24 - 1), 2^24 - 1]
  const auto factor_q = static_cast<std::uint64_t>(static_cast<std::int64_t>(fixed_one * fixed_one) +
                                                   static_cast<std::int64_t>(spread_q) * s);
  return scaled_floor(mean_q, factor_q, rng.next());
}

/// floor(m (1 + a)): the largest value expansion_length can return is this plus one.
inline std::int64_t expansion_floor_max(std::uint64_t mean_q, std::uint64_t spread_q) {
  return scaled_floor(mean_q, fixed_one * fixed_one + spread_q * fixed_one, 0);
}

/// Everything the parallel passes need, by value (trivially copyable into the lambdas).
struct Rules {
  std::int64_t n = 0;                  // rows = columns
  std::int64_t w = 0;                  // reference width W
  std::int64_t reference_k = 0;        // reference entries per row (non-symmetric)
  double reference_density = 0;        // for the symmetric lower rows
  double expansion_density = 0;        // for the symmetric lower rows
  std::uint64_t expansion_mean_q = 0;  // non-symmetric expansion mean, units 2^-24
  std::uint64_t spread_q = 0;          // row_irregularity, units 2^-24
  std::int64_t expansion_cap = 0;      // pinned length (non-symmetric, longest_row >= 0)
  std::int64_t longest_row = -1;
  bool diagonal = true;
  std::uint64_t seed_key = 0;
};

/// Entries of a row per region; `*_forced` is the diagonal column when it lies in that region.
struct RowShape {
  std::int64_t reference_k = 0, expansion_k = 0;
  std::int64_t reference_forced = -1, expansion_forced = -1;
  std::int64_t length() const { return reference_k + expansion_k; }
};

/// Row r of the non-symmetric matrix.
RowShape full_row_shape(const Rules& R, std::int64_t r) {
  RowRng rng(R.seed_key, r, Stream::length);
  RowShape s;
  s.reference_k = R.reference_k;
  s.expansion_k = std::min(expansion_length(rng, R.expansion_mean_q, R.spread_q), R.n - R.w);
  if (R.longest_row >= 0) {
    s.expansion_k =
        r == R.longest_row ? R.expansion_cap : std::max<std::int64_t>(std::min(s.expansion_k, R.expansion_cap - 1), 0);
  }
  if (R.diagonal) {
    if (r < R.w) {
      s.reference_forced = r;
      s.reference_k = std::max<std::int64_t>(s.reference_k, 1);
    } else {
      s.expansion_forced = r;
      s.expansion_k = std::max<std::int64_t>(s.expansion_k, 1);
    }
  }
  return s;
}

/// Row r of the strict lower triangle of the symmetric matrix: columns [0, min(r, W)) and [W, r).
RowShape lower_row_shape(const Rules& R, std::int64_t r) {
  RowRng rng(R.seed_key, r, Stream::length);
  RowShape s;
  const std::int64_t reference_width = std::min(r, R.w);
  s.reference_k =
      std::min<std::int64_t>(std::llround(R.reference_density * static_cast<double>(reference_width)), reference_width);
  const std::int64_t expansion_width = std::max<std::int64_t>(r - R.w, 0);
  const std::uint64_t mean_q = to_fixed(R.expansion_density * static_cast<double>(expansion_width));
  s.expansion_k = std::min(expansion_length(rng, mean_q, R.spread_q), expansion_width);
  return s;
}

// ------------------------------------------------------------------------------ sampling

/// Index of the lowest set bit of a non-zero word.
inline int lowest_set_bit(std::uint64_t bits) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_ctzll(bits);
#else
  int bit = 0;
  while (((bits >> bit) & 1) == 0) ++bit;
  return bit;
#endif
}

/// k distinct sorted columns of [lo, lo + n), always including `forced` if it lies in that range,
/// written to out[0, k). Floyd's algorithm draws the k (or k - 1) values in O(k) with a bitmap
/// for membership; the sorted list comes from scanning the bitmap when it has at most 8 words per
/// value (a word costs about one comparison, sorting about log2 k ~ 8-10 per value), else from
/// sorting: O(k log k) at worst, never O(n) per row for sparse regions.
void sample_sorted(RowRng& rng, std::int64_t lo, std::int64_t n, std::int64_t forced, std::int64_t k, int* out,
                   std::vector<std::uint64_t>& marks) {
  if (k <= 0) return;
  const bool has_forced = forced >= lo && forced < lo + n;
  const std::int64_t m = has_forced ? n - 1 : n;  // values drawn from [0, m), mapped around forced
  const std::int64_t draw = has_forced ? k - 1 : k;
  auto marked = [&](std::int64_t v) { return (marks[static_cast<std::size_t>(v >> 6)] >> (v & 63)) & 1; };
  auto mark = [&](std::int64_t v) { marks[static_cast<std::size_t>(v >> 6)] |= std::uint64_t(1) << (v & 63); };
  std::int64_t count = 0;
  for (std::int64_t j = m - draw; j < m; ++j) {
    auto t = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(j) + 1));
    if (marked(t)) t = j;
    mark(t);
    out[count++] = static_cast<int>(t);
  }
  const std::int64_t words = (m + 63) / 64;
  if (words <= 8 * draw) {
    count = 0;
    for (std::int64_t i = 0; i < words; ++i) {
      std::uint64_t bits = marks[static_cast<std::size_t>(i)];
      marks[static_cast<std::size_t>(i)] = 0;
      while (bits != 0) {
        out[count++] = static_cast<int>(i * 64 + lowest_set_bit(bits));
        bits &= bits - 1;
      }
    }
  } else {
    std::sort(out, out + draw);
    for (std::int64_t i = 0; i < draw; ++i) marks[static_cast<std::size_t>(out[i] >> 6)] = 0;
  }
  // Map [0, m) to the region, skipping the forced column, then insert it at its sorted place.
  const std::int64_t skip = has_forced ? forced - lo : n;
  std::int64_t at = draw;
  for (std::int64_t i = 0; i < draw; ++i) {
    const std::int64_t v = out[i];
    if (v >= skip && at == draw) at = i;
    out[i] = static_cast<int>(lo + v + (v >= skip ? 1 : 0));
  }
  if (has_forced) {
    for (std::int64_t i = draw; i > at; --i) out[i] = out[i - 1];
    out[at] = static_cast<int>(forced);
  }
}

// ------------------------------------------------------------------------------ parallel passes

/// Runs body(first_row, last_row) over blocks of rows with `exec`, in chunks so that progress can
/// be reported from the calling thread between chunks.
class RowPasses {
 public:
  RowPasses(std::int64_t rows, const ProgressCallback& progress) : rows_(rows), progress_(progress) {}

  /// Runs one pass that accounts for `weight` of the total work.
  template <class Exec, class Body>
  void run(const Exec& exec, const char* label, double weight, const Body& body) {
    constexpr std::int64_t block = 128;
    const std::int64_t blocks = (rows_ + block - 1) / block;
    if (blocks <= 1) {  // a parallel region costs more than a block of rows
      body(std::int64_t(0), rows_);
      done_ += weight;
      report(done_);
      return;
    }
    const std::int64_t chunk = std::max<std::int64_t>(blocks / 64, 4 * exec.concurrency());
    for (std::int64_t first = 0; first < blocks; first += chunk) {
      const std::int64_t last = std::min(blocks, first + chunk);
      const std::int64_t rows = rows_;
      Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec>(exec, first, last),
                           [=](const std::int64_t b) { body(b * block, std::min(rows, (b + 1) * block)); });
      exec.fence();
      report(done_ + weight * static_cast<double>(last) / static_cast<double>(blocks));
    }
    done_ += weight;
  }

  void report(double fraction) const {
    if (progress_) progress_(std::min(fraction, 1.0));
  }

 private:
  std::int64_t rows_;
  const ProgressCallback& progress_;
  double done_ = 0;
};

/// row_ptr(r + 1) = lengths(0) + ... + lengths(r), row_ptr(0) = 0; returns nnz.
template <class Exec>
std::size_t prefix_sum(const Exec& exec, const Kokkos::View<std::size_t*, Kokkos::HostSpace>& lengths,
                       const typename HostCsr::row_map_type& row_ptr) {
  const auto n = static_cast<std::int64_t>(lengths.extent(0));
  row_ptr(0) = 0;
  if (n <= 4096) {  // not worth a parallel region
    for (std::int64_t r = 0; r < n; ++r) row_ptr(r + 1) = row_ptr(r) + lengths(r);
    return row_ptr(n);
  }
  Kokkos::parallel_scan("cispmv::generate_ci_matrix::row_ptr", Kokkos::RangePolicy<Exec>(exec, 0, n),
                        [=](const std::int64_t r, std::size_t& sum, const bool final) {
                          sum += lengths(r);
                          if (final) row_ptr(r + 1) = sum;
                        });
  exec.fence();
  return n > 0 ? row_ptr(n) : 0;
}

/// A matrix whose row_ptr is given and whose col_idx / values are allocated uninitialised.
HostCsr allocate(const char* label, std::int64_t n, const typename HostCsr::row_map_type& row_ptr, std::size_t nnz) {
  HostCsr A;
  A.num_rows = static_cast<int>(n);
  A.num_cols = static_cast<int>(n);
  A.row_ptr = row_ptr;
  A.col_idx = typename HostCsr::index_type(
      Kokkos::view_alloc(std::string(label) + "::col_idx", Kokkos::WithoutInitializing), nnz);
  A.values = typename HostCsr::values_type(
      Kokkos::view_alloc(std::string(label) + "::values", Kokkos::WithoutInitializing), nnz);
  return A;
}

Rules make_rules(const CiMatrixParams& p, const CiLayout& layout) {
  Rules R;
  R.n = layout.rows;
  R.w = layout.reference_width;
  R.reference_k = layout.reference_per_row;
  R.reference_density = p.reference_density;
  R.expansion_density = p.expansion_density;
  R.expansion_mean_q = to_fixed(layout.expansion_mean);
  R.spread_q = to_fixed(p.row_irregularity);
  R.longest_row = p.longest_row;
  R.expansion_cap = std::min(expansion_floor_max(R.expansion_mean_q, R.spread_q) + 1, R.n - R.w);
  R.diagonal = p.dominant_diagonal;
  R.seed_key = splitmix64_mix(p.seed ^ 0x43495350'4D563432ULL);  // "CISPMV42": seed 0 is a valid seed too
  return R;
}

constexpr const char* matrix_label = "cispmv::generate_ci_matrix";

template <class Exec>
HostCsr generate_nonsymmetric(const Exec& exec, const Rules& R, const ProgressCallback& progress) {
  RowPasses passes(R.n, progress);
  Kokkos::View<std::size_t*, Kokkos::HostSpace> lengths(Kokkos::view_alloc("lengths", Kokkos::WithoutInitializing),
                                                        static_cast<std::size_t>(R.n));
  passes.run(exec, "cispmv::generate_ci_matrix::count", 0.02, [=](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) lengths(r) = static_cast<std::size_t>(full_row_shape(R, r).length());
  });
  typename HostCsr::row_map_type row_ptr(std::string(matrix_label) + "::row_ptr", static_cast<std::size_t>(R.n) + 1);
  const std::size_t nnz = prefix_sum(exec, lengths, row_ptr);
  HostCsr A = allocate(matrix_label, R.n, row_ptr, nnz);
  const auto col = A.col_idx;
  const auto val = A.values;

  passes.run(exec, "cispmv::generate_ci_matrix::fill", 0.98, [=](std::int64_t first, std::int64_t last) {
    std::vector<std::uint64_t> marks(static_cast<std::size_t>(std::max(R.w, R.n - R.w) / 64 + 1), 0);
    for (std::int64_t r = first; r < last; ++r) {
      const RowShape s = full_row_shape(R, r);
      int* out = col.data() + row_ptr(r);
      RowRng reference_rng(R.seed_key, r, Stream::reference);
      sample_sorted(reference_rng, 0, R.w, s.reference_forced, s.reference_k, out, marks);
      RowRng expansion_rng(R.seed_key, r, Stream::expansion);
      sample_sorted(expansion_rng, R.w, R.n - R.w, s.expansion_forced, s.expansion_k, out + s.reference_k, marks);
      RowRng value_rng(R.seed_key, r, Stream::value);
      const std::int64_t length = s.length();
      double* v = val.data() + row_ptr(r);
      for (std::int64_t k = 0; k < length; ++k) {
        v[k] = R.diagonal && out[k] == r ? static_cast<double>(length) + RowRng(R.seed_key, r, Stream::diagonal).unit()
                                         : offdiagonal_value(value_rng);
      }
    }
  });
  return A;
}

template <class Exec>
HostCsr generate_symmetric(const Exec& exec, const Rules& R, const ProgressCallback& progress) {
  RowPasses passes(R.n, progress);
  using SizeView = Kokkos::View<std::size_t*, Kokkos::HostSpace>;
  const auto n = static_cast<std::size_t>(R.n);
  SizeView lower_lengths(Kokkos::view_alloc("lower_lengths", Kokkos::WithoutInitializing), n);
  passes.run(exec, "cispmv::generate_ci_matrix::count_lower", 0.01, [=](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r)
      lower_lengths(r) = static_cast<std::size_t>(lower_row_shape(R, r).length());
  });
  typename HostCsr::row_map_type lower_ptr("lower_ptr", n + 1);
  const std::size_t lower_nnz = prefix_sum(exec, lower_lengths, lower_ptr);
  HostCsr L = allocate("cispmv::generate_ci_matrix::lower", R.n, lower_ptr, lower_nnz);
  const auto lcol = L.col_idx;
  const auto lval = L.values;

  // The strict lower triangle, row by row, as in the non-symmetric case.
  passes.run(exec, "cispmv::generate_ci_matrix::fill_lower", 0.6, [=](std::int64_t first, std::int64_t last) {
    std::vector<std::uint64_t> marks(static_cast<std::size_t>(std::max(R.w, R.n - R.w) / 64 + 1), 0);
    for (std::int64_t r = first; r < last; ++r) {
      const RowShape s = lower_row_shape(R, r);
      int* out = lcol.data() + lower_ptr(r);
      RowRng reference_rng(R.seed_key, r, Stream::reference);
      sample_sorted(reference_rng, 0, std::min(r, R.w), -1, s.reference_k, out, marks);
      RowRng expansion_rng(R.seed_key, r, Stream::expansion);
      sample_sorted(expansion_rng, R.w, std::max<std::int64_t>(r - R.w, 0), -1, s.expansion_k, out + s.reference_k,
                    marks);
      RowRng value_rng(R.seed_key, r, Stream::value);
      double* v = lval.data() + lower_ptr(r);
      for (std::int64_t k = 0; k < s.length(); ++k) v[k] = offdiagonal_value(value_rng);
    }
  });

  // Row r of A = lower row r, the diagonal, then the mirrored column r of L (the upper part).
  SizeView upper_lengths("upper_lengths", n);
  passes.run(exec, "cispmv::generate_ci_matrix::count_upper", 0.05, [=](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      for (std::size_t k = lower_ptr(r); k < lower_ptr(r + 1); ++k) {
        Kokkos::atomic_add(&upper_lengths(lcol(k)), std::size_t(1));
      }
    }
  });
  const std::size_t diagonal = R.diagonal ? 1 : 0;
  SizeView lengths(Kokkos::view_alloc("lengths", Kokkos::WithoutInitializing), n);
  passes.run(exec, "cispmv::generate_ci_matrix::lengths", 0.0, [=](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) lengths(r) = lower_lengths(r) + diagonal + upper_lengths(r);
  });
  typename HostCsr::row_map_type row_ptr(std::string(matrix_label) + "::row_ptr", n + 1);
  const std::size_t nnz = prefix_sum(exec, lengths, row_ptr);
  HostCsr A = allocate(matrix_label, R.n, row_ptr, nnz);
  const auto col = A.col_idx;
  const auto val = A.values;

  SizeView cursor(Kokkos::view_alloc("cursor", Kokkos::WithoutInitializing), n);
  passes.run(exec, "cispmv::generate_ci_matrix::lower_and_diagonal", 0.1, [=](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      std::size_t at = row_ptr(r);
      for (std::size_t k = lower_ptr(r); k < lower_ptr(r + 1); ++k, ++at) {
        col(at) = lcol(k);
        val(at) = lval(k);
      }
      if (diagonal != 0) {
        col(at) = static_cast<int>(r);
        val(at) = static_cast<double>(lengths(r)) + RowRng(R.seed_key, r, Stream::diagonal).unit();
        ++at;
      }
      cursor(r) = at;
    }
  });
  // The scatter order depends on the threads; sorting each upper part afterwards makes the
  // result deterministic (its columns are distinct).
  passes.run(exec, "cispmv::generate_ci_matrix::mirror", 0.14, [=](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      for (std::size_t k = lower_ptr(r); k < lower_ptr(r + 1); ++k) {
        const std::size_t at = Kokkos::atomic_fetch_add(&cursor(lcol(k)), std::size_t(1));
        col(at) = static_cast<int>(r);
        val(at) = lval(k);
      }
    }
  });
  passes.run(exec, "cispmv::generate_ci_matrix::sort_upper", 0.1, [=](std::int64_t first, std::int64_t last) {
    std::vector<std::pair<int, double>> scratch;
    for (std::int64_t r = first; r < last; ++r) {
      const std::size_t begin = row_ptr(r) + lower_lengths(r) + diagonal;
      const std::size_t end = row_ptr(r + 1);
      scratch.clear();
      for (std::size_t k = begin; k < end; ++k) scratch.emplace_back(col(k), val(k));
      std::sort(scratch.begin(), scratch.end(),
                [](const std::pair<int, double>& a, const std::pair<int, double>& b) { return a.first < b.first; });
      for (std::size_t k = begin; k < end; ++k) {
        col(k) = scratch[k - begin].first;
        val(k) = scratch[k - begin].second;
      }
    }
  });
  return A;
}

/// The paper's Table 3: expansion nonzeros, longest row length and its row number.
struct PaperMatrix {
  std::int64_t expansion_nnz, longest_length, longest_row;
};
constexpr PaperMatrix paper_table3[10] = {{9678327, 1074, 5314},  {9673031, 1069, 6144},  {9666827, 1078, 22358},
                                          {9670529, 1068, 21549}, {9669733, 1060, 4233},  {9673530, 1069, 28394},
                                          {9666857, 1079, 21836}, {9670234, 1077, 20148}, {9661419, 1067, 12787},
                                          {9670316, 1064, 25678}};
constexpr std::int64_t paper_rows = 32768;

[[noreturn]] void unknown_name(const std::string& name, const std::string& why) {
  throw std::invalid_argument("cispmv suite: " + why + " '" + name +
                              "': expected paper32k-1 .. paper32k-10 or scaled-<rows> with rows in [1, 2147483647]");
}

}  // namespace

// ------------------------------------------------------------------------------ public API

CiLayout ci_layout(const CiMatrixParams& p) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("cispmv::CiMatrixParams: " + what); };
  auto in_unit = [](double x) { return x >= 0.0 && x <= 1.0; };  // false for NaN
  if (p.rows < 1 || p.rows > std::numeric_limits<int>::max()) {
    fail("rows = " + std::to_string(p.rows) + " is outside [1, 2^31 - 1]");
  }
  if (!in_unit(p.reference_fraction))
    fail("reference_fraction = " + std::to_string(p.reference_fraction) + " is outside [0, 1]");
  if (!in_unit(p.reference_density))
    fail("reference_density = " + std::to_string(p.reference_density) + " is outside [0, 1]");
  if (!in_unit(p.expansion_density))
    fail("expansion_density = " + std::to_string(p.expansion_density) + " is outside [0, 1]");
  if (!in_unit(p.row_irregularity)) {
    fail("row_irregularity = " + std::to_string(p.row_irregularity) + " is outside [0, 1]");
  }
  if (p.longest_row < -1 || p.longest_row >= p.rows) {
    fail("longest_row = " + std::to_string(p.longest_row) + " is neither -1 nor a row index in [0, rows)");
  }
  if (p.longest_row >= 0 && p.symmetric) fail("longest_row cannot be pinned in a symmetric matrix");
  CiLayout layout;
  layout.rows = p.rows;
  layout.reference_width =
      std::min<std::int64_t>(std::llround(p.reference_fraction * static_cast<double>(p.rows)), p.rows);
  layout.reference_per_row = std::min<std::int64_t>(
      std::llround(p.reference_density * static_cast<double>(layout.reference_width)), layout.reference_width);
  layout.expansion_mean = p.expansion_density * static_cast<double>(p.rows - layout.reference_width);
  const std::uint64_t mean_q = to_fixed(layout.expansion_mean);
  const std::uint64_t spread_q = to_fixed(p.row_irregularity);
  layout.expansion_max = std::min(expansion_floor_max(mean_q, spread_q) + 1, p.rows - layout.reference_width);
  return layout;
}

ProgressCallback stderr_progress(const std::string& label, double interval_s) {
  using clock = std::chrono::steady_clock;
  struct State {
    clock::time_point start = clock::now();
    clock::time_point last = clock::now();
    bool finished = false;
  };
  auto state = std::make_shared<State>();
  return [label, interval_s, state](double fraction) {
    const auto now = clock::now();
    if (fraction >= 1.0) {
      if (state->finished) return;
      state->finished = true;
      std::fprintf(stderr, "%s: 100%% (%.1f s)\n", label.c_str(),
                   std::chrono::duration<double>(now - state->start).count());
      return;
    }
    if (std::chrono::duration<double>(now - state->last).count() < interval_s) return;
    state->last = now;
    std::fprintf(stderr, "%s: %.0f%%\n", label.c_str(), 100.0 * fraction);
  };
}

template <class HostExecutionSpace>
HostCsr generate_ci_matrix(const HostExecutionSpace& exec, const CiMatrixParams& params,
                           const ProgressCallback& progress) {
  static_assert(Kokkos::SpaceAccessibility<HostExecutionSpace, Kokkos::HostSpace>::accessible,
                "cispmv::generate_ci_matrix: the execution space must run on the host");
  const CiLayout layout = ci_layout(params);
  const Rules rules = make_rules(params, layout);
  HostCsr A;
  {
    const impl::ProfilingRegion region("cispmv::generate_ci_matrix");
    A = params.symmetric ? generate_symmetric(exec, rules, progress) : generate_nonsymmetric(exec, rules, progress);
  }
  if (progress) progress(1.0);
  return A;
}

template HostCsr generate_ci_matrix(const Kokkos::DefaultHostExecutionSpace&, const CiMatrixParams&,
                                    const ProgressCallback&);
// Serial is the default host space only when no parallel host backend is enabled; instantiating it
// twice would not compile.
#if defined(KOKKOS_ENABLE_SERIAL) && \
    (defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_THREADS) || defined(KOKKOS_ENABLE_HPX))
template HostCsr generate_ci_matrix(const Kokkos::Serial&, const CiMatrixParams&, const ProgressCallback&);
#endif

HostCsr generate_ci_matrix(const CiMatrixParams& params, const ProgressCallback& progress) {
  return generate_ci_matrix(Kokkos::DefaultHostExecutionSpace(), params, progress);
}

CiMatrixParams paper_params(int index) {
  if (index < 1 || index > 10) {
    throw std::invalid_argument("cispmv::paper_params: index " + std::to_string(index) +
                                " is outside 1..10 (the paper's Table 3)");
  }
  const PaperMatrix& t = paper_table3[index - 1];
  CiMatrixParams p;
  p.rows = paper_rows;
  p.seed = static_cast<std::uint64_t>(index);
  const CiLayout layout = ci_layout(p);  // W = 3277, 655 reference entries per row
  const std::int64_t expansion_width = paper_rows - layout.reference_width;
  // The pinned row holds longest_length - 655 expansion entries; the other rows share the rest,
  // and the spread is chosen so that their maximum, floor(m (1 + a)) + 1, is the pinned length.
  const std::int64_t pinned = t.longest_length - layout.reference_per_row;
  const double mean = static_cast<double>(t.expansion_nnz - pinned) / static_cast<double>(paper_rows - 1);
  p.expansion_density = mean / static_cast<double>(expansion_width);
  p.row_irregularity = (static_cast<double>(pinned) - 0.5) / mean - 1.0;
  p.longest_row = t.longest_row;
  return p;
}

CiMatrixParams scaled_params(std::int64_t rows, std::uint64_t seed) {
  CiMatrixParams p;
  p.rows = rows;
  p.seed = seed;
  if (rows > paper_rows) {
    const double scale = static_cast<double>(paper_rows) / static_cast<double>(rows);
    p.reference_density = 0.2 * scale;
    p.expansion_density = 0.01 * scale;
  }
  ci_layout(p);  // range checks
  return p;
}

CiMatrixParams suite_params(const std::string& name) {
  const std::string paper_prefix = "paper32k-";
  const std::string scaled_prefix = "scaled-";
  if (name.compare(0, paper_prefix.size(), paper_prefix) == 0) {
    const std::string index = name.substr(paper_prefix.size());
    for (int i = 1; i <= 10; ++i) {
      if (index == std::to_string(i)) return paper_params(i);
    }
    unknown_name(name, "no paper matrix");
  }
  if (name.compare(0, scaled_prefix.size(), scaled_prefix) == 0) {
    const std::string digits = name.substr(scaled_prefix.size());
    if (digits.empty() || digits.size() > 10 || digits[0] == '0' ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      unknown_name(name, "malformed row count in");
    }
    const std::int64_t rows = std::stoll(digits);
    if (rows > std::numeric_limits<int>::max()) unknown_name(name, "row count out of range in");
    return scaled_params(rows);
  }
  unknown_name(name, "unknown matrix");
}

HostCsr generate_suite_matrix(const std::string& name, bool progress) {
  const CiMatrixParams params = suite_params(name);
  // the matrix's size from its parameters, against the memory there is, before anything is allocated
  const double n = static_cast<double>(params.rows);
  const double width = std::round(params.reference_fraction * n);
  const double per_row = std::round(params.reference_density * width) + params.expansion_density * (n - width) + 1;
  const double bytes = n * per_row * (sizeof(double) + sizeof(int)) + 3 * (n + 1) * sizeof(std::size_t);
  const double have = static_cast<double>(host_available_bytes());
  if (bytes > 0.8 * have) {
    throw std::invalid_argument("suite matrix '" + name + "': ~" + std::to_string(static_cast<long long>(n * per_row)) +
                                " nonzeros need ~" + format_bytes(bytes) + ", " + format_bytes(have) +
                                " of memory are available (scaled-1048576, ~1e9 nonzeros, needs 12 GB)");
  }
  return generate_ci_matrix(params, progress ? stderr_progress("cispmv: generating " + name) : ProgressCallback());
}

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  for (int i = 1; i <= 10; ++i) names.push_back("paper32k-" + std::to_string(i));
  for (std::int64_t rows = paper_rows; rows <= (std::int64_t(1) << 20); rows *= 2) {
    names.push_back("scaled-" + std::to_string(rows));
  }
  return names;
}

}  // namespace cispmv
