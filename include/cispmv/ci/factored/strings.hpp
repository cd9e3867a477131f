#pragma once
/// \file ci/factored/strings.hpp
/// The factored Hamiltonian's string tables: what src/ci/factored/ builds on the host from the integrals and a
/// determinant space (impl::FactoredHost: the alpha and beta strings' ranges and addresses, the same-spin string
/// Hamiltonians H_alpha and H_beta, the single-replacement lists of each spin with their signs and orbital pairs,
/// the alpha strings' replacements in batches of one symmetry class, the integrals as a pair x pair square), and
/// the same arrays as Views in the memory the kernels read them from (impl::FactoredData). PySCF's names for the
/// same tables: docs/factored_hamiltonian.md.

#include <Kokkos_Core.hpp>

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/factored/gathered_gemm.hpp"
#include "cispmv/ci/factored/options.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/impl/convert_helpers.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// loops over a thread's slots and a batch's rows: unrolled on the device, so that their arrays stay in
// registers
#if defined(__CUDA_ARCH__)
#define CISPMV_FACTORED_UNROLL _Pragma("unroll")
#else
#define CISPMV_FACTORED_UNROLL
#endif

namespace cispmv::impl {

/// The tile kernel's units: at most this many batches of 8 alpha replacements, and 64 pairs.
inline constexpr int factored_tile_batches = 4;
inline constexpr int factored_tile_pairs = 64;
/// Bits of a packed beta entry: kernel position of the target string (high), sign, pair index (low).
inline constexpr int factored_pair_bits = 12;
inline constexpr int factored_position_shift = factored_pair_bits + 1;

/// The factored Hamiltonian's arrays on the host, as src/ci/factored/ builds them. Beta strings are
/// numbered in "kernel order" q: by irrep (in a space of one irrep; otherwise all as one), then rank,
/// then id, so that the beta strings that pair with one alpha string in the space are one range
/// [lo, hi) of q. Lists over q are sliced in 32s: entry k of position q is at
/// ptr[slice(q)] + 32 k + q % 32, so that 32 threads on consecutive positions read consecutive words.
struct FactoredHost {
  int num_orbitals = 0;
  int num_pairs = 0;      ///< num_orbitals (num_orbitals + 1) / 2
  std::int64_t rows = 0;  ///< determinants in the space
  int na = 0, nb = 0;     ///< alpha / beta strings
  int nkb = 0;            ///< beta ranks + 1
  int max_range = 0;      ///< largest hi - lo over alpha strings
  int batch = 8;          ///< alpha replacements per batch (8 or 16)
  int num_classes = 1;    ///< irreps of orbital pairs told apart (8 with symmetry, else 1)
  bool symmetry = false;  ///< pairs of different irreps skipped
  std::vector<std::int64_t>
      a_rowbase;  ///< [ia * nkb + kb]: index of (ia, first beta of rank kb) less its position; -1 off the space
  std::vector<std::int32_t> a_lo, a_hi;   ///< per alpha string: its beta strings' range of q
  std::vector<std::uint8_t> q_rank;       ///< per q: rank of the beta string
  std::vector<std::int32_t> q_position;   ///< per q: beta.position (offset inside its block)
  std::vector<std::int32_t> q_block_end;  ///< per q: the first position after q's block (its rank and irrep)
  // H_alpha over alpha ids (CSR; entries only between strings that share a range of betas)
  std::vector<std::int64_t> aa_ptr;
  std::vector<std::int32_t> aa_col;
  std::vector<double> aa_val;
  // H_beta over q, sliced: targets are kernel positions
  std::vector<std::int64_t> bb_ptr;  ///< per slice of 32 positions
  std::vector<std::int32_t> bb_count, bb_col;
  std::vector<double> bb_val;
  // beta replacements (E_rr of each occupied r, then singles) per class of their pair, sliced:
  // entry = target q << factored_position_shift | negative << factored_pair_bits | pair index
  std::vector<std::int64_t> be_ptr;    ///< [class * slices + slice]
  std::vector<std::int32_t> be_count;  ///< [class * nb + q]
  std::vector<std::uint32_t> be_data;
  // FactoredOptions::singlet (empty without it): per alpha string, the kernel position of the same string as a beta
  // string; per position, the alpha id of its string. Each position's beta replacements are then sorted by target,
  // so that a walk that stops at a target stops at the first one past it, and H_beta's lists are empty (its terms
  // are the transpose of H_alpha's).
  std::vector<std::int32_t> a_self, q_alpha;
  // alpha replacements per alpha string in batches of `batch` of one class (the diagonal,
  // pair index num_pairs: sum over the string's occupied p of (pp|rs); padding: ja -1, sign 0)
  std::vector<std::int64_t> ab_ptr;    ///< per alpha string: its batches
  std::vector<std::uint8_t> ab_class;  ///< per batch
  std::vector<std::int32_t> ab_ja, ab_pair;
  std::vector<double> ab_sign;
  std::vector<std::int32_t> ab_lo, ab_len;  ///< per batch: the union of its strings' ranges of q
  /// per batch: its replacements up to the last live one (a string that pairs with some position), rounded up to an
  /// even count (0: none; FactoredScatterKernel walks only these)
  std::vector<std::uint8_t> ab_walked;
  int max_batch_range = 0;  ///< largest ab_len
  /// (pq|rs) as a num_pairs x num_pairs square, then a row per alpha string ia (row num_pairs + ia): the diagonal
  /// replacement's sum over the string's occupied p of (pp|rs)
  std::vector<double> eri;
  // the scatter kernel's view of the beta replacements: pairs by class (cls_pair[cls_ptr[c]..cls_ptr[c + 1]))
  // and, per pair of that order m and position q, the target position and sign of the pair's replacement
  // in q's string (E_rs or E_sr, whichever the string allows; E_rr keeps an occupied r):
  // entry (m, q) = target << 1 | negative, or -1, at m * table_stride + q: a pair's entries of consecutive
  // positions (the scatter kernel's walk), rows padded with -1 to a multiple of 8 positions
  std::vector<std::int32_t> cls_ptr, cls_pair, table;
  int table_stride = 0;
  int max_class_pairs = 0;
  std::vector<std::int32_t> pair_slot;  ///< per pair: its position in its class's pairs (cls_pair)
  // the units of the tile kernel (factored_units): per alpha string (mu_ptr), a run of at most
  // max_batches of its batches of one class (first batch mu_batch, mu_ksteps of them) against at most
  // max_pairs pairs of that class (mu_pair: the first, as an offset in the class; mu_pairs of them), over the
  // union of the strings' ranges of q (mu_lo, mu_len)
  std::vector<std::int64_t> mu_ptr, mu_batch;
  std::vector<std::int32_t> mu_ksteps, mu_pair, mu_pairs, mu_lo, mu_len;
  int max_unit_pairs = 0, max_unit_batches = 0;
  std::size_t alpha_beta_terms = 0;  ///< beta entries visited by one product (the cost model's unit)
  // the same-spin terms as dense products (FactoredTuning::SameSpinPass::gemm), where factor_hamiltonian was asked
  // for them: launch 0 H_alpha (x) 1, launch 1 1 (x) H_beta; gemm_why says why they were not built
  GatheredGemmHost gemm;
  bool gemm_built = false;
  std::string gemm_why;
  double same_spin_terms = 0.0;  ///< the same-spin terms' multiply-adds in one product (the lists' entries used;
                                 ///< counted by same_spin_products only, in full where gemm_built)
};

/// Whether factor_hamiltonian builds FactoredHost::table (pairs x beta strings x 4 bytes: the scatter kernel's walk
/// over every pair of a class), or leaves it empty (the lists' walk and the tile kernel read the lists).
enum class FactoredTable { none, rows };
/// The most bytes the same-spin pass's dense blocks may take (FactoredTuning::SameSpinPass).
inline constexpr double factored_gemm_max_bytes = 256.0 * 1024 * 1024;
/// The string lists of a space; with `same_spin_gemm` also the same-spin terms' dense products (FactoredHost::gemm),
/// unless their blocks would exceed factored_gemm_max_bytes (FactoredHost::gemm_why).
FactoredHost factor_hamiltonian(const ci::FciDump& integrals, const ci::DeterminantSpace& space,
                                const ci::FactoredOptions& options, int batch = 8,
                                FactoredTable table = FactoredTable::none, bool same_spin_gemm = false);
/// The same-spin terms as dense products (FactoredHost::gemm) from the lists factor_hamiltonian built: blocks by the
/// class of each alpha string (a_class, by id) and beta string (q_class, by kernel position); all 0 where the
/// integrals do not obey ORBSYM. Sets gemm_why and leaves gemm_built false where the blocks would take more than
/// factored_gemm_max_bytes.
void same_spin_products(FactoredHost& h, const std::vector<std::uint8_t>& a_class,
                        const std::vector<std::uint8_t>& q_class);
/// The units of the tile kernel (FactoredHost::mu_*): each alpha string's batches in runs of one
/// class of at most `max_batches`, against at most `max_pairs` pairs of the class.
void factored_units(FactoredHost& h, int max_batches, int max_pairs);

template <class T, class Mem>
Kokkos::View<T*, Mem> factored_view(const char* label, const std::vector<T>& v) {
  return view_of<T, Mem>(std::string("cispmv::factored::") + label, v);
}

/// The arrays every kernel reads, in the memory space Mem.
template <class Mem>
struct FactoredData {
  int num_pairs = 0, nb = 0, nkb = 0, slices = 0, max_range = 0, max_batch_range = 0, batch = 8, max_class_pairs = 0,
      table_stride = 0, max_unit_pairs = 0, max_unit_batches = 0;
  bool same_spin = true, alpha_beta = true;  ///< the terms products form (FactoredTuning::terms)
  Kokkos::View<std::int64_t*, Mem> a_rowbase, aa_ptr, bb_ptr, be_ptr, ab_ptr, mu_ptr, mu_batch;
  Kokkos::View<std::int32_t*, Mem> a_lo, a_hi, q_position, q_block_end, aa_col, bb_count, bb_col, be_count, ab_ja,
      ab_pair, ab_lo, ab_len, cls_ptr, cls_pair, pair_slot, table, mu_ksteps, mu_pair, mu_pairs, mu_lo, mu_len;
  Kokkos::View<std::uint8_t*, Mem> q_rank, ab_class, ab_walked;
  Kokkos::View<double*, Mem> aa_val, bb_val, ab_sign, eri;
  Kokkos::View<std::uint32_t*, Mem> be_data;

