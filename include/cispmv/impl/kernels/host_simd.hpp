#pragma once
// csell's CPU slice walk in AVX-512 (x86-64 CPUs that have it, GCC or Clang; chosen at run time, so
// the build needs no -march): 8 rows of a slice per vector register, G registers (8G rows) at once,
// entry k of all of them before entry k + 1. Per step and register: one 16-byte load of 8 column
// deltas, one gather of x, and the values as one masked vector load (values inline) or from the
// value table, by a gather or by 8 scalar loads (TableRead). Padding and jump slots are masked out,
// so their loads never happen. The portable loop (SpmvFunctor<..., CompressedSellMatrix>'s SliceTag
// walk) stays for other CPUs, other types and the slice's last rows.
//
// Measured (frozen-core H2O/6-31G FCI, 99.6M entries): Intel Xeon (the device host), 16 cores:
// portable loop 9.1-11.1 ms, this walk with table gathers 7.3-7.6; AMD EPYC Zen 4 (the development
// machine), 2 cores: portable 51-56, table gathers 51-55, table by scalar loads 41-45, values
// inline 36-38. So where a gather from L1 costs no less than 8 loads (Zen 4) the table is read by
// loads; table_gathers_pay() finds out once per process. Also here: the block walk (several vectors) and the
// factored CI Hamiltonian's tile W = A B in AVX-512 and in AVX2 + FMA (ci/factored/tile_kernel.hpp).

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__)) &&         \
    !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__) && \
    !defined(CISPMV_NO_HOST_SIMD)
#define CISPMV_HOST_SIMD 1
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <vector>
#else
#define CISPMV_HOST_SIMD 0
#endif

namespace cispmv::impl::host_simd {

/// How the walk reads values: which walk runs (none: the portable loop).
enum class Walk : int {
  none = 0,           ///< the portable loop
  inline_values = 1,  ///< AVX-512, values inline (masked vector loads)
  table_gather = 2,   ///< AVX-512, table values by gather
  table_loads = 3     ///< AVX-512, table values by scalar loads
};

/// The delta of a jump slot (one that only advances the column): CompressedSellMatrix::jump_delta, which
/// the kernels check against this one.
inline constexpr std::uint16_t jump_delta = 65535;

/// Rows the walk takes at once: whole registers of 8, 4 registers where the slice has 32 rows left.
inline constexpr int rows_per_register = 8;
inline constexpr int registers = 4;

/// One group of rows of a slice: its slots start at `at` (entry k of row i at at + k * step + i).
template <class S>
struct Group {
  const std::uint16_t* delta;
  const std::uint16_t* index;  // value_index (table) or nullptr
  const S* values;             // inline_values or nullptr
  const S* table;              // value_table or nullptr
  const S* x;
  std::size_t at;
  std::size_t step;
  int width;          // slots to walk: the longest row of the group
  const int* first;   // first_col of the group's first row
  const int* length;  // row_length of the group's first row
  S* sums;            // one per row of the group
};

/// Seconds the walk takes to read its value table by gathers and by scalar loads on this CPU, timed
/// once per process (~1 ms) on a slice like a CI Hamiltonian's: 32 rows of 512 entries, a 4,096-value
/// table (in L1, as the hot part of a real table is) and a 64K-entry x (in L2); the best of 7
/// interleaved timings of 8 walks each. {0, 0} where the walk cannot run.
struct TableReadTimes {
  double gather = 0, loads = 0;
};

#if CISPMV_HOST_SIMD
#define CISPMV_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma")))

/// Whether this CPU (and its OS) runs AVX-512F and VL. Once per process.
inline bool avx512_available() {
  static const bool yes = [] {
    __builtin_cpu_init();  // harmless after main, needed if the first call comes from a static constructor
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  }();
  return yes;
}

template <class S>
struct Vec;
template <>
struct Vec<double> {  // 8 doubles: a zmm register
  using type = __m512d;
  CISPMV_AVX512 static type zero() { return _mm512_setzero_pd(); }
  CISPMV_AVX512 static type gather(__mmask8 m, __m256i i, const double* p) {
    return _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, i, p, 8);
  }
  CISPMV_AVX512 static type load(__mmask8 m, const double* p) { return _mm512_maskz_loadu_pd(m, p); }
  CISPMV_AVX512 static type loads(__mmask8 m, const double* t, const std::uint16_t* i) {
    return _mm512_maskz_mov_pd(m,
                               _mm512_set_pd(t[i[7]], t[i[6]], t[i[5]], t[i[4]], t[i[3]], t[i[2]], t[i[1]], t[i[0]]));
  }
  CISPMV_AVX512 static type fma(type a, type b, type c) { return _mm512_fmadd_pd(a, b, c); }
  CISPMV_AVX512 static void store(double* p, type v) { _mm512_storeu_pd(p, v); }
};
template <>
struct Vec<float> {  // 8 floats: a ymm register, AVX-512VL masks
  using type = __m256;
  CISPMV_AVX512 static type zero() { return _mm256_setzero_ps(); }
  CISPMV_AVX512 static type gather(__mmask8 m, __m256i i, const float* p) {
    return _mm256_mmask_i32gather_ps(_mm256_setzero_ps(), m, i, p, 4);
  }
  CISPMV_AVX512 static type load(__mmask8 m, const float* p) { return _mm256_maskz_loadu_ps(m, p); }
  CISPMV_AVX512 static type loads(__mmask8 m, const float* t, const std::uint16_t* i) {
    return _mm256_maskz_mov_ps(m,
                               _mm256_set_ps(t[i[7]], t[i[6]], t[i[5]], t[i[4]], t[i[3]], t[i[2]], t[i[1]], t[i[0]]));
  }
  CISPMV_AVX512 static type fma(type a, type b, type c) { return _mm256_fmadd_ps(a, b, c); }
  CISPMV_AVX512 static void store(float* p, type v) { _mm256_storeu_ps(p, v); }
};

/// The walk over G registers of rows (8G rows): sums[i] = the row's entries of C times x.
template <class S, int G, Walk W>
CISPMV_AVX512 void walk_rows(const Group<S>& g) {
  using V = Vec<S>;
  __m256i col[G], len[G];
  typename V::type sum[G];
  for (int r = 0; r < G; ++r) {
    col[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.first + 8 * r));
    len[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.length + 8 * r));
    sum[r] = V::zero();
  }
  const __m256i jump = _mm256_set1_epi32(jump_delta);
  for (int k = 0; k < g.width; ++k) {
    const std::size_t at = g.at + static_cast<std::size_t>(k) * g.step;
    const __m256i kv = _mm256_set1_epi32(k);
    for (int r = 0; r < G; ++r) {
      const std::size_t slot = at + 8 * static_cast<std::size_t>(r);
      const __m256i d = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.delta + slot)));
      col[r] = _mm256_add_epi32(col[r], d);
      const __mmask8 live = _mm256_cmpgt_epi32_mask(len[r], kv) & _mm256_cmpneq_epi32_mask(d, jump);
      const typename V::type xv = V::gather(live, col[r], g.x);
      typename V::type v;
      if constexpr (W == Walk::inline_values) {
        v = V::load(live, g.values + slot);
      } else if constexpr (W == Walk::table_gather) {
        v = V::gather(live, _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.index + slot))),
                      g.table);
      } else {
        v = V::loads(live, g.table, g.index + slot);  // padding and jump slots hold index 0: in the table
      }
      sum[r] = V::fma(v, xv, sum[r]);
    }
  }
  for (int r = 0; r < G; ++r) V::store(g.sums + 8 * r, sum[r]);
}