  FactoredData() = default;
  explicit FactoredData(const FactoredHost& h)
      : num_pairs(h.num_pairs),
        nb(h.nb),
        nkb(h.nkb),
        slices((h.nb + 31) / 32),
        max_range(h.max_range),
        max_batch_range(h.max_batch_range),
        batch(h.batch),
        max_class_pairs(h.max_class_pairs),
        table_stride(h.table_stride),
        max_unit_pairs(h.max_unit_pairs),
        max_unit_batches(h.max_unit_batches),
        a_rowbase(factored_view<std::int64_t, Mem>("a_rowbase", h.a_rowbase)),
        aa_ptr(factored_view<std::int64_t, Mem>("aa_ptr", h.aa_ptr)),
        bb_ptr(factored_view<std::int64_t, Mem>("bb_ptr", h.bb_ptr)),
        be_ptr(factored_view<std::int64_t, Mem>("be_ptr", h.be_ptr)),
        ab_ptr(factored_view<std::int64_t, Mem>("ab_ptr", h.ab_ptr)),
        mu_ptr(factored_view<std::int64_t, Mem>("mu_ptr", h.mu_ptr)),
        mu_batch(factored_view<std::int64_t, Mem>("mu_batch", h.mu_batch)),
        a_lo(factored_view<std::int32_t, Mem>("a_lo", h.a_lo)),
        a_hi(factored_view<std::int32_t, Mem>("a_hi", h.a_hi)),
        q_position(factored_view<std::int32_t, Mem>("q_position", h.q_position)),
        q_block_end(factored_view<std::int32_t, Mem>("q_block_end", h.q_block_end)),
        aa_col(factored_view<std::int32_t, Mem>("aa_col", h.aa_col)),
        bb_count(factored_view<std::int32_t, Mem>("bb_count", h.bb_count)),
        bb_col(factored_view<std::int32_t, Mem>("bb_col", h.bb_col)),
        be_count(factored_view<std::int32_t, Mem>("be_count", h.be_count)),
        ab_ja(factored_view<std::int32_t, Mem>("ab_ja", h.ab_ja)),
        ab_pair(factored_view<std::int32_t, Mem>("ab_pair", h.ab_pair)),
        ab_lo(factored_view<std::int32_t, Mem>("ab_lo", h.ab_lo)),
        ab_len(factored_view<std::int32_t, Mem>("ab_len", h.ab_len)),
        cls_ptr(factored_view<std::int32_t, Mem>("cls_ptr", h.cls_ptr)),
        cls_pair(factored_view<std::int32_t, Mem>("cls_pair", h.cls_pair)),
        pair_slot(factored_view<std::int32_t, Mem>("pair_slot", h.pair_slot)),
        table(factored_view<std::int32_t, Mem>("table", h.table)),
        mu_ksteps(factored_view<std::int32_t, Mem>("mu_ksteps", h.mu_ksteps)),
        mu_pair(factored_view<std::int32_t, Mem>("mu_pair", h.mu_pair)),
        mu_pairs(factored_view<std::int32_t, Mem>("mu_pairs", h.mu_pairs)),
        mu_lo(factored_view<std::int32_t, Mem>("mu_lo", h.mu_lo)),
        mu_len(factored_view<std::int32_t, Mem>("mu_len", h.mu_len)),
        q_rank(factored_view<std::uint8_t, Mem>("q_rank", h.q_rank)),
        ab_class(factored_view<std::uint8_t, Mem>("ab_class", h.ab_class)),
        ab_walked(factored_view<std::uint8_t, Mem>("ab_walked", h.ab_walked)),
        aa_val(factored_view<double, Mem>("aa_val", h.aa_val)),
        bb_val(factored_view<double, Mem>("bb_val", h.bb_val)),
        ab_sign(factored_view<double, Mem>("ab_sign", h.ab_sign)),
        eri(factored_view<double, Mem>("eri", h.eri)),
        be_data(factored_view<std::uint32_t, Mem>("be_data", h.be_data)) {}