/// walk_rows for `rows` rows (8 or 32).
template <class S>
inline void walk(const Group<S>& g, int rows, Walk w) {
  const bool four = rows == registers * rows_per_register;
  switch (w) {
    case Walk::inline_values:
      four ? walk_rows<S, registers, Walk::inline_values>(g) : walk_rows<S, 1, Walk::inline_values>(g);
      break;
    case Walk::table_gather:
      four ? walk_rows<S, registers, Walk::table_gather>(g) : walk_rows<S, 1, Walk::table_gather>(g);
      break;
    default: four ? walk_rows<S, registers, Walk::table_loads>(g) : walk_rows<S, 1, Walk::table_loads>(g); break;
  }
}

/// (see TableReadTimes)
inline TableReadTimes table_read_times() {
  static const TableReadTimes times = [] {
    TableReadTimes t;
    if (!avx512_available()) return t;
    constexpr int rows = registers * rows_per_register, width = 512, table_size = 4096, cols = 1 << 16;
    std::vector<std::uint16_t> delta(static_cast<std::size_t>(rows) * width), index(delta.size());
    std::vector<double> table(table_size), x(cols);
    std::vector<int> first(rows), length(rows, width);
    std::uint32_t state = 12345;
    const auto next = [&state] { return state = state * 1664525u + 1013904223u; };
    for (std::size_t i = 0; i < delta.size(); ++i) {
      delta[i] = static_cast<std::uint16_t>((next() >> 16) % 128);  // 512 x < 128: columns stay < 65,536
      index[i] = static_cast<std::uint16_t>((next() >> 16) % table_size);
    }
    for (int i = 0; i < table_size; ++i) table[i] = 1.0 + 1e-3 * i;
    for (int i = 0; i < cols; ++i) x[i] = 1.0 - 1e-6 * i;
    double sums[rows];
    const Group<double> g{delta.data(), index.data(), nullptr,      table.data(),  x.data(), 0,
                          rows,         width,        first.data(), length.data(), sums};
    const auto once = [&](Walk w) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 8; ++i) walk(g, rows, w);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    once(Walk::table_gather);  // warm up
    t.gather = t.loads = 1e30;
    for (int rep = 0; rep < 7; ++rep) {  // interleaved, so that both see the same conditions
      t.gather = std::min(t.gather, once(Walk::table_gather));
      t.loads = std::min(t.loads, once(Walk::table_loads));
    }
    return t;
  }();
  return times;
}

/// Whether this CPU reads the value table faster by gathers than by scalar loads (table_read_times).
inline bool table_gathers_pay() {
  const TableReadTimes t = table_read_times();
  return avx512_available() && t.gather < t.loads;
}
#undef CISPMV_AVX512
#else
inline bool avx512_available() { return false; }
inline TableReadTimes table_read_times() { return {}; }
inline bool table_gathers_pay() { return false; }
template <class S>
inline void walk(const Group<S>&, int, Walk) {}
#endif

/// Whether csell built for this CPU should keep its values inline (10 bytes per entry, no table
/// lookups) rather than in a value table (4 bytes per entry): where the walk runs and the table's
/// lookups are scalar loads (table_gathers_pay() false). Measured on the frozen-core FCI
/// Hamiltonian: Zen 4, 2 cores, values inline 36-38 ms against the table by loads 41-45; Intel Xeon,
/// whose gathers pay, the table by gathers 7.3 ms against values inline 10.5 (16 cores) and 33
/// against 44-56 (2 cores).
inline bool values_inline_pays() { return avx512_available() && !table_gathers_pay(); }

/// The types the walk runs: double or float values, 32-bit columns.
template <class S, class O>
inline constexpr bool supports = (std::is_same_v<S, double> || std::is_same_v<S, float>)&&std::is_same_v<O, int>;

/// "AVX-512, values inline" etc. for plan descriptions; "" for the portable loop.
inline const char* walk_name(Walk w) {
  switch (w) {
    case Walk::inline_values: return "AVX-512, values inline";
    case Walk::table_gather: return "AVX-512, table by gathers";
    case Walk::table_loads: return "AVX-512, table by loads";
    default: return "";
  }
}

/// The types the block walk runs (several vectors): double values, 32-bit columns.
template <class S, class O>
inline constexpr bool supports_block = std::is_same_v<S, double>&& std::is_same_v<O, int>;

#if CISPMV_HOST_SIMD
/// Several vectors (block products Y = A X, X row-major with unit column stride): 8 rows of a slice at
/// a time, entry k of all of them before entry k + 1. Each row's sums of up to 8 Z columns stay in Z
/// zmm registers. Per entry: its delta and its value (inline, or from the table by a scalar load), then
/// Z masked loads of X's row `col` (columns first .. first + columns - 1: `X` points at column `first`
/// of row 0, rows `ldx` apart) and Z fused multiply-adds. Padding and jump slots are skipped. `col`
/// holds the 8 rows' first columns (advanced here), `len` their lengths (0 for rows past the slice's
/// end), `out` receives 8 x 8Z sums, row after row. The portable loop carries one row at a time from 8
/// columns on (its 8 x K sums would not stay in registers), so each entry of a column-major slice is a
/// new cache line: on the frozen-core FCI Hamiltonian (Zen 4, 2 cores) 5 vectors took 253 ms that way
/// and 127-137 with this walk, 8 vectors 376 and 145-164, 16 vectors 951-1,050 and 231-249 (CSR:
/// 151-166, 229-271 and 1,200).
template <int Z>
__attribute__((target("avx512f,avx512vl,avx2,fma"))) inline void block_walk(
    const std::uint16_t* delta, const std::uint16_t* index, const double* values, const double* table, const double* X,
    std::size_t ldx, int columns, std::size_t at, std::size_t step, int width, int* col, const int* len, double* out) {
  static_assert(Z == 1 || Z == 2, "cispmv: the block walk takes up to 16 columns");
  __mmask8 mask[Z];
  for (int z = 0; z < Z; ++z) {
    const int c = std::clamp(columns - 8 * z, 0, 8);
    mask[z] = static_cast<__mmask8>((1u << c) - 1u);
  }
  __m512d acc[8][Z];
  for (int r = 0; r < 8; ++r)
    for (int z = 0; z < Z; ++z) acc[r][z] = _mm512_setzero_pd();
  for (int k = 0; k < width; ++k) {
    const std::size_t row_at = at + static_cast<std::size_t>(k) * step;
    for (int r = 0; r < 8; ++r) {
      if (k >= len[r]) continue;
      const std::uint16_t d = delta[row_at + r];
      col[r] += d;
      if (d == jump_delta) continue;
      const __m512d v = _mm512_set1_pd(index ? table[index[row_at + r]] : values[row_at + r]);
      const double* xr = X + static_cast<std::size_t>(col[r]) * ldx;
      for (int z = 0; z < Z; ++z) acc[r][z] = _mm512_fmadd_pd(v, _mm512_maskz_loadu_pd(mask[z], xr + 8 * z), acc[r][z]);
    }
  }
  for (int r = 0; r < 8; ++r)
    for (int z = 0; z < Z; ++z) _mm512_storeu_pd(out + (8 * Z) * r + 8 * z, acc[r][z]);
}
#endif