  /// Whether kernel position q pairs with alpha string ja in the space.
  KOKKOS_INLINE_FUNCTION bool pairs(std::int32_t ja, int q) const {
    return static_cast<unsigned>(q - a_lo(ja)) < static_cast<unsigned>(a_hi(ja) - a_lo(ja));
  }
  /// Index in the space of (alpha string ja, beta string at kernel position q); q must pair with ja.
  KOKKOS_INLINE_FUNCTION std::int64_t index(std::int32_t ja, int q) const {
    return a_rowbase(static_cast<std::int64_t>(ja) * nkb + q_rank(q)) + q_position(q);
  }
  /// Position of entry k of q in a list sliced by 32 starting at `first` (ptr of q's slice).
  KOKKOS_INLINE_FUNCTION static std::int64_t sliced(std::int64_t first, int q, int k) {
    return first + 32 * static_cast<std::int64_t>(k) + (q & 31);
  }
  /// The strings of batch b (R of them, padding -1) and their ranges of q (empty for padding).
  template <int R>
  KOKKOS_INLINE_FUNCTION void batch_strings(std::int64_t b, std::int32_t (&ja)[R], int (&lo)[R], int (&len)[R]) const {
    CISPMV_FACTORED_UNROLL
    for (int r = 0; r < R; ++r) {
      ja[r] = ab_ja(b * R + r);
      lo[r] = ja[r] < 0 ? 0 : a_lo(ja[r]);
      len[r] = ja[r] < 0 ? 0 : a_hi(ja[r]) - lo[r];
    }
  }
  /// (pq|rs) for the alpha pair `pair` of alpha string ia: the diagonal sentinel (pair num_pairs) the string's sum of
  /// its occupied (pp|rs), a row of its own (one load where a loop over the occupied orbitals held up the batch's
  /// staging)
  KOKKOS_INLINE_FUNCTION double weight(std::int32_t ia, int pair, int rs) const {
    const std::int64_t row = pair < num_pairs ? pair : static_cast<std::int64_t>(num_pairs) + ia;
    return eri(row * num_pairs + rs);
  }
};

/// FactoredOptions::singlet's tables in the memory space Mem (FactoredHost::a_self, q_alpha), apart from FactoredData:
/// the kernels of other products keep the arguments they had (on an H200, Olsen's A1 product took 2 % longer with
/// these views and a flag inside FactoredData: 3.301 s against 3.231).
template <class Mem>
struct FactoredSinglet {
  Kokkos::View<std::int32_t*, Mem> a_self, q_alpha;
  FactoredSinglet() = default;
  explicit FactoredSinglet(const FactoredHost& h)
      : a_self(factored_view<std::int32_t, Mem>("a_self", h.a_self)),
        q_alpha(factored_view<std::int32_t, Mem>("q_alpha", h.q_alpha)) {}
  /// The index of (ja, q)'s transpose: q's string as the alpha string, ja's as the beta string.
  KOKKOS_INLINE_FUNCTION std::int64_t transposed(const FactoredData<Mem>& d, std::int32_t ja, int q) const {
    return d.index(q_alpha(q), a_self(ja));
  }
};

}  // namespace cispmv::impl