#if CISPMV_HOST_SIMD
/// The factored CI Hamiltonian's tile on CPUs (ci/factored.hpp, FactoredTileKernel): W = A B for A
/// (rows x k, row-major), B (k x 8) and W (rows x 8), the 8 columns positions of x. A row of W is a zmm
/// register, four rows' chains of fused multiply-adds at once, A's values broadcast from memory.
__attribute__((target("avx512f,avx512vl,avx2,fma"))) inline void factored_tile_avx512(const double* A, int rows, int k,
                                                                                      const double* B, double* W) {
  int m = 0;
  for (; m + 4 <= rows; m += 4) {
    __m512d w0 = _mm512_setzero_pd(), w1 = w0, w2 = w0, w3 = w0;
    const double* a = A + static_cast<std::ptrdiff_t>(m) * k;
    for (int c = 0; c < k; ++c) {
      const __m512d b = _mm512_loadu_pd(B + 8 * c);
      w0 = _mm512_fmadd_pd(_mm512_set1_pd(a[c]), b, w0);
      w1 = _mm512_fmadd_pd(_mm512_set1_pd(a[k + c]), b, w1);
      w2 = _mm512_fmadd_pd(_mm512_set1_pd(a[2 * k + c]), b, w2);
      w3 = _mm512_fmadd_pd(_mm512_set1_pd(a[3 * k + c]), b, w3);
    }
    _mm512_storeu_pd(W + 8 * m, w0);
    _mm512_storeu_pd(W + 8 * (m + 1), w1);
    _mm512_storeu_pd(W + 8 * (m + 2), w2);
    _mm512_storeu_pd(W + 8 * (m + 3), w3);
  }
  for (; m < rows; ++m) {
    __m512d w = _mm512_setzero_pd();
    for (int c = 0; c < k; ++c) w = _mm512_fmadd_pd(_mm512_set1_pd(A[m * k + c]), _mm512_loadu_pd(B + 8 * c), w);
    _mm512_storeu_pd(W + 8 * m, w);
  }
}

/// Whether this CPU (and its OS) runs AVX2 and FMA. Once per process.
inline bool avx2_fma_available() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return yes;
}

/// factored_tile in AVX2 + FMA: a row of W in two ymm registers, four rows' chains of fused multiply-adds at once
/// (8 accumulators, B's two halves and A's broadcast value: 11 of the 16 registers), A's values broadcast from memory.
__attribute__((target("avx2,fma"))) inline void factored_tile_avx2(const double* A, int rows, int k, const double* B,
                                                                   double* W) {
  int m = 0;
  for (; m + 4 <= rows; m += 4) {
    __m256d l0 = _mm256_setzero_pd(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0;
    const double* a = A + static_cast<std::ptrdiff_t>(m) * k;
    for (int c = 0; c < k; ++c) {
      const __m256d bl = _mm256_loadu_pd(B + 8 * c), bh = _mm256_loadu_pd(B + 8 * c + 4);
      __m256d v = _mm256_broadcast_sd(a + c);
      l0 = _mm256_fmadd_pd(v, bl, l0);
      h0 = _mm256_fmadd_pd(v, bh, h0);
      v = _mm256_broadcast_sd(a + k + c);
      l1 = _mm256_fmadd_pd(v, bl, l1);
      h1 = _mm256_fmadd_pd(v, bh, h1);
      v = _mm256_broadcast_sd(a + 2 * k + c);
      l2 = _mm256_fmadd_pd(v, bl, l2);
      h2 = _mm256_fmadd_pd(v, bh, h2);
      v = _mm256_broadcast_sd(a + 3 * k + c);
      l3 = _mm256_fmadd_pd(v, bl, l3);
      h3 = _mm256_fmadd_pd(v, bh, h3);
    }
    double* w = W + 8 * m;
    _mm256_storeu_pd(w, l0);
    _mm256_storeu_pd(w + 4, h0);
    _mm256_storeu_pd(w + 8, l1);
    _mm256_storeu_pd(w + 12, h1);
    _mm256_storeu_pd(w + 16, l2);
    _mm256_storeu_pd(w + 20, h2);
    _mm256_storeu_pd(w + 24, l3);
    _mm256_storeu_pd(w + 28, h3);
  }
  for (; m < rows; ++m) {
    __m256d l = _mm256_setzero_pd(), h = l;
    for (int c = 0; c < k; ++c) {
      const __m256d v = _mm256_broadcast_sd(A + static_cast<std::ptrdiff_t>(m) * k + c);
      l = _mm256_fmadd_pd(v, _mm256_loadu_pd(B + 8 * c), l);
      h = _mm256_fmadd_pd(v, _mm256_loadu_pd(B + 8 * c + 4), h);
    }
    _mm256_storeu_pd(W + 8 * m, l);
    _mm256_storeu_pd(W + 8 * m + 4, h);
  }
}
#endif
}  // namespace cispmv::impl::host_simd
