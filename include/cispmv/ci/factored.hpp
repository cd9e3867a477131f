#pragma once
/// \file ci/factored.hpp
/// The CI Hamiltonian of a determinant space applied in factored form, never assembled.
///
/// A determinant is a pair of alpha and beta occupation strings, and the spin-free Hamiltonian (without
/// its core energy) splits into
///   H = H_alpha (x) 1 + 1 (x) H_beta + sum_{pq,rs} (pq|rs) E^alpha_pq (x) E^beta_rs,
/// where H_alpha (H_beta) is the Hamiltonian of the alpha (beta) electrons alone: a sparse matrix over
/// strings, thousands of rows where H has millions, and the last term couples the two spins through
/// single replacements in each string (E_pp included: the Coulomb terms between the spins) weighted by
/// a two-electron integral. y = H x then costs three passes over strings, not over the nonzeros of H:
///   y(a, b) += sum_a' H_alpha(a, a') x(a', b)                                 (rows of x, coalesced)
///   y(a, b) += sum_b' H_beta(b, b') x(a, b')                                  (x's row a in fast memory)
///   y(a, b) += sum_{a' = E_pq a} s_pq sum_{b' = E_rs b} s_rs (pq|rs) x(a', b') (rows a' in fast memory)
/// The matrix's values are never stored: a product reads the vectors, the string lists (kilobytes to
/// megabytes) and the integrals, so its memory is O(strings x replacements) instead of O(nonzeros), and
/// on a GPU its gathers come from team scratch (shared memory) instead of the L1 and L2 that bound every
/// sparse format's product. With ORBSYM and integrals that obey it, (pq|rs) is used only where the
/// irreps of pq and rs agree (the others are zero), which skips about three quarters of the pairs in C2v.
///
/// Any space of cispmv::ci::DeterminantSpace: full CI, truncated CI (the pairs a truncation leaves out
/// read as zero) and a space of one irrep; the result is the product with the Hamiltonian that
/// build_hamiltonian assembles (the same sums in another order; that one also drops elements below
/// its tolerance, 1e-14). In double precision on every backend: a team per alpha string and chunk of
/// beta strings on GPUs, a thread per alpha string on CPUs.

#include <Kokkos_Core.hpp>

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/impl/backend.hpp"
#include "cispmv/impl/convert_helpers.hpp"
#include "cispmv/impl/gathered_gemm.hpp"
#include "cispmv/impl/kernels/host_simd.hpp"
#include "cispmv/impl/warp_mma.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

// loops over a thread's slots and a batch's rows: unrolled on the device, so that their arrays stay in
// registers
#if defined(__CUDA_ARCH__)
#define CISPMV_FACTORED_UNROLL _Pragma("unroll")
#else
#define CISPMV_FACTORED_UNROLL
#endif

namespace cispmv::ci {

/// Options of the factored Hamiltonian.
struct FactoredOptions {
  /// Same-spin string matrix elements (H_alpha, H_beta) below this are not stored, as the assembled
  /// Hamiltonian drops its elements (HamiltonianOptions::drop_tolerance).
  double drop_tolerance = 1e-14;
  /// As HamiltonianOptions::symmetry_noise: when every integral that breaks ORBSYM is at most this
  /// large, symmetry-forbidden integrals are taken as zero and never visited; a negative value visits
  /// every integral.
  double symmetry_noise = 1e-12;
  /// The kernel: a team per alpha string that forms the alpha-beta sum at each source beta string,
  /// x in registers and the integrals broadcast, and scatters it into the string's row in team scratch
  /// (`scatter`, what GPUs run); a team per alpha string and chunk of its betas that gathers rows of x
  /// and integrals from team scratch (`teams`); or a thread per alpha string reading x where it lies
  /// (`rows`, the simplest). `automatic` is `scatter` on GPUs (its table walk at batch 16), `tiles` on CPUs with
  /// AVX-512, else `scatter`'s lists' walk at batch 8 (a team of one thread per alpha string, no atomics). The
  /// tests run every kernel on every backend.
  /// `mma`: the scatter kernel's alpha-beta sum as small matrix products on the tensor cores
  /// (FactoredMmaKernel: DMMA on CUDA GPUs of compute capability 8.0 or later, warp shuffles before them; on
  /// CPUs a warp's lanes emulated by one thread, for the tests; other GPU backends refuse it). Not faster than
  /// `scatter` on an H100 or H200 for the H2O/6-31G spaces (session 28), so never `automatic`.
  /// `tiles`: the mma kernel's tiles of the alpha-beta sum formed by the CPU's vector unit (FactoredTileKernel:
  /// AVX-512 where the CPU has it), their terms taken through each position's lists; teams of one thread.
  enum class Kernel { automatic, teams, rows, scatter, mma, tiles } kernel = Kernel::automatic;
  /// Team size of the team kernels (0: scatter 128; teams 128 on GPUs, 256 for more than ~524K
  /// determinants; 1 on CPUs; at most 256), beta strings per thread of `teams` (0: as many as keep ~1,024
  /// teams busy; at most 4) and teams per alpha string of `scatter` (0: on GPUs, where the alpha strings' beta
  /// ranges average 256 or more, 2 for 1,024 alpha strings or more, for 384 to 1,023 1 (2 where the teams form no
  /// same-spin terms: the `gemm` pass, or the alpha-beta sum alone), 4 for fewer; where they average less, 2 for fewer
  /// than 1,024 alpha strings whose teams form no same-spin terms; else 1; at
  /// most the string's batches), of `mma` (0: on GPUs 4 where there are fewer
  /// than 512 alpha strings and their ranges average 256 or more, else 1; its teams on GPUs whole warps, 32 to
  /// 128 threads, 0 for 128) and of `tiles` (0: 1; each takes every parts-th unit of the string; its teams
  /// one thread).
  int team_size = 0;
  int slots = 0;
  int parts = 0;
  /// `scatter` at a batch of 8: walk each source's own replacements of the class (its lists; the
  /// integrals a gather of the pair's row) rather than every pair of the class (the table; a broadcast).
  /// What `automatic` takes on CPUs without AVX-512.
  bool scatter_lists = false;
  /// Alpha replacements per batch: `teams` stages 2 or 4 rows of x at a time (0: 4; the all-electron
  /// H2O/6-31G's 4 rows, 44 KB, exceed Kokkos 3.4's 40 KB of level-0 scratch on CUDA and run from level 1),
  /// `scatter` holds 8 or 16 values of x per thread (0: 16 on GPUs, 8 on CPUs and for the lists' walk), `rows`
  /// takes any of 2, 4, 8, 16 (0: 4), `mma` 4 (a k-step of its products; 0: 4), `tiles` 8 (0: 8).
  int batch = 0;
  /// The terms a product forms: all of H; or, to measure a product's parts (spmv_bench times each), only the
  /// same-spin terms H_alpha (x) 1 + 1 (x) H_beta or only the alpha-beta sum (their sum is H x). The scatter, mma
  /// and tiles kernels; the others refuse a part.
  enum class Terms { all, same_spin, alpha_beta } terms = Terms::all;
  /// How the scatter, mma and tile kernels form the same-spin terms H_alpha (x) 1 and 1 (x) H_beta: in their teams,
  /// each position's entries of H_beta and each entry of H_alpha read for every determinant (`lists`), or as dense
  /// products, two launches after or beside the alpha-beta kernel (`gemm`; `launches`): for each block of beta strings,
  /// the dense block of
  /// H_alpha over the alpha strings that pair with it (by irrep where the integrals obey ORBSYM) times those rows
  /// of x, and for each set of alpha strings of one beta range, those rows of x times the dense blocks of H_beta
  /// (impl::GatheredGemmKernel: DMMA on CUDA GPUs of compute capability 8.0 or later). A dense block does more
  /// multiply-adds than its entries (zeros included) but reads each entry once per 64 x 64 tile instead of once
  /// per determinant. `automatic`: `gemm` on GPUs where its dense work is at most 16 times the lists' terms, its
  /// blocks take at most 256 MiB and, unless its launches run beside the alpha-beta kernel (`launches`), each launch
  /// has tiles enough for 3 teams an SM; else `lists`. `gemm` where the blocks would exceed that is refused.
  enum class SameSpinPass { automatic, lists, gemm } same_spin_pass = SameSpinPass::automatic;
  /// With the `gemm` pass: its launches run one after the other after the alpha-beta kernel (`serial`), or at once
  /// beside it (`concurrent`: on CUDA each launch on a stream of its own, every kernel adding its terms into y
  /// atomically once y is scaled by beta, the product ordered after the earlier work of the instance the operator was
  /// built with, and that instance's later work after it; on CPUs the same atomic adds, one launch after the other). A
  /// small launch then no longer leaves the GPU idle: the alpha-beta kernel's teams take a part of each SM and the
  /// dense products' tiles the rest. `automatic`: `concurrent` on CUDA, where the dense products are then also taken
  /// for launches too small to fill the GPU alone; else `serial`. (The side streams and their events are shared by the
  /// operator's copies: apply one operator from one host thread at a time.)
  enum class Launches { automatic, serial, concurrent } launches = Launches::automatic;
  /// Where the scatter kernel's table walk adds its terms on CUDA (level-0 scratch; teams of whole warps): into one
  /// copy of the alpha string's row for the team (`shared`: compare-and-swap adds), or into a copy for each warp
  /// (`per_warp`: plain adds, since in one step of the walk a warp's targets are distinct; the copies summed once the
  /// walk is done). `automatic`: `per_warp` where the copies keep a team's scratch within 32 KB (the frozen-core
  /// H2O/6-31G's 4 copies of 495 values; the all-electron one's 1,287 would take a team's share of an SM's shared
  /// memory from 6 teams an SM to 3). Elsewhere (teams of one thread on CPUs, level 1, the lists' walk) one row.
  /// Measured (s34-f, H100, two processes): the frozen core's alpha-beta sum alone 0.144-0.148 ms with copies against
  /// 0.161-0.167 with one row, the whole product 0.165-0.169 against 0.188-0.190 (s34-e, H200: 0.151 against 0.166).
  enum class RowCopies { automatic, shared, per_warp } row_copies = RowCopies::automatic;
  /// The order of the scatter, mma and tile kernels' teams (one per alpha string, or per part of its work): string by
  /// string (`strings`), or by their estimated work, the largest first (`largest_first`: the work of a team's batches,
  /// pairs times positions weighed by the replacements the scatter kernel walks, and its share of the string's
  /// positions; ties in string order). A GPU hands out a
  /// launch's teams in order as its slots free, so the small teams fill the last partial wave instead of the large
  /// ones running alone. `automatic`: `largest_first` on GPUs, `strings` elsewhere (Kokkos' OpenMP team launch is
  /// scheduled statically: sorted teams would give the first threads the largest). Measured (s35, H100, sixteen
  /// processes on three machines): the frozen-core H2O/6-31G product 0.135-0.154 ms largest first against 0.163-0.173
  /// string by string, the all-electron one 1.02-1.03 against 1.10 (H200: 0.132 against 0.155, 1.04 against 1.10).
  enum class TaskOrder { automatic, strings, largest_first } task_order = TaskOrder::automatic;
};

/// The diagonal of the space's Hamiltonian (without the core energy), by the Slater-Condon rules on the
/// host, in the space's order: the Davidson's preconditioner when the matrix is never assembled.
std::vector<double> hamiltonian_diagonal(const FciDump& integrals, const DeterminantSpace& space);

}  // namespace cispmv::ci

namespace cispmv::impl {

/// Alpha replacements handled together by a GPU team at most: rows of x staged in team scratch at once,
/// so that each beta entry read serves this many of them (FactoredOptions::batch: 4, or 2).
inline constexpr int factored_batch = 4;
/// Beta strings a GPU thread accumulates at most (registers).
inline constexpr int factored_max_slots = 4;
/// The mma kernel's units: at most this many k-steps (batches of 4 alpha replacements) and m-tiles (8
/// pairs each), so that a unit's integrals (8 x 4 doubles a fragment) take at most 16 KB of team scratch.
inline constexpr int factored_mma_ksteps = 8;
inline constexpr int factored_mma_mtiles = 8;
/// The tile kernel's units: at most this many batches of 8 alpha replacements, and 64 pairs.
inline constexpr int factored_tile_batches = 4;
inline constexpr int factored_tile_pairs = 64;
/// Bits of a packed beta entry: kernel position of the target string (high), sign, pair index (low).
inline constexpr int factored_pair_bits = 12;
inline constexpr int factored_position_shift = factored_pair_bits + 1;

/// The factored Hamiltonian's arrays on the host, as src/ci/factored.cpp builds them. Beta strings are
/// numbered in "kernel order" q: by irrep (in a space of one irrep; otherwise all as one), then rank,
/// then id, so that the beta strings that pair with one alpha string in the space are one range
/// [lo, hi) of q. Lists over q are sliced in 32s: entry k of position q is at
/// ptr[slice(q)] + 32 k + q % 32, so that 32 threads on consecutive positions read consecutive words.
struct FactoredHost {
  int num_orbitals = 0;
  int num_pairs = 0;           ///< num_orbitals (num_orbitals + 1) / 2
  std::int64_t rows = 0;       ///< determinants in the space
  int na = 0, nb = 0;          ///< alpha / beta strings
  int nkb = 0;                 ///< beta ranks + 1
  int max_range = 0;           ///< largest hi - lo over alpha strings
  int batch = factored_batch;  ///< alpha replacements per batch (2, 4, 8 or 16)
  int num_classes = 1;         ///< irreps of orbital pairs told apart (8 with symmetry, else 1)
  bool symmetry = false;       ///< pairs of different irreps skipped
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
  // entry (m, q) = target << 1 | negative, or -1, at FactoredData::table_at(m, q): by rows (the scatter kernel's
  // walk: a pair's entries of consecutive positions, rows padded with -1 to a multiple of 8 positions) or by tiles
  // (the mma kernel's: a tile of 8 positions holds every pair's 8 entries, so that a warp's 8 pairs x 8 positions
  // are 256 consecutive bytes where rows put them on 8 lines)
  std::vector<std::int32_t> cls_ptr, cls_pair, table;
  int table_stride = 0;
  bool table_tiles = false;
  int max_class_pairs = 0;
  std::vector<std::int32_t> pair_slot;  ///< per pair: its position in its class's pairs (cls_pair)
  // the units of the mma and tile kernels (factored_units): per alpha string (mu_ptr), a run of at most
  // max_batches of its batches of one class (first batch mu_batch, mu_ksteps of them) against at most
  // max_pairs pairs of that class (mu_pair: the first, as an offset in the class; mu_pairs of them), over the
  // union of the strings' ranges of q (mu_lo, mu_len)
  std::vector<std::int64_t> mu_ptr, mu_batch;
  std::vector<std::int32_t> mu_ksteps, mu_pair, mu_pairs, mu_lo, mu_len;
  int max_unit_pairs = 0, max_unit_batches = 0;
  std::size_t alpha_beta_terms = 0;  ///< beta entries visited by one product (the cost model's unit)
  // the same-spin terms as dense products (FactoredOptions::SameSpinPass::gemm), where factor_hamiltonian was asked
  // for them: launch 0 H_alpha (x) 1, launch 1 1 (x) H_beta; gemm_why says why they were not built
  GatheredGemmHost gemm;
  bool gemm_built = false;
  std::string gemm_why;
  double same_spin_terms = 0.0;  ///< the same-spin terms' multiply-adds in one product (the lists' entries used;
                                 ///< counted by same_spin_products only, in full where gemm_built)
};

/// Where a table of either layout (FactoredHost::table_tiles, table_stride) holds pair m's entry for position q.
KOKKOS_INLINE_FUNCTION std::int64_t factored_table_at(bool tiles, int stride, std::int64_t m, int q) {
  return tiles ? static_cast<std::int64_t>(q >> 3) * stride + 8 * m + (q & 7) : m * stride + q;
}
/// Which FactoredHost::table factor_hamiltonian builds (pairs x beta strings x 4 bytes): none, by rows (the scatter
/// kernel's walk over every pair of a class) or by tiles of 8 positions (the mma kernel's).
enum class FactoredTable { none, rows, tiles };
/// The most bytes the same-spin pass's dense blocks may take (FactoredOptions::SameSpinPass).
inline constexpr double factored_gemm_max_bytes = 256.0 * 1024 * 1024;
/// The string lists of a space; with `same_spin_gemm` also the same-spin terms' dense products (FactoredHost::gemm),
/// unless their blocks would exceed factored_gemm_max_bytes (FactoredHost::gemm_why).
FactoredHost factor_hamiltonian(const ci::FciDump& integrals, const ci::DeterminantSpace& space,
                                const ci::FactoredOptions& options, int batch = factored_batch,
                                FactoredTable table = FactoredTable::none, bool same_spin_gemm = false);
/// The same-spin terms as dense products (FactoredHost::gemm) from the lists factor_hamiltonian built: blocks by the
/// class of each alpha string (a_class, by id) and beta string (q_class, by kernel position); all 0 where the
/// integrals do not obey ORBSYM. Sets gemm_why and leaves gemm_built false where the blocks would take more than
/// factored_gemm_max_bytes.
void same_spin_products(FactoredHost& h, const std::vector<std::uint8_t>& a_class,
                        const std::vector<std::uint8_t>& q_class);
/// The units of the mma and tile kernels (FactoredHost::mu_*): each alpha string's batches in runs of one
/// class of at most `max_batches`, against at most `max_pairs` pairs of the class.
void factored_units(FactoredHost& h, int max_batches, int max_pairs);

template <class T, class Mem>
Kokkos::View<T*, Mem> factored_view(const char* label, const std::vector<T>& v) {
  return view_of<T, Mem>(std::string("cispmv::factored::") + label, v);
}

/// The arrays every kernel reads, in the memory space Mem.
template <class Mem>
struct FactoredData {
  int num_pairs = 0, nb = 0, nkb = 0, slices = 0, max_range = 0, max_batch_range = 0, batch = factored_batch,
      max_class_pairs = 0, table_stride = 0, max_unit_pairs = 0, max_unit_batches = 0;
  bool table_tiles = false;
  bool same_spin = true, alpha_beta = true;  ///< the terms products form (FactoredOptions::terms)
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
        table_tiles(h.table_tiles),
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
  /// Where the table holds pair m's (class order) entry for kernel position q.
  KOKKOS_INLINE_FUNCTION std::int64_t table_at(std::int64_t m, int q) const {
    return factored_table_at(table_tiles, table_stride, m, q);
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
  /// staging: s36-g)
  KOKKOS_INLINE_FUNCTION double weight(std::int32_t ia, int pair, int rs) const {
    const std::int64_t row = pair < num_pairs ? pair : static_cast<std::int64_t>(num_pairs) + ia;
    return eri(row * num_pairs + rs);
  }
};

/// CPUs: one thread per alpha string, its beta range in order, x read where it lies (the caches hold
/// a row of x).
template <class Mem, class X, class Y>
struct FactoredRowKernel {
  FactoredData<Mem> d;
  X x;
  Y y;
  double alpha, beta;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int32_t ia) const {
    const int lo = d.a_lo(ia), hi = d.a_hi(ia);
    for (int q = lo; q < hi; ++q) {
      double acc = 0.0;
      for (std::int64_t e = d.aa_ptr(ia); e < d.aa_ptr(ia + 1); ++e) {
        const std::int32_t ja = d.aa_col(e);
        if (d.pairs(ja, q)) acc += d.aa_val(e) * x(d.index(ja, q));
      }
      const std::int64_t bb = d.bb_ptr(q >> 5);
      for (int k = 0; k < d.bb_count(q); ++k) {
        const std::int32_t t = d.bb_col(FactoredData<Mem>::sliced(bb, q, k));
        if (d.pairs(ia, t)) acc += d.bb_val(FactoredData<Mem>::sliced(bb, q, k)) * x(d.index(ia, t));
      }
      for (std::int64_t b = d.ab_ptr(ia); b < d.ab_ptr(ia + 1); ++b) {
        const int cls = d.ab_class(b);
        const std::int64_t be = d.be_ptr(static_cast<std::int64_t>(cls) * d.slices + (q >> 5));
        const int count = d.be_count(static_cast<std::int64_t>(cls) * d.nb + q);
        for (int r = 0; r < d.batch; ++r) {
          const std::int32_t ja = d.ab_ja(b * d.batch + r);
          if (ja < 0) continue;
          const int pair = d.ab_pair(b * d.batch + r);
          const double sign = d.ab_sign(b * d.batch + r);
          for (int k = 0; k < count; ++k) {
            const std::uint32_t e = d.be_data(FactoredData<Mem>::sliced(be, q, k));
            const int t = static_cast<int>(e >> factored_position_shift);
            if (!d.pairs(ja, t)) continue;
            const double v =
                sign * d.weight(ia, pair, static_cast<int>(e & ((1u << factored_pair_bits) - 1))) * x(d.index(ja, t));
            acc += (e >> factored_pair_bits) & 1u ? -v : v;
          }
        }
      }
      const std::int64_t out = d.index(ia, q);
      y(out) = beta == 0.0 ? alpha * acc : beta * y(out) + alpha * acc;
    }
  }
};

/// GPUs: a team per (alpha string, chunk of its beta range), each thread `slots` beta strings of the
/// chunk, team size apart. x's row of the alpha string (for H_beta), then a batch's R rows
/// of x and integral rows are staged in team scratch, interleaved (the batch's values for one beta
/// string, or one pair, side by side, zero where a row's string does not pair with that beta string), so
/// that a beta entry costs one range check and two runs of R scratch reads (R: the lists' batch). H_alpha's terms
/// read rows of x directly, coalesced. Each thread loads its next beta entry before using the current.
template <class Exec, class X, class Y, int R = factored_batch>
struct FactoredTeamKernel {
  using Mem = typename Exec::memory_space;
  using Policy = Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<256, 4>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  FactoredData<Mem> d;
  X x;
  Y y;
  double alpha, beta;
  Kokkos::View<std::int32_t*, Mem> task_ia, task_first, task_end;
  int slots = 1;
  int level = 0;  // scratch level

  static std::size_t row_capacity(const FactoredData<Mem>& d) {
    return static_cast<std::size_t>(std::max(d.max_range, d.max_batch_range));
  }
  static std::size_t scratch_bytes(const FactoredData<Mem>& d) {
    return Scratch::shmem_size(static_cast<std::size_t>(R) * row_capacity(d)) +
           Scratch::shmem_size(static_cast<std::size_t>(R) * static_cast<std::size_t>(d.num_pairs));
  }
  std::size_t team_scratch_bytes(const FactoredData<Mem>& d) const { return scratch_bytes(d); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const int task = m.league_rank();
    const std::int32_t ia = task_ia(task);
    const int first = task_first(task), end = task_end(task);
    const int T = m.team_size(), t = m.team_rank();
    const std::size_t capacity =
        static_cast<std::size_t>(d.max_range > d.max_batch_range ? d.max_range : d.max_batch_range);
    const Scratch xs(m.team_scratch(level), static_cast<std::size_t>(R) * capacity);
    const Scratch gs(m.team_scratch(level), static_cast<std::size_t>(R) * d.num_pairs);
    double acc[factored_max_slots];
    CISPMV_FACTORED_UNROLL
    for (int s = 0; s < factored_max_slots; ++s) acc[s] = 0.0;
    const int lo_a = d.a_lo(ia), len_a = d.a_hi(ia) - lo_a;

    // H_alpha (x) 1: rows ja of x, read where they lie (consecutive threads, consecutive betas)
    for (std::int64_t e = d.aa_ptr(ia); e < d.aa_ptr(ia + 1); ++e) {
      const std::int32_t ja = d.aa_col(e);
      const double v = d.aa_val(e);
      const int lo = d.a_lo(ja), len = d.a_hi(ja) - lo;
      CISPMV_FACTORED_UNROLL
      for (int s = 0; s < factored_max_slots; ++s) {
        const int q = first + t + s * T;
        if (s < slots && q < end && static_cast<unsigned>(q - lo) < static_cast<unsigned>(len)) {
          acc[s] += v * x(d.index(ja, q));
        }
      }
    }

    // 1 (x) H_beta: x's row ia in scratch
    for (int k = t; k < len_a; k += T) xs(k) = x(d.index(ia, lo_a + k));
    m.team_barrier();
    CISPMV_FACTORED_UNROLL
    for (int s = 0; s < factored_max_slots; ++s) {
      const int q = first + t + s * T;
      if (s < slots && q < end) {
        const std::int64_t bb = d.bb_ptr(q >> 5);
        const int count = d.bb_count(q);
        double sum = 0.0;
        for (int k = 0; k < count; ++k) {
          const std::int64_t at = FactoredData<Mem>::sliced(bb, q, k);
          const int idx = d.bb_col(at) - lo_a;
          if (static_cast<unsigned>(idx) < static_cast<unsigned>(len_a)) sum += d.bb_val(at) * xs(idx);
        }
        acc[s] += sum;
      }
    }
    m.team_barrier();

    // alpha-beta: a batch of R replacement strings of ia (one class of pairs) at a time
    for (std::int64_t b = d.ab_ptr(ia); b < d.ab_ptr(ia + 1); ++b) {
      const int cls = d.ab_class(b);
      const int lo_b = d.ab_lo(b), len_b = d.ab_len(b);
      std::int32_t ja[R];
      int lo[R], len[R];
      d.batch_strings(b, ja, lo, len);
      for (int k = t; k < len_b; k += T) {
        const int q = lo_b + k;
        const int kb = d.q_rank(q), pos = d.q_position(q);
        CISPMV_FACTORED_UNROLL
        for (int r = 0; r < R; ++r) {
          const bool in = static_cast<unsigned>(q - lo[r]) < static_cast<unsigned>(len[r]);
          xs(static_cast<std::size_t>(k) * R + r) =
              in ? x(d.a_rowbase(static_cast<std::int64_t>(ja[r]) * d.nkb + kb) + pos) : 0.0;
        }
      }
      CISPMV_FACTORED_UNROLL
      for (int r = 0; r < R; ++r) {
        const int pair = d.ab_pair(b * R + r);
        const double sign = d.ab_sign(b * R + r);
        for (int rs = t; rs < d.num_pairs; rs += T) {
          gs(static_cast<std::size_t>(rs) * R + r) = sign == 0.0 ? 0.0 : sign * d.weight(ia, pair, rs);
        }
      }
      m.team_barrier();
      const double* const xp = xs.data();
      const double* const gp = gs.data();
      CISPMV_FACTORED_UNROLL
      for (int s = 0; s < factored_max_slots; ++s) {
        const int q = first + t + s * T;
        if (s < slots && q < end) {
          const std::int64_t be = d.be_ptr(static_cast<std::int64_t>(cls) * d.slices + (q >> 5));
          const int count = d.be_count(static_cast<std::int64_t>(cls) * d.nb + q);
          double sum = 0.0;
          std::uint32_t next = count > 0 ? d.be_data(FactoredData<Mem>::sliced(be, q, 0)) : 0u;
          for (int k = 0; k < count; ++k) {
            const std::uint32_t e = next;
            if (k + 1 < count) next = d.be_data(FactoredData<Mem>::sliced(be, q, k + 1));
            const int idx = static_cast<int>(e >> factored_position_shift) - lo_b;
            if (static_cast<unsigned>(idx) < static_cast<unsigned>(len_b)) {
              const double* const xv = xp + static_cast<std::ptrdiff_t>(idx) * R;
              const double* const gv = gp + static_cast<std::ptrdiff_t>(e & ((1u << factored_pair_bits) - 1)) * R;
              double v = 0.0;
              CISPMV_FACTORED_UNROLL
              for (int r = 0; r < R; ++r) v += gv[r] * xv[r];
              sum += (e >> factored_pair_bits) & 1u ? -v : v;
            }
          }
          acc[s] += sum;
        }
      }
      m.team_barrier();
    }

    CISPMV_FACTORED_UNROLL
    for (int s = 0; s < factored_max_slots; ++s) {
      const int q = first + t + s * T;
      if (s < slots && q < end) {
        const std::int64_t out = d.index(ia, q);
        y(out) = beta == 0.0 ? alpha * acc[s] : beta * y(out) + alpha * acc[s];
      }
    }
  }
};

/// y = beta y, 0 where beta is 0 (NaN in y overwritten).
template <class Y>
struct FactoredScale {
  Y y;
  double beta;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { y(i) = beta == 0.0 ? 0.0 : beta * y(i); }
};

/// The end of a team's product for alpha string ia, once its alpha-beta terms are in ys (its row of the
/// result in team scratch, positions lo_a.. of ia's beta range) and a barrier has passed: 1 (x) H_beta
/// (x's row ia staged in `row`; each thread's list entries read eight at a time) and H_alpha (x) 1 (rows
/// ja of x, coalesced: in teams two positions and four entries at a time, in a team of one thread entry by
/// entry along the rows) at this part's positions, then the
/// row added into y (atomically where `accumulate`: parts > 1, y scaled by beta beforehand) or written as
/// y = beta y + alpha row.
// (in CUDA builds a call of its own, so that on the GPU its registers are allocated apart from the alpha-beta walk it
// follows: s30-q2, H200, with the walk's loads and adds in shared memory inlined before it, the same-spin terms alone
// took 0.890 ms of the all-electron product where they took 0.726; s30-q3b with the call 0.812)
#if defined(__CUDACC__)
#define CISPMV_FACTORED_APART __noinline__
#else
#define CISPMV_FACTORED_APART
#endif
template <class Member, class Mem, class X, class Y, class Scratch>
KOKKOS_FUNCTION CISPMV_FACTORED_APART void factored_same_spin_and_write(const Member& m, const FactoredData<Mem>& d,
                                                                        const X& x, const Y& y, const Scratch& ys,
                                                                        const Scratch& row, const std::int32_t ia,
                                                                        const int part, const int parts,
                                                                        const double alpha, const double beta,
                                                                        const bool accumulate) {
  const int T = m.team_size(), t = m.team_rank();
  const int lo_a = d.a_lo(ia), len_a = d.a_hi(ia) - lo_a;
  if (d.same_spin) {
    for (int k = t; k < len_a; k += T) row(k) = x(d.index(ia, lo_a + k));
  }
  m.team_barrier();
  const int own_lo = static_cast<int>(static_cast<std::int64_t>(len_a) * part / parts);
  const int own_hi = d.same_spin ? static_cast<int>(static_cast<std::int64_t>(len_a) * (part + 1) / parts) : own_lo;
  for (int k = own_lo + t; k < own_hi; k += T) {
    const int q = lo_a + k;
    double acc = 0.0;
    const std::int64_t bb = d.bb_ptr(q >> 5);
    const int count = d.bb_count(q);
    int i = 0;
    for (; i + 8 <= count; i += 8) {  // eight entries' loads in flight, then their gathers
      int idx[8];
      double v[8];
      CISPMV_FACTORED_UNROLL
      for (int u = 0; u < 8; ++u) {
        const std::int64_t at = FactoredData<Mem>::sliced(bb, q, i + u);
        idx[u] = d.bb_col(at) - lo_a;
        v[u] = d.bb_val(at);
      }
      CISPMV_FACTORED_UNROLL
      for (int u = 0; u < 8; ++u) {
        if (static_cast<unsigned>(idx[u]) < static_cast<unsigned>(len_a)) acc += v[u] * row(idx[u]);
      }
    }
    for (; i < count; ++i) {
      const std::int64_t at = FactoredData<Mem>::sliced(bb, q, i);
      const int idx = d.bb_col(at) - lo_a;
      if (static_cast<unsigned>(idx) < static_cast<unsigned>(len_a)) acc += d.bb_val(at) * row(idx);
    }
    ys(k) += acc;
  }
  if (T > 1) {
    // H_alpha (x) 1 in teams (GPUs): each thread takes two of its positions at a time (the same positions as
    // above: no other thread adds there) and the string's entries four at a time, so that eight gathers of
    // x are in flight where a walk of one position's entries waited on each entry's chain of loads (s29-p2,
    // H200: the same-spin terms alone 0.89 ms of the all-electron product's 1.95, 69 % of their stalls on
    // L1TEX loads)
    const std::int64_t e0 = d.aa_ptr(ia), e1 = d.aa_ptr(ia + 1);
    for (int k0 = own_lo + t; k0 < own_hi; k0 += 2 * T) {
      int kk[2], kb[2], pos[2];
      double acc[2] = {0.0, 0.0};
      CISPMV_FACTORED_UNROLL
      for (int u = 0; u < 2; ++u) {
        kk[u] = k0 + u * T;
        const bool mine = kk[u] < own_hi;
        kb[u] = mine ? d.q_rank(lo_a + kk[u]) : 0;
        pos[u] = mine ? d.q_position(lo_a + kk[u]) : 0;
        if (!mine) kk[u] = -1;
      }
      std::int64_t e = e0;
      for (; e + 4 <= e1; e += 4) {
        std::int32_t ja[4];
        double v[4], xv[4][2];
        CISPMV_FACTORED_UNROLL
        for (int i = 0; i < 4; ++i) {
          ja[i] = d.aa_col(e + i);
          v[i] = d.aa_val(e + i);
        }
        CISPMV_FACTORED_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int lo = d.a_lo(ja[i]), len = d.a_hi(ja[i]) - lo;
          const std::int64_t rows = static_cast<std::int64_t>(ja[i]) * d.nkb;
          CISPMV_FACTORED_UNROLL
          for (int u = 0; u < 2; ++u) {
            const bool in = kk[u] >= 0 && static_cast<unsigned>(lo_a + kk[u] - lo) < static_cast<unsigned>(len);
            xv[i][u] = in ? x(d.a_rowbase(rows + kb[u]) + pos[u]) : 0.0;
          }
        }
        CISPMV_FACTORED_UNROLL
        for (int i = 0; i < 4; ++i) {
          acc[0] += v[i] * xv[i][0];
          acc[1] += v[i] * xv[i][1];
        }
      }
      for (; e < e1; ++e) {
        const std::int32_t ja = d.aa_col(e);
        const int lo = d.a_lo(ja), len = d.a_hi(ja) - lo;
        CISPMV_FACTORED_UNROLL
        for (int u = 0; u < 2; ++u) {
          if (kk[u] >= 0 && static_cast<unsigned>(lo_a + kk[u] - lo) < static_cast<unsigned>(len)) {
            acc[u] += d.aa_val(e) * x(d.a_rowbase(static_cast<std::int64_t>(ja) * d.nkb + kb[u]) + pos[u]);
          }
        }
      }
      CISPMV_FACTORED_UNROLL
      for (int u = 0; u < 2; ++u) {
        if (kk[u] >= 0) ys(kk[u]) += acc[u];
      }
    }
  }
  if (T == 1 && d.same_spin) {
    // a team of one thread (CPUs): H_alpha's entries one at a time, each along the positions its string
    // pairs with (rows of x read in order, where a walk of the entries at each position jumps between rows)
    for (std::int64_t e = d.aa_ptr(ia); e < d.aa_ptr(ia + 1); ++e) {
      const std::int32_t ja = d.aa_col(e);
      const double v = d.aa_val(e);
      const std::int64_t rows = static_cast<std::int64_t>(ja) * d.nkb;
      const int lo = d.a_lo(ja) > lo_a + own_lo ? d.a_lo(ja) : lo_a + own_lo;
      const int hi = d.a_hi(ja) < lo_a + own_hi ? d.a_hi(ja) : lo_a + own_hi;
      for (int q = lo; q < hi;) {  // a block of q's positions lies in a run of x's row
        const int end = d.q_block_end(q) < hi ? d.q_block_end(q) : hi;
        const std::int64_t at = d.a_rowbase(rows + d.q_rank(q)) + d.q_position(q) - q;
        for (int j = q; j < end; ++j) ys(j - lo_a) += v * x(at + j);
        q = end;
      }
    }
  }
  m.team_barrier();
  for (int k = t; k < len_a; k += T) {
    const std::int64_t out = d.index(ia, lo_a + k);
    if (accumulate) {
      Kokkos::atomic_add(&y(out), alpha * ys(k));
    } else {
      y(out) = beta == 0.0 ? alpha * ys(k) : beta * y(out) + alpha * ys(k);
    }
  }
}
#undef CISPMV_FACTORED_APART

/// GPUs: a team per alpha string ia (or per part of its work, `parts` teams an alpha string), its
/// row of the result accumulated in team scratch. The alpha-beta sum is formed at the source: for a batch
/// of B alpha replacements (ja_k, pq_k, s_k) of one class, a thread takes a source position q, holds
/// x(ja_k, q) for the B of them in registers (rows of x, coalesced), and walks the class's pairs rs in
/// step with the other threads: w = sum_k s_k (pq_k|rs) x(ja_k, q), the integrals a broadcast from
/// scratch, is added to the target E_rs q of the table (an atomic add in scratch: on CUDA's level 0 a step's four old
/// values read at once, then one compare-and-swap each, impl::scratch_add_shared; in one step the targets of a warp
/// are distinct). No gathers of x or of integrals: B fused multiply-adds per pair
/// and position at most (a batch is walked up to its last live replacement: FactoredHost::ab_walked), against two
/// scratch gathers per term for FactoredTeamKernel. With Lists, a thread walks
/// its source's own replacements of the class instead (half the pairs, no table; the integral rows a
/// gather). Then each thread adds
/// H_alpha's and H_beta's terms of its own positions (x's row ia staged in scratch) and writes them.
/// With parts > 1, a team takes every parts-th batch and a parts-th of the positions and adds its row
/// into y atomically (y scaled by beta beforehand). With ys_rows > 1
/// (CUDA, level 0: FactoredOptions::RowCopies::per_warp) each warp adds into its own copy of the row, without
/// atomics, and the copies are summed after the walk. Sums in an order that varies from run to run.
template <class Exec, class X, class Y, int B, bool Lists>
struct FactoredScatterKernel {
  using Mem = typename Exec::memory_space;
  using Policy =
      Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<256, 3>>;  // 80 registers, no spills at B = 8 (4: 64 and spills)
  using Member = typename Policy::member_type;
  template <class T>
  using ScratchOf = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Scratch = ScratchOf<double>;
  /// Two integrals of a row, loaded at once (rows of B + 2 values: 16-byte aligned, and rows that start
  /// on different banks where lanes gather them).
  struct alignas(16) Two {
    double a, b;
  };
  static constexpr int row_twos = (B + 2) / 2;
  FactoredData<Mem> d;
  X x;
  Y y;
  double alpha, beta;
  Kokkos::View<std::int32_t*, Mem> task_ia, task_part, task_parts;
  bool accumulate = false;  // add into y (parts > 1) rather than write it
  int level = 0;            // scratch level
  int ys_rows = 1;          // copies of the string's row: 1, or one a warp (CUDA, level 0, teams of whole warps)

  // rows of integrals: one per pair of a class (the table's walk), or per pair (the lists' walk)
  KOKKOS_INLINE_FUNCTION static std::size_t integral_rows(const FactoredData<Mem>& d) {
    return static_cast<std::size_t>(Lists ? d.num_pairs : d.max_class_pairs);
  }
  static std::size_t scratch_bytes(const FactoredData<Mem>& d, int rows = 1) {
    return Scratch::shmem_size(static_cast<std::size_t>(rows) * static_cast<std::size_t>(d.max_range)) +
           Scratch::shmem_size(static_cast<std::size_t>(d.max_range)) +
           ScratchOf<Two>::shmem_size(integral_rows(d) * row_twos) + ScratchOf<std::int64_t>::shmem_size(3 * B);
  }
  std::size_t team_scratch_bytes(const FactoredData<Mem>& d) const { return scratch_bytes(d, ys_rows); }

  // two chains of fused multiply-adds (a multiply, a fused one and an add for each two integrals before s30) over the
  // batch's first G replacements (the others padding: walk_batch)
  template <int G>
  KOKKOS_INLINE_FUNCTION static double dot(const Two* g, const double (&z)[B]) {
    static_assert(G % 2 == 0 && G <= B, "a dot over pairs of the batch's replacements");
    double w0 = 0.0, w1 = 0.0;
    CISPMV_FACTORED_UNROLL
    for (int k = 0; k < G / 2; ++k) {
      const Two v = g[k];
      w0 += v.a * z[2 * k];
      w1 += v.b * z[2 * k + 1];
    }
    return w0 + w1;
  }
  // w (negated where `negative`) added to ys (in scratch of `level`) at target - lo where that lies in [0, len)
  // (a team of one thread, the CPUs' launch, adds without an atomic; CUDA's level 0 without the generic
  // pointer's test of its address space: impl::scratch_add)
  KOKKOS_INLINE_FUNCTION static void scatter(const Scratch& ys, int idx, int len, bool negative, double w, int level,
                                             bool alone) {
    if (static_cast<unsigned>(idx) < static_cast<unsigned>(len)) scratch_add(&ys(idx), negative ? -w : w, level, alone);
  }

  // x(ja_k, q) of the batch's first G strings (in scratch: range and row base each) into z, 0 where q is off a string's
  // range and past the G; whether any is on
  template <int G, class Strings>
  KOKKOS_INLINE_FUNCTION bool load_sources(const Strings& strings, int q, double (&z)[B]) const {
    const int kb = d.q_rank(q), pos = d.q_position(q);
    bool any = false;
    CISPMV_FACTORED_UNROLL
    for (int k = 0; k < B; ++k) {
      const bool in = k < G && static_cast<std::uint64_t>(q - strings(k)) < static_cast<std::uint64_t>(strings(B + k));
      z[k] = in ? x(d.a_rowbase(strings(2 * B + k) + kb) + pos) : 0.0;
      any = any || in;
    }
    return any;
  }

  // The table's walk for source position q: every pair of the class (pairs m0.. m0 + mc - 1) in steps of 4, the
  // integrals g a broadcast: their table entries (target << 1 | negative, or -1) loaded first (from L2: four loads in
  // flight), then the four sums, then their adds into ys (ia's row; targets less lo_a, len_a of them). Shared: ys and
  // g reached through in_shared (level 0 on CUDA: their loads LDS), the four adds by scratch_add_shared.
  // (the table by rows: FactoredTable::rows, as the constructor builds it for this kernel)
  // Rows: ys is this warp's copy of the row, the lanes of `mask` walk together (`live` false: nothing to add) and the
  // adds are impl::warp_row_add's plain ones.
  template <int G, bool Shared, bool Rows = false>
  KOKKOS_INLINE_FUNCTION void walk_table(double* ys, const Two* g, const double (&z)[B], int q, int m0, int mc,
                                         int lo_a, int len_a, bool alone, bool live = true,
                                         unsigned mask = 0xffffffffu) const {
    const std::int64_t stride = d.table_stride;
    const std::int32_t* tab = d.table.data() + static_cast<std::int64_t>(m0) * stride + q;
    int ml = 0;
    for (; ml + 4 <= mc; ml += 4, tab += 4 * stride) {
      std::int32_t e[4];
      CISPMV_FACTORED_UNROLL
      for (int u = 0; u < 4; ++u) e[u] = tab[u * stride];
      double* p[4];
      double w[4];
      bool on[4];
      CISPMV_FACTORED_UNROLL
      for (int u = 0; u < 4; ++u) {
        const int idx = (e[u] >> 1) - lo_a;  // ((-1 >> 1) - lo_a < 0)
        on[u] = live && static_cast<unsigned>(idx) < static_cast<unsigned>(len_a);
        p[u] = ys + (on[u] ? idx : 0);
        const double v = dot<G>(g + static_cast<std::ptrdiff_t>(ml + u) * row_twos, z);
        w[u] = e[u] & 1 ? -v : v;
      }
      if (Rows) {
        warp_row_add(p, w, on, mask);
      } else if (Shared) {
        scratch_add_shared(p, w, on, alone);
      } else {
        CISPMV_FACTORED_UNROLL
        for (int u = 0; u < 4; ++u) {
          if (on[u]) scratch_add(p[u], w[u], 1, alone);
        }
      }
    }
    for (; ml < mc; ++ml, tab += stride) {
      const int idx = (*tab >> 1) - lo_a;
      const bool in = live && static_cast<unsigned>(idx) < static_cast<unsigned>(len_a);
      if (Rows) {  // (every lane to the add: it orders the warp)
        const double v = dot<G>(g + static_cast<std::ptrdiff_t>(ml) * row_twos, z);
        double* const p[1] = {ys + (in ? idx : 0)};
        const double w[1] = {*tab & 1 ? -v : v};
        const bool on[1] = {in};
        warp_row_add(p, w, on, mask);
        continue;
      }
      if (!in) continue;
      const double v = dot<G>(g + static_cast<std::ptrdiff_t>(ml) * row_twos, z);
      double* const p[1] = {ys + idx};
      const double w[1] = {*tab & 1 ? -v : v};
      const bool on[1] = {true};
      if (Shared) {
        scratch_add_shared(p, w, on, alone);
      } else {
        scratch_add(p[0], w[0], 1, alone);
      }
    }
  }

  // A batch's products at its source positions lo_b + [0, len_b), over its first G replacements: into this warp's copy
  // of the row (`mine`, ys_rows > 1), else into ys
  template <int G>
  KOKKOS_INLINE_FUNCTION void walk_batch(const Scratch& ys, double* const mine, const ScratchOf<std::int64_t>& strings,
                                         const Two* const g, const int t, const int T, const int lane, const int cls,
                                         const int m0, const int mc, const int lo_b, const int len_b, const int lo_a,
                                         const int len_a) const {
    if (mine != nullptr) {
      // copies: the lanes of a warp that take a position in this round (`mask`: those before the range's end) walk
      // together, the adds ordering them (a loop in which every lane ran every round, lanes past the range with
      // nothing to add, made the walk ~20 % slower: s34-d, and the micro-benchmark's s34-b3)
      for (int k0 = t; k0 < len_b; k0 += T) {
        const int q = lo_b + k0;
        double z[B];
        const bool any = load_sources<G>(strings, q, z);
        const int left = len_b - (k0 - lane);  // positions from the warp's first lane's on
        const unsigned mask = left >= 32 ? 0xffffffffu : (1u << left) - 1u;
        walk_table<G, true, true>(mine, in_shared(g), z, q, m0, mc, lo_a, len_a, false, any, mask);
      }
      return;
    }
    for (int k0 = t; k0 < len_b; k0 += T) {
      const int q = lo_b + k0;
      double z[B];
      if (!load_sources<G>(strings, q, z)) continue;
      if (Lists) {
        // q's replacements of the class (target, sign, pair), each read one ahead; the integrals a
        // gather of the pair's row
        const std::int64_t be = d.be_ptr(static_cast<std::int64_t>(cls) * d.slices + (q >> 5));
        const int count = d.be_count(static_cast<std::int64_t>(cls) * d.nb + q);
        std::uint32_t next = count > 0 ? d.be_data(FactoredData<Mem>::sliced(be, q, 0)) : 0u;
        for (int i = 0; i < count; ++i) {
          const std::uint32_t e = next;
          if (i + 1 < count) next = d.be_data(FactoredData<Mem>::sliced(be, q, i + 1));
          const double w = dot<G>(g + static_cast<std::ptrdiff_t>(e & ((1u << factored_pair_bits) - 1)) * row_twos, z);
          scatter(ys, static_cast<int>(e >> factored_position_shift) - lo_a, len_a, (e >> factored_pair_bits) & 1u, w,
                  level, T == 1);
        }
      } else if (level == 0) {
        walk_table<G, true>(in_shared(ys.data()), in_shared(g), z, q, m0, mc, lo_a, len_a, T == 1);
      } else {
        walk_table<G, false>(ys.data(), g, z, q, m0, mc, lo_a, len_a, T == 1);
      }
    }
  }

  // walk_batch over the batch's first `walked` replacements (even, G to B): an instantiation for each
  template <int G, class... Args>
  KOKKOS_INLINE_FUNCTION void walk_upto(const int walked, const Args&... args) const {
    if constexpr (G < B) {
      if (walked > G) return walk_upto<G + 2>(walked, args...);
    }
    walk_batch<G>(args...);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const int task = m.league_rank();
    const std::int32_t ia = task_ia(task);
    const int part = task_part(task), parts = task_parts(task);
    const int T = m.team_size(), t = m.team_rank();
    const int lo_a = d.a_lo(ia), len_a = d.a_hi(ia) - lo_a;
    // the string's row: one copy, or one a warp (ys_rows > 1: CUDA's level 0, warps of 32 consecutive ranks as
    // Kokkos' teams of vector length 1 have them), this warp's at `mine`
    const int rows = ys_rows;
    const std::size_t stride = static_cast<std::size_t>(d.max_range);
    const Scratch ys(m.team_scratch(level), static_cast<std::size_t>(rows) * stride);
    const Scratch row(m.team_scratch(level), stride);  // x's row ia
    const ScratchOf<Two> integrals(m.team_scratch(level), integral_rows(d) * row_twos);
    const ScratchOf<std::int64_t> strings(m.team_scratch(level), 3 * B);
    for (int r = 0; r < rows; ++r) {
      for (int k = t; k < len_a; k += T) ys(r * stride + k) = 0.0;
    }
    const int lane = rows > 1 ? t % 32 : 0;
    double* const mine = rows > 1 ? in_shared(ys.data()) + (t / 32) * stride : nullptr;

    // alpha-beta, formed at the source positions and scattered to their targets
    const std::int64_t ab_end = d.alpha_beta ? d.ab_ptr(ia + 1) : d.ab_ptr(ia);
    for (std::int64_t b = d.ab_ptr(ia) + part; b < ab_end; b += parts) {
      // the batch's replacements up to its last live one, in pairs: those past it are padding (or strings that pair
      // with no position) whose x and integrals add nothing, so neither their integrals are staged nor their products
      // walked (s36: the frozen core's batches are 62 % live at B = 16, 96 % so)
      const int walked = d.ab_walked(b);
      if (walked == 0) continue;  // (the team's threads alike)
      const int cls = d.ab_class(b);
      const int m0 = d.cls_ptr(cls), mc = d.cls_ptr(cls + 1) - m0;
      const int lo_b = d.ab_lo(b), len_b = d.ab_len(b);
      m.team_barrier();  // (the previous batch's integrals are read)
      for (int i = t; i < mc * B; i += T) {
        if (i % B >= walked) continue;
        const std::int64_t r = b * B + i % B;
        const int pair = d.cls_pair(m0 + i / B);
        Two& two = integrals((Lists ? pair : i / B) * row_twos + (i % B) / 2);
        // (padding within the walked: sign 0, pair 0)
        (i % 2 == 0 ? two.a : two.b) = d.ab_sign(r) * d.weight(ia, d.ab_pair(r), pair);
      }
      // the batch's strings: range of q and where their rows start, in scratch (registers are kept for
      // x's values)
      for (int k = t; k < B; k += T) {
        const std::int32_t ja = d.ab_ja(b * B + k);
        strings(k) = ja < 0 ? 0 : d.a_lo(ja);
        strings(B + k) = ja < 0 ? 0 : d.a_hi(ja) - d.a_lo(ja);
        strings(2 * B + k) = ja < 0 ? 0 : static_cast<std::int64_t>(ja) * d.nkb;
      }
      m.team_barrier();
      walk_upto<2>(walked, ys, mine, strings, integrals.data(), t, T, lane, cls, m0, mc, lo_b, len_b, lo_a, len_a);
    }
    m.team_barrier();
    for (int k = t; rows > 1 && k < len_a; k += T) {  // the warps' copies into the first (ordered before any other
      double v = ys(k);                               // thread's use by the barrier the same-spin pass begins with)
      for (int r = 1; r < rows; ++r) v += ys(r * stride + k);
      ys(k) = v;
    }
    factored_same_spin_and_write(m, d, x, y, ys, row, ia, part, parts, alpha, beta, accumulate);
  }
};

/// GPUs with tensor cores: the alpha-beta sum of FactoredScatterKernel as small matrix products. For alpha
/// string ia and a unit of its replacements of one class (u: up to 8 batches of 4, (ja_k, pq_k, s_k)) and
/// pairs rs of that class (up to 64), W(rs, q) = sum_k s_k (pq_k|rs) x(ja_k, q) is a product A B of the
/// unit's integrals A (rs x k, staged once per unit in team scratch, laid out as the warps' fragments)
/// and the rows of x B (k x q), formed by each warp 8 positions q at a time in 8x8x4 products
/// (impl::warp_mma_8x8x4: the DMMA instruction), and each W(rs, q) is added to the target E_rs q of
/// the table (-1: rs does not apply to q's string) in ia's row in team scratch. Pairs that do not apply
/// cost a product's share instead of a walk's step: about three quarters of W are thrown away, and the
/// products are still cheaper than the scatter kernel's fused multiply-adds. Then each thread adds H_alpha's
/// and H_beta's terms of its positions, as there. With parts > 1, the teams of an alpha string share its
/// units' tiles of positions and its positions, and add their rows into y atomically (y scaled by beta
/// beforehand). On CPUs a team is one thread holding a warp's 32 lanes (impl::warp_lanes): the same tiles,
/// the same fragments, the product formed lane by lane.
template <class Exec, class X, class Y>
struct FactoredMmaKernel {
  using Mem = typename Exec::memory_space;
  using Policy = Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<128, 4>>;
  using Member = typename Policy::member_type;
  template <class T>
  using ScratchOf = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Scratch = ScratchOf<double>;
  static constexpr int Lanes = warp_lanes<Exec>;
  static constexpr int KS = factored_mma_ksteps;
  struct alignas(8) Two {  // two table entries, loaded at once
    std::int32_t a, b;
  };
  struct alignas(8) Range {  // a string's range of q, loaded at once
    std::int32_t lo, len;
  };
  FactoredData<Mem> d;
  X x;
  Y y;
  double alpha, beta;
  Kokkos::View<std::int32_t*, Mem> task_ia, task_part, task_parts;
  bool accumulate = false;  // add into y (parts > 1) rather than write it
  int level = 0;            // scratch level

  // a unit's integrals as fragments: (m-tiles x k-steps) x 32
  KOKKOS_INLINE_FUNCTION static std::size_t fragments(const FactoredData<Mem>& d) {
    return static_cast<std::size_t>((d.max_unit_pairs + 7) / 8) * static_cast<std::size_t>(d.max_unit_batches) * 32;
  }
  static std::size_t scratch_bytes(const FactoredData<Mem>& d) {
    return 2 * Scratch::shmem_size(static_cast<std::size_t>(d.max_range)) + Scratch::shmem_size(fragments(d)) +
           ScratchOf<Range>::shmem_size(4 * KS) + ScratchOf<std::int64_t>::shmem_size(4 * KS * d.nkb);
  }
  std::size_t team_scratch_bytes(const FactoredData<Mem>& d) const { return scratch_bytes(d); }

  // W's fragment c of m-tile mt (this thread's lanes) added to the targets of its pairs and positions
  KOKKOS_INLINE_FUNCTION void scatter(const Scratch& ys, const double (&c)[Lanes][2], int lane0, int mt, int pairs,
                                      std::int64_t first_row, int q0, int lo_a, int len_a, bool alone) const {
    CISPMV_FACTORED_UNROLL
    for (int j = 0; j < Lanes; ++j) {
      const int l = lane0 + j, row = 8 * mt + (l >> 2);
      if (row >= pairs) continue;
      // the entries of positions q0 + 2 (l % 4) and the one after it, in one 8-byte load (q0 a multiple of 8, and
      // rows of the table a multiple of 8 entries apart)
      const std::int64_t at = d.table_at(first_row + row, q0 + 2 * (l & 3));
      const Two two = *reinterpret_cast<const Two*>(d.table.data() + at);
      const std::int32_t e[2] = {two.a, two.b};
      CISPMV_FACTORED_UNROLL
      for (int i = 0; i < 2; ++i) {
        const int idx = (e[i] >> 1) - lo_a;  // ((-1 >> 1) - lo_a < 0)
        if (e[i] >= 0 && static_cast<unsigned>(idx) < static_cast<unsigned>(len_a)) {
          scratch_add(&ys(idx), e[i] & 1 ? -c[j][i] : c[j][i], level, alone);
        }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const int task = m.league_rank();
    const std::int32_t ia = task_ia(task);
    const int part = task_part(task), parts = task_parts(task);
    const int T = m.team_size(), t = m.team_rank();
    // warps of the team and this thread's lanes: on GPUs 32 threads a warp, on CPUs a thread a warp
    const int warps = Lanes == 1 ? T / 32 : T, warp = Lanes == 1 ? t / 32 : t, lane0 = Lanes == 1 ? t % 32 : 0;
    const int lo_a = d.a_lo(ia), len_a = d.a_hi(ia) - lo_a;
    const Scratch ys(m.team_scratch(level), static_cast<std::size_t>(d.max_range));
    const Scratch row(m.team_scratch(level), static_cast<std::size_t>(d.max_range));  // x's row ia
    const Scratch as(m.team_scratch(level), fragments(d));
    const ScratchOf<Range> ranges(m.team_scratch(level), 4 * KS);
    const ScratchOf<std::int64_t> bases(m.team_scratch(level), 4 * KS * d.nkb);  // a_rowbase of (string, rank)
    for (int k = t; k < len_a; k += T) ys(k) = 0.0;

    for (std::int64_t u = d.mu_ptr(ia); u < (d.alpha_beta ? d.mu_ptr(ia + 1) : d.mu_ptr(ia)); ++u) {
      const std::int64_t b0 = d.mu_batch(u);
      const int ksteps = d.mu_ksteps(u), pairs = d.mu_pairs(u), mtiles = (pairs + 7) / 8;
      const int cls = d.ab_class(b0);
      const std::int64_t first_row = d.cls_ptr(cls) + d.mu_pair(u);  // the unit's first pair, in class order
      const int qbase = d.mu_lo(u) & ~7;
      const int tiles = (d.mu_lo(u) + d.mu_len(u) - qbase + 7) / 8;
      m.team_barrier();  // (the previous unit's integrals are read)
      // A(8 mt + l / 4, 4 ks + l % 4) of fragment (mt, ks) at as((mt * ksteps + ks) * 32 + l)
      for (int i = t; i < mtiles * ksteps * 32; i += T) {
        const int f = i >> 5, l = i & 31, mt = f / ksteps, ks = f - mt * ksteps, r = 8 * mt + (l >> 2);
        const std::int64_t rep = (b0 + ks) * 4 + (l & 3);
        const double sign = d.ab_sign(rep);
        as(i) = r < pairs && sign != 0.0
                    ? sign * d.weight(ia, d.ab_pair(rep), d.cls_pair(static_cast<std::int64_t>(first_row) + r))
                    : 0.0;
      }
      // the unit's strings: range of q (padding: an empty range) and where their rows of each rank start, so that
      // a lane's load of x waits on one load from scratch (a_rowbase of the string's rank was a load from L1 after
      // the string's own)
      for (int k = t; k < 4 * ksteps; k += T) {
        const std::int32_t ja = d.ab_ja(b0 * 4 + k);
        ranges(k) = ja < 0 ? Range{0, 0} : Range{d.a_lo(ja), d.a_hi(ja) - d.a_lo(ja)};
      }
      for (int i = t; i < 4 * ksteps * d.nkb; i += T) {
        const std::int32_t ja = d.ab_ja(b0 * 4 + i / d.nkb);
        bases(i) = ja < 0 ? 0 : d.a_rowbase(static_cast<std::int64_t>(ja) * d.nkb + i % d.nkb);
      }
      m.team_barrier();
      for (int tile = part * warps + warp; tile < tiles; tile += parts * warps) {
        const int q0 = qbase + 8 * tile;
        // B(4 ks + l % 4, l / 4) = x(ja_{4 ks + l % 4}, q0 + l / 4), 0 where the string does not pair with q
        double b[KS][Lanes];
        CISPMV_FACTORED_UNROLL
        for (int j = 0; j < Lanes; ++j) {
          const int l = lane0 + j, q = q0 + (l >> 2);
          const bool on = q < d.nb;
          const int kb = on ? d.q_rank(q) : 0, pos = on ? d.q_position(q) : 0;
          CISPMV_FACTORED_UNROLL
          for (int ks = 0; ks < KS; ++ks) {
            const int s = 4 * ks + (l & 3);
            const Range r = ks < ksteps ? ranges(s) : Range{0, 0};
            const bool in = static_cast<unsigned>(q - r.lo) < static_cast<unsigned>(r.len);
            b[ks][j] = in ? x(bases(s * d.nkb + kb) + pos) : 0.0;
          }
        }
        // two m-tiles at a time (two independent chains of products), each scattered when complete
        for (int mt = 0; mt < mtiles; mt += 2) {
          const bool second = mt + 1 < mtiles;
          double c0[Lanes][2], c1[Lanes][2];
          CISPMV_FACTORED_UNROLL
          for (int j = 0; j < Lanes; ++j) c0[j][0] = c0[j][1] = c1[j][0] = c1[j][1] = 0.0;
          warp_sync();
          CISPMV_FACTORED_UNROLL
          for (int ks = 0; ks < KS; ++ks) {
            if (ks < ksteps) {
              double a0[Lanes], a1[Lanes], bk[Lanes];
              CISPMV_FACTORED_UNROLL
              for (int j = 0; j < Lanes; ++j) {
                a0[j] = as((mt * ksteps + ks) * 32 + lane0 + j);
                a1[j] = second ? as(((mt + 1) * ksteps + ks) * 32 + lane0 + j) : 0.0;
                bk[j] = b[ks][j];
              }
              warp_mma_8x8x4(a0, bk, c0);
              if (second) warp_mma_8x8x4(a1, bk, c1);
            }
          }
          scatter(ys, c0, lane0, mt, pairs, first_row, q0, lo_a, len_a, T == 1);
          if (second) scatter(ys, c1, lane0, mt + 1, pairs, first_row, q0, lo_a, len_a, T == 1);
        }
      }
    }
    m.team_barrier();
    factored_same_spin_and_write(m, d, x, y, ys, row, ia, part, parts, alpha, beta, accumulate);
  }
};

/// The tile kernel's product W = A B for A (rows x k, row-major), B (k x 8) and W (rows x 8) in portable C++,
/// four rows at a time (host_simd::factored_tile_avx512 is the same in AVX-512).
KOKKOS_INLINE_FUNCTION void factored_tile(const double* A, int rows, int k, const double* B, double* W) {
  int m = 0;
  for (; m + 4 <= rows; m += 4) {
    double acc[4][8] = {};
    for (int c = 0; c < k; ++c) {
      for (int r = 0; r < 4; ++r) {
        const double v = A[(m + r) * k + c];
        for (int j = 0; j < 8; ++j) acc[r][j] += v * B[8 * c + j];
      }
    }
    for (int r = 0; r < 4; ++r)
      for (int j = 0; j < 8; ++j) W[8 * (m + r) + j] = acc[r][j];
  }
  for (; m < rows; ++m) {
    double acc[8] = {};
    for (int c = 0; c < k; ++c)
      for (int j = 0; j < 8; ++j) acc[j] += A[m * k + c] * B[8 * c + j];
    for (int j = 0; j < 8; ++j) W[8 * m + j] = acc[j];
  }
}

/// CPUs: the alpha-beta sum as the mma kernel forms it, tiles of W = A B, but with the CPU's vector unit
/// and the scatter kernel's lists. For alpha string ia and a unit of its replacements of one class (up to
/// factored_tile_batches batches of 8) against the class's pairs (up to 64), a tile of 8 positions q:
/// B's rows x(ja_k, q .. q + 7) (a run of x's row where the 8 positions lie in one block of q, else one
/// value at a time), W = A B (impl::host_simd: AVX-512 where the CPU has it, a zmm register a row of W;
/// else portable C++), and then each position's own replacements of the class (its sliced list: target,
/// sign, pair) take their W(pair, q) into ia's row in team scratch. W is dense over the pairs (about three
/// quarters do not apply to a given q), the price of the vector unit; the lists walk only what applies.
/// Then H_alpha's and H_beta's terms as in the other team kernels. Teams of one thread (on a GPU too,
/// where it runs for the tests only), or `parts` teams an alpha string taking every parts-th unit and
/// adding their rows into y atomically.
template <class Exec, class X, class Y>
struct FactoredTileKernel {
  using Mem = typename Exec::memory_space;
  using Policy = Kokkos::TeamPolicy<Exec>;
  using Member = typename Policy::member_type;
  template <class T>
  using ScratchOf = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Scratch = ScratchOf<double>;
  static constexpr int K = 8 * factored_tile_batches;  // replacements a unit at most
  FactoredData<Mem> d;
  X x;
  Y y;
  double alpha, beta;
  Kokkos::View<std::int32_t*, Mem> task_ia, task_part, task_parts;
  bool accumulate = false;  // add into y (parts > 1) rather than write it
  int level = 0;            // scratch level
  bool avx512 = false;      // the tile in AVX-512 (host_simd::avx512_available())

  static std::size_t scratch_bytes(const FactoredData<Mem>& d) {
    const auto pairs = static_cast<std::size_t>(d.max_unit_pairs);
    return 2 * Scratch::shmem_size(static_cast<std::size_t>(d.max_range)) + Scratch::shmem_size(pairs * K) +
           Scratch::shmem_size(8 * K) + Scratch::shmem_size(8 * pairs);
  }
  std::size_t team_scratch_bytes(const FactoredData<Mem>& d) const { return scratch_bytes(d); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const int task = m.league_rank();
    const std::int32_t ia = task_ia(task);
    const int part = task_part(task), parts = task_parts(task);
    const int lo_a = d.a_lo(ia), len_a = d.a_hi(ia) - lo_a;
    const Scratch ys(m.team_scratch(level), static_cast<std::size_t>(d.max_range));
    const Scratch row(m.team_scratch(level), static_cast<std::size_t>(d.max_range));  // x's row ia
    const Scratch a(m.team_scratch(level), static_cast<std::size_t>(d.max_unit_pairs) * K);
    const Scratch b(m.team_scratch(level), 8 * K);
    const Scratch w(m.team_scratch(level), 8 * static_cast<std::size_t>(d.max_unit_pairs));
    for (int k = 0; k < len_a; ++k) ys(k) = 0.0;

    for (std::int64_t u = d.mu_ptr(ia) + part; u < (d.alpha_beta ? d.mu_ptr(ia + 1) : d.mu_ptr(ia)); u += parts) {
      const std::int64_t b0 = d.mu_batch(u);
      const int k_n = 8 * d.mu_ksteps(u), pairs = d.mu_pairs(u), m0 = d.mu_pair(u);
      const int cls = d.ab_class(b0);
      const std::int64_t first_pair = d.cls_ptr(cls) + m0;
      // A(r, k) = s_k (pq_k|rs_r), row after row
      for (int r = 0; r < pairs; ++r) {
        const int rs = d.cls_pair(first_pair + r);
        for (int k = 0; k < k_n; ++k) {
          const double sign = d.ab_sign(b0 * 8 + k);
          a(r * k_n + k) = sign == 0.0 ? 0.0 : sign * d.weight(ia, d.ab_pair(b0 * 8 + k), rs);
        }
      }
      const int q_end = d.mu_lo(u) + d.mu_len(u);
      for (int q0 = d.mu_lo(u) & ~7; q0 < q_end; q0 += 8) {
        // B(k, j) = x(ja_k, q0 + j), 0 where the string does not pair with the position
        const bool one_block = q0 + 8 <= d.nb && d.q_block_end(q0) >= q0 + 8;
        for (int k = 0; k < k_n; ++k) {
          const std::int32_t ja = d.ab_ja(b0 * 8 + k);
          const int lo = ja < 0 ? 0 : d.a_lo(ja), len = ja < 0 ? 0 : d.a_hi(ja) - lo;
          if (one_block && q0 >= lo && q0 + 8 <= lo + len) {
            const std::int64_t at = d.index(ja, q0);
            for (int j = 0; j < 8; ++j) b(8 * k + j) = x(at + j);
          } else {
            for (int j = 0; j < 8; ++j) {
              const int q = q0 + j;
              b(8 * k + j) = static_cast<unsigned>(q - lo) < static_cast<unsigned>(len) ? x(d.index(ja, q)) : 0.0;
            }
          }
        }
        tile(a.data(), pairs, k_n, b.data(), w.data());
        // each position's replacements of the class whose pair is the unit's
        for (int j = 0; j < 8; ++j) {
          const int q = q0 + j;
          if (q < d.mu_lo(u) || q >= q_end) continue;
          const std::int64_t be = d.be_ptr(static_cast<std::int64_t>(cls) * d.slices + (q >> 5));
          const int count = d.be_count(static_cast<std::int64_t>(cls) * d.nb + q);
          for (int i = 0; i < count; ++i) {
            const std::uint32_t e = d.be_data(FactoredData<Mem>::sliced(be, q, i));
            const int r = d.pair_slot(static_cast<std::int32_t>(e & ((1u << factored_pair_bits) - 1))) - m0;
            const int idx = static_cast<int>(e >> factored_position_shift) - lo_a;
            if (static_cast<unsigned>(r) < static_cast<unsigned>(pairs) &&
                static_cast<unsigned>(idx) < static_cast<unsigned>(len_a)) {
              const double v = w(8 * r + j);
              ys(idx) += (e >> factored_pair_bits) & 1u ? -v : v;
            }
          }
        }
      }
    }
    m.team_barrier();
    factored_same_spin_and_write(m, d, x, y, ys, row, ia, part, parts, alpha, beta, accumulate);
  }

 private:
  KOKKOS_INLINE_FUNCTION void tile(const double* A, int rows, int k, const double* B, double* W) const {
#if CISPMV_HOST_SIMD
    if (avx512) {
      host_simd::factored_tile_avx512(A, rows, k, B, W);
      return;
    }
#endif
    factored_tile(A, rows, k, B, W);
  }
};

}  // namespace cispmv::impl

namespace cispmv::ci {

/// The Hamiltonian of a determinant space in factored form (see the file's comment), in the memory of
/// Exec: an operator for the Davidson (value_type, memory_space, num_rows, apply) and the benchmarks.
template <class Exec>
class FactoredHamiltonian {
 public:
  using execution_space = Exec;
  using memory_space = typename Exec::memory_space;
  using value_type = double;
  /// Builds the string lists on the host (O(strings x replacements)) and copies them to Exec's memory.
  /// Throws std::invalid_argument when the integrals and the space disagree, or the space is beyond
  /// what the packed lists address (2^19 beta strings or more).
  FactoredHamiltonian(const Exec& exec, const FciDump& integrals, const DeterminantSpace& space,
                      const FactoredOptions& options = {})
      : exec_(exec) {
    using K = FactoredOptions::Kernel;
    // automatic: on GPUs the scatter kernel's table walk at batch 16; on CPUs with AVX-512 the tile kernel
    // (our 2 cores, session 28: frozen core 23.9 ms against the scatter kernel's lists' walk 41.3, all-electron
    // 0.267 s against 0.517), elsewhere, or where the options ask for the scatter kernel's batch, lists or
    // teams, that lists' walk at batch 8 (the tiles in portable C++: 49.6 ms and 0.534 s)
    const bool gpu = cispmv::impl::is_gpu_space_v<Exec>;
    const bool auto_tiles = !gpu && impl::host_simd::avx512_available() && !options.scatter_lists &&
                            (options.batch == 0 || options.batch == 8) && options.team_size <= 1;
    kernel_ = options.kernel != K::automatic ? options.kernel : auto_tiles ? K::tiles : K::scatter;
    const bool mma = kernel_ == K::mma, tiles = kernel_ == K::tiles;
    teams_ = kernel_ == K::teams;
    lists_ = options.scatter_lists ||
             (options.kernel == K::automatic && !gpu && !auto_tiles && (options.batch == 0 || options.batch == 8));
    const int batch = options.batch > 0                                      ? options.batch
                      : (kernel_ == K::scatter && (lists_ || !gpu)) || tiles ? 8
                      : kernel_ == K::scatter                                ? 16
                                                                             : impl::factored_batch;
    const bool batch_ok = kernel_ == K::teams     ? batch == 2 || batch == 4
                          : kernel_ == K::scatter ? batch == 8 || batch == 16
                          : mma                   ? batch == 4
                          : tiles                 ? batch == 8
                                                  : batch == 2 || batch == 4 || batch == 8 || batch == 16;
    if (options.batch < 0 || !batch_ok) {
      throw std::invalid_argument("cispmv::ci::FactoredHamiltonian: batch " + std::to_string(options.batch) +
                                  " (0; teams 2 or 4, scatter 8 or 16, mma 4, tiles 8, rows 2, 4, 8 or 16)");
    }
    if (mma && gpu && (options.team_size % 32 != 0 || options.team_size > 128)) {
      throw std::invalid_argument("cispmv::ci::FactoredHamiltonian: team size " + std::to_string(options.team_size) +
                                  " (the mma kernel's teams on a GPU are whole warps: 0, 32, 64, 96 or 128)");
    }
    if (mma && gpu && !impl::warp_mma_runs<Exec>) {
      throw std::invalid_argument(
          "cispmv::ci::FactoredHamiltonian: the mma kernel runs on CUDA GPUs and on CPUs, not on this backend");
    }
    if (tiles && options.team_size > 1) {
      throw std::invalid_argument("cispmv::ci::FactoredHamiltonian: team size " + std::to_string(options.team_size) +
                                  " (the tile kernel's teams are one thread: 0 or 1)");
    }
    if (lists_ && (kernel_ != K::scatter || batch != 8)) {
      throw std::invalid_argument("cispmv::ci::FactoredHamiltonian: scatter_lists needs the scatter kernel at batch 8");
    }
    if (options.terms != FactoredOptions::Terms::all && kernel_ != K::scatter && !mma && !tiles) {
      throw std::invalid_argument(
          "cispmv::ci::FactoredHamiltonian: a part of the terms (FactoredOptions::terms) needs the scatter, mma or "
          "tiles kernel");
    }
    if (options.team_size < 0 || options.team_size > 256 || options.parts < 0) {
      throw std::invalid_argument("cispmv::ci::FactoredHamiltonian: team size " + std::to_string(options.team_size) +
                                  " (0 or 1..256) or parts " + std::to_string(options.parts) + " (0 or more)");
    }
    using Pass = FactoredOptions::SameSpinPass;
    const bool gemm_kernel = kernel_ == K::scatter || mma || tiles;
    if (options.same_spin_pass == Pass::gemm && !gemm_kernel) {
      throw std::invalid_argument(
          "cispmv::ci::FactoredHamiltonian: the same-spin pass `gemm` (FactoredOptions::same_spin_pass) needs the "
          "scatter, mma or tiles kernel");
    }
    if (options.same_spin_pass == Pass::gemm && !impl::warp_mma_runs<Exec>) {
      throw std::invalid_argument(
          "cispmv::ci::FactoredHamiltonian: the same-spin pass `gemm` runs on CUDA GPUs and on CPUs, not on this "
          "backend");
    }
    const bool want_gemm = gemm_kernel && impl::warp_mma_runs<Exec> &&
                           options.terms != FactoredOptions::Terms::alpha_beta &&
                           (options.same_spin_pass == Pass::gemm || (options.same_spin_pass == Pass::automatic && gpu));
    impl::FactoredHost h = impl::factor_hamiltonian(integrals, space, options, batch,
                                                    mma                                ? impl::FactoredTable::tiles
                                                    : kernel_ == K::scatter && !lists_ ? impl::FactoredTable::rows
                                                                                       : impl::FactoredTable::none,
                                                    want_gemm);
    if (options.same_spin_pass == Pass::gemm && want_gemm && !h.gemm_built) {
      throw std::invalid_argument("cispmv::ci::FactoredHamiltonian: the same-spin pass `gemm`: " + h.gemm_why);
    }
    // automatic (GPUs): dense work at most 16 times the lists' (the all-electron H2O/6-31G's blocks by irrep: ~4
    // times), and tiles enough in each launch for 3 teams of 128 threads an SM (132 SMs: 396; the kernel holds 4 an
    // SM since session 32, and a launch of 3 an SM already covers most of them), since a tile's chunks run one after
    // the other. Measured (s31-r2b, H200): the all-electron space's launches of 506 and 756 tiles, same-spin terms
    // 0.358 ms against the lists' 0.770 (s32-c: 0.263); the frozen core's (its smaller launch 88 tiles) 0.113 against
    // 0.105
    // (2,048 threads an SM, as compute capability 8.0 and 9.0 have; GPUs of 1,536 ask 4/3 as many tiles)
    const double gpu_teams = static_cast<double>(exec.concurrency()) / 2048.0 * 3.0;
    // With the launches concurrent (CUDA) a small launch no longer leaves the GPU idle: it runs beside the alpha-beta
    // kernel, so only the dense work is weighed.
    const bool concurrent = options.launches == FactoredOptions::Launches::concurrent ||
                            (options.launches == FactoredOptions::Launches::automatic && gpu);
    gemm_same_spin_ =
        h.gemm_built && (options.same_spin_pass == Pass::gemm ||
                         (h.gemm.flops <= 16.0 * 2.0 * std::max(1.0, h.same_spin_terms) &&
                          (concurrent || impl::GatheredGemmHost::smallest_launch(h.gemm.launch_ptr) >= gpu_teams)));
    same_spin_flops_ = gemm_same_spin_ ? h.gemm.flops : 0.0;
    if (mma) impl::factored_units(h, impl::factored_mma_ksteps, 8 * impl::factored_mma_mtiles);
    if (tiles) impl::factored_units(h, impl::factored_tile_batches, impl::factored_tile_pairs);
    rows_ = h.rows;
    terms_ = h.alpha_beta_terms;
    symmetry_ = h.symmetry;
    bytes_ = vector_bytes(h);
    d_ = impl::FactoredData<memory_space>(h);
    d_.same_spin = options.terms != FactoredOptions::Terms::alpha_beta && !gemm_same_spin_;
    d_.alpha_beta = options.terms != FactoredOptions::Terms::same_spin;
    if (gemm_same_spin_) {
      gemm_ = impl::GatheredGemmData<memory_space>(h.gemm);
      gemm_launches_ = h.gemm.launch_ptr;
      bytes_ += h.gemm.bytes();
      concurrent_ = concurrent && d_.alpha_beta;
      for (std::size_t l = 0; concurrent_ && l + 1 < gemm_launches_.size(); ++l) side_.emplace_back(exec);
    }
    if (kernel_ == K::scatter || mma || tiles) {
      // parts per alpha string where its beta range is long: enough teams where the alpha strings are few (4),
      // else as few as fill the GPU without a long tail of teams (each part adds its row into y atomically, y
      // scaled first): 2 for the all-electron H2O/6-31G's 1,287 strings (ranges of 1,287), 1 for the frozen
      // core's 495 (ranges of 495); else 1. s30 (the walk's loads in shared memory), one run each, ms:
      // all-electron 2 / 4 / 1 parts 1.65 / 1.68 / 1.79 (H200, s30-q3b), 1.67 / 1.69 (H100, s30-q4); frozen core
      // 1 / 2 / 4 parts 0.248 / 0.252 / 0.253 (s30-q3b), 0.249 / - / 0.254 (s30-q4). Before (s27-g2, H200):
      // 4 parts against 1, all-electron 1.93 against 2.21, frozen core 0.273 against 0.298; its A1 (ranges
      // of ~124) 0.105 with 1 part, 4 parts at batch 8 0.140. Where the teams form no same-spin terms (the dense
      // products, or the alpha-beta sum alone) the frozen core takes 2 as well: s33-b and s33-c (H100, two calls),
      // the dense products beside the kernel, 0.179 ms with 2 parts against 0.187 / 0.186 with 1. Short ranges
      // (average under 256) with fewer than 1,024 strings and no same-spin terms in the teams take 2 too: the frozen
      // core's A1 (495 strings, ranges of ~124: 495 teams, less than a wave), 2 parts against 1 0.081 / 0.078 against
      // 0.092 / 0.087 (s35-k), 0.069 / 0.078 against 0.077 / 0.083 (s36-b, the walk to the last live replacement)
      // mma: teams of 4 warps, 4 teams per alpha string where there are fewer than 512 alpha strings whose
      // ranges average 256 or more, else 1; the teams of an alpha string share its tiles of positions
      // (s28-m2, H100, measured with H_alpha (x) 1 by products, since taken out: the frozen core's 495 strings
      // of ranges of 495, 0.334 ms with 4 parts, 0.352 with 1; its A1, ranges of ~124, 0.129 with 1, 0.189
      // with 4; the all-electron's 1,287 strings 2.18 with 1, 2.37 with 4)
      team_size_ = tiles ? 1 : options.team_size > 0 ? options.team_size : cispmv::impl::is_gpu_space_v<Exec> ? 128 : 1;
      const double mean_range = static_cast<double>(h.rows) / std::max(1, h.na);
      const int parts = options.parts > 0                     ? options.parts
                        : mma                                 ? (gpu && h.na < 512 && mean_range >= 256 ? 4 : 1)
                        : tiles                               ? 1
                        : gpu && mean_range >= 256            ? (h.na >= 1024 || (h.na >= 384 && !d_.same_spin) ? 2
                                                                 : h.na >= 384                                  ? 1
                                                                                                                : 4)
                        : gpu && h.na < 1024 && !d_.same_spin ? 2
                                                              : 1;
      // copies of the row, one a warp (CUDA's level 0, teams of whole warps, the table's walk)
      using RowOptions = FactoredOptions::RowCopies;
      if (kernel_ == K::scatter && !lists_ && impl::warp_mma_runs<Exec> && gpu &&
          options.row_copies != RowOptions::shared) {
        using V = Kokkos::View<double*, memory_space>;
        const int copies = team_size_ % 32 == 0 ? team_size_ / 32 : 1;
        const std::size_t with = batch == 16
                                     ? impl::FactoredScatterKernel<Exec, V, V, 16, false>::scratch_bytes(d_, copies)
                                     : impl::FactoredScatterKernel<Exec, V, V, 8, false>::scratch_bytes(d_, copies);
        const bool fits =
            copies > 1 && with <= static_cast<std::size_t>(
                                      impl::FactoredScatterKernel<Exec, V, V, 16, false>::Policy::scratch_size_max(0));
        if (options.row_copies == RowOptions::per_warp && !fits) {
          throw std::invalid_argument(
              "cispmv::ci::FactoredHamiltonian: row copies per warp need teams of 64 or more "
              "threads, whole warps (team size " +
              std::to_string(team_size_) + "), and " + std::to_string(with) + " bytes of level-0 scratch (at most " +
              std::to_string(impl::FactoredScatterKernel<Exec, V, V, 16, false>::Policy::scratch_size_max(0)) + ")");
        }
        if (fits && (options.row_copies == RowOptions::per_warp || with <= 32 * 1024)) ys_rows_ = copies;
      }
      std::vector<std::int32_t> ia, part, count;
      std::vector<double> work;
      for (int a = 0; a < h.na; ++a) {
        const auto batches =
            static_cast<int>(h.ab_ptr[static_cast<std::size_t>(a) + 1] - h.ab_ptr[static_cast<std::size_t>(a)]);
        const int units =
            tiles ? static_cast<int>(h.mu_ptr[static_cast<std::size_t>(a) + 1] - h.mu_ptr[static_cast<std::size_t>(a)])
                  : batches;
        const int p = mma ? parts : std::max(1, std::min(parts, units));
        for (int k = 0; k < p; ++k) {
          ia.push_back(a);
          part.push_back(k);
          count.push_back(p);
          work.push_back(task_work(h, a, k, p, kernel_));
        }
        slots_ = std::max(slots_, p);
      }
      largest_first_ = options.task_order == FactoredOptions::TaskOrder::largest_first ||
                       (options.task_order == FactoredOptions::TaskOrder::automatic && gpu);
      if (largest_first_) {
        std::vector<std::size_t> order(ia.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return work[i] > work[j]; });
        auto permuted = [&](const std::vector<std::int32_t>& v) {
          std::vector<std::int32_t> out(v.size());
          for (std::size_t i = 0; i < order.size(); ++i) out[i] = v[order[i]];
          return out;
        };
        ia = permuted(ia);
        part = permuted(part);
        count = permuted(count);
        std::vector<double> sorted(work.size());
        for (std::size_t i = 0; i < order.size(); ++i) sorted[i] = work[order[i]];
        work.swap(sorted);
      }
      team_work_ = std::move(work);
      task_ia_ = impl::factored_view<std::int32_t, memory_space>("task_ia", ia);
      task_first_ = impl::factored_view<std::int32_t, memory_space>("task_part", part);
      task_end_ = impl::factored_view<std::int32_t, memory_space>("task_parts", count);
      bytes_ += 12 * ia.size();
    } else if (teams_) {
      if (options.team_size < 0 || options.team_size > 256 || options.slots < 0 ||
          options.slots > impl::factored_max_slots) {
        throw std::invalid_argument("cispmv::ci::FactoredHamiltonian: team size " + std::to_string(options.team_size) +
                                    " (0 or 1..256) or slots " + std::to_string(options.slots) + " (0 or 1..4)");
      }
      // chunks of a beta range: as many slots per thread as keep ~1,024 teams busy; on GPUs 128 threads a
      // team, 256 where 128 would need more than factored_max_slots (fewer chunks of a range, each staging
      // the whole rows: session 26, all-electron 4.94 ms at 256 x 4 against 5.43 at 128 x 8)
      const double teams = 1024.0;
      const bool many = static_cast<double>(rows_) > 128.0 * teams * impl::factored_max_slots;
      team_size_ = options.team_size > 0                 ? options.team_size
                   : !cispmv::impl::is_gpu_space_v<Exec> ? 1
                   : many                                ? 256
                                                         : 128;
      slots_ = options.slots > 0 ? options.slots
                                 : static_cast<int>(std::ceil(static_cast<double>(rows_) / (team_size_ * teams)));
      slots_ = std::clamp(slots_, 1, impl::factored_max_slots);
      const int chunk = team_size_ * slots_;
      std::vector<std::int32_t> ia, first, end;
      for (int a = 0; a < h.na; ++a) {  // each range in chunks of at most `chunk`, of even lengths
        const int lo = h.a_lo[static_cast<std::size_t>(a)], len = h.a_hi[static_cast<std::size_t>(a)] - lo;
        const int parts = (len + chunk - 1) / chunk;
        for (int p = 0; p < parts; ++p) {
          ia.push_back(a);
          first.push_back(lo + static_cast<int>(static_cast<std::int64_t>(len) * p / parts));
          end.push_back(lo + static_cast<int>(static_cast<std::int64_t>(len) * (p + 1) / parts));
        }
      }
      task_ia_ = impl::factored_view<std::int32_t, memory_space>("task_ia", ia);
      task_first_ = impl::factored_view<std::int32_t, memory_space>("task_first", first);
      task_end_ = impl::factored_view<std::int32_t, memory_space>("task_end", end);
      bytes_ += 12 * ia.size();
    }
    na_ = h.na;
  }

  int num_rows() const { return static_cast<int>(rows_); }
  int num_cols() const { return static_cast<int>(rows_); }
  /// Bytes of the lists and integrals in Exec's memory (the assembled matrix's would be ~12 per nonzero).
  std::size_t bytes() const { return bytes_; }
  /// Beta entries one product visits in the alpha-beta sum (times the alpha replacements they serve).
  std::size_t alpha_beta_terms() const { return terms_; }
  /// Whether pairs of orbitals of different irreps are skipped (ORBSYM obeyed by the integrals).
  bool uses_symmetry() const { return symmetry_; }
  /// Alpha replacements per batch of the team kernel's staging (FactoredOptions::batch).
  int batch() const { return d_.batch; }
  /// The kernel products run (never `automatic`), and whether `scatter` walks the replacement lists.
  FactoredOptions::Kernel kernel() const { return kernel_; }
  bool scatter_lists() const { return lists_; }
  /// Whether products run the `teams` kernel, the team size of the team kernels, and beta strings per
  /// thread (`teams`) or the most teams an alpha string takes (`scatter`, `mma`, `tiles`).
  bool team_kernel() const { return teams_; }
  int team_size() const { return team_size_; }
  int slots() const { return slots_; }
  /// Whether the same-spin terms are dense products (FactoredOptions::SameSpinPass::gemm), and those products'
  /// floating-point operations in one product (2 m k n over the dense blocks; 0 without them).
  bool same_spin_gemm() const { return gemm_same_spin_; }
  double same_spin_flops() const { return same_spin_flops_; }
  /// The dense products' tiles (teams) in the smaller of their two launches (0 without them).
  int same_spin_tiles() const { return impl::GatheredGemmHost::smallest_launch(gemm_launches_); }
  /// Whether the dense products run beside the alpha-beta kernel (FactoredOptions::Launches::concurrent).
  bool concurrent_launches() const { return concurrent_; }
  /// Copies of an alpha string's row the scatter kernel's teams add into: 1, or one for each warp
  /// (FactoredOptions::RowCopies::per_warp).
  int row_copies() const { return ys_rows_; }
  /// Whether the scatter, mma or tile kernel's teams run largest first (FactoredOptions::TaskOrder).
  bool largest_first() const { return largest_first_; }
  /// The estimated work of each team of the scatter, mma or tile kernel in the order they launch (multiply-adds of the
  /// alpha-beta sum by position and the team's positions: FactoredOptions::TaskOrder); empty for the other kernels.
  const std::vector<double>& team_work() const { return team_work_; }

  /// y = beta * y + alpha * H x (x and y: rank-1 Views of num_rows() entries in memory_space; y may not
  /// alias x).
  template <class XView, class YView>
  void apply(double alpha, const XView& x, double beta, const YView& y) const {
    if (static_cast<std::int64_t>(x.extent(0)) != rows_ || static_cast<std::int64_t>(y.extent(0)) != rows_) {
      throw std::invalid_argument("cispmv::ci::FactoredHamiltonian::apply: x has " + std::to_string(x.extent(0)) +
                                  " entries and y " + std::to_string(y.extent(0)) + ", the space " +
                                  std::to_string(rows_) + " determinants");
    }
    using K = FactoredOptions::Kernel;
    // teams that add their terms into y (scaled by beta first): several teams an alpha string, or kernels at once
    const bool adds =
        (kernel_ == K::tiles || kernel_ == K::mma || kernel_ == K::scatter) && (slots_ > 1 || concurrent_);
    if ((gemm_same_spin_ && !d_.alpha_beta) || adds) scale(beta, y);
    try {
      launch(alpha, x, beta, y, adds);
    } catch (...) {
      for (const auto& side : side_) side.join(exec_);  // (what the side streams took still comes before later work)
      throw;
    }
    for (const auto& side : side_) side.join(exec_);
  }

 private:
  // apply's launches once y is scaled where `adds` (the teams add into y)
  template <class XView, class YView>
  void launch(double alpha, const XView& x, double beta, const YView& y, bool adds) const {
    using K = FactoredOptions::Kernel;
    if constexpr (impl::warp_mma_runs<Exec>) {  // (never built elsewhere)
      // the dense products beside the alpha-beta kernel, each launch on its own instance once y is scaled
      for (std::size_t l = 0; concurrent_ && l < side_.size(); ++l) {
        side_[l].follow(exec_);
        impl::gathered_gemm(side_[l].get(), gemm_, gemm_launches_[l], gemm_launches_[l + 1] - gemm_launches_[l], alpha,
                            x, y, true);
      }
    }
    if (gemm_same_spin_ && !d_.alpha_beta) {
      // (the same-spin terms alone: nothing for the alpha-beta kernel to add)
    } else if (kernel_ == K::tiles) {
      launch_teams(impl::FactoredTileKernel<Exec, XView, YView>{d_, x, y, alpha, beta, task_ia_, task_first_, task_end_,
                                                                adds, 0, impl::host_simd::avx512_available()});
    } else if (kernel_ == K::mma) {
      launch_teams(impl::FactoredMmaKernel<Exec, XView, YView>{d_, x, y, alpha, beta, task_ia_, task_first_, task_end_,
                                                               adds, 0});
    } else if (kernel_ == K::scatter) {
      if (d_.batch == 16) {
        launch_teams(impl::FactoredScatterKernel<Exec, XView, YView, 16, false>{
            d_, x, y, alpha, beta, task_ia_, task_first_, task_end_, adds, 0, ys_rows_});
      } else if (lists_) {
        launch_teams(impl::FactoredScatterKernel<Exec, XView, YView, 8, true>{d_, x, y, alpha, beta, task_ia_,
                                                                              task_first_, task_end_, adds, 0});
      } else {
        launch_teams(impl::FactoredScatterKernel<Exec, XView, YView, 8, false>{
            d_, x, y, alpha, beta, task_ia_, task_first_, task_end_, adds, 0, ys_rows_});
      }
    } else if (teams_ && d_.batch == 2) {
      launch_teams(impl::FactoredTeamKernel<Exec, XView, YView, 2>{d_, x, y, alpha, beta, task_ia_, task_first_,
                                                                   task_end_, slots_, 0});
    } else if (teams_) {
      launch_teams(impl::FactoredTeamKernel<Exec, XView, YView, impl::factored_batch>{
          d_, x, y, alpha, beta, task_ia_, task_first_, task_end_, slots_, 0});
    } else {
      Kokkos::parallel_for("cispmv::ci::factored",
                           Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>>(exec_, 0, na_),
                           impl::FactoredRowKernel<memory_space, XView, YView>{d_, x, y, alpha, beta});
    }
    if constexpr (impl::warp_mma_runs<Exec>) {  // (never built elsewhere)
      // H_alpha (x) 1, then 1 (x) H_beta: their outputs overlap, so one launch after the other (or, concurrent, the
      // caller's later work waits for each)
      for (std::size_t l = 0; gemm_same_spin_ && !concurrent_ && l + 1 < gemm_launches_.size(); ++l) {
        impl::gathered_gemm(exec_, gemm_, gemm_launches_[l], gemm_launches_[l + 1] - gemm_launches_[l], alpha, x, y);
      }
    }
  }

  // a team kernel f (FactoredTeamKernel, FactoredScatterKernel, FactoredMmaKernel or FactoredTileKernel: its
  // Policy, scratch_bytes and level) with
  // a team per task, in level-0 scratch where it fits, else level 1
  template <class F>
  void launch_teams(F f) const {
    const std::size_t scratch = f.team_scratch_bytes(d_);
    typename F::Policy policy(exec_, static_cast<int>(task_ia_.extent(0)), team_size_);
    f.level = scratch <= static_cast<std::size_t>(F::Policy::scratch_size_max(0)) ? 0 : 1;
    if (f.level != 0 && ys_rows_ > 1) {  // (the constructor takes copies only where they fit level 0)
      throw std::logic_error("cispmv::ci::FactoredHamiltonian: the row's copies do not fit level-0 scratch");
    }
    // (Kokkos' own launch, not impl::light_launch: a functor passed as the kernel's argument has no address, and the
    // same-spin pass takes FactoredData by reference, so each thread copied the 1 KB functor to its stack: s33-a,
    // H200, 1,416 bytes of stack, the frozen core's alpha-beta sum 0.161 -> 0.214 ms. Through Kokkos' constant-memory
    // buffer the launch waits on the host for the previous kernel launched through that buffer, on any stream.)
    Kokkos::parallel_for("cispmv::ci::factored", policy.set_scratch_size(f.level, Kokkos::PerTeam(scratch)), f);
  }
  // y = beta y (0 where beta is 0), before teams add their parts of a row into it
  template <class YView>
  void scale(double beta, const YView& y) const {
    Kokkos::parallel_for("cispmv::ci::factored_scale",
                         Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec_, 0, rows_),
                         impl::FactoredScale<YView>{y, beta});
  }

  // the estimated work of part k of p of alpha string a's team (FactoredOptions::TaskOrder): the alpha-beta sum's
  // multiply-adds by position (scatter: the pairs of each of its batches' class times the batch's positions, weighed by
  // the replacements its walk takes; mma and tiles: a unit's pairs times its k-steps times its positions, mma's parts
  // splitting each unit's positions), and its share of the string's positions, which it writes and, without the dense
  // products, whose same-spin terms it forms
  double task_work(const impl::FactoredHost& h, int a, int k, int p, FactoredOptions::Kernel kernel) const {
    const auto i = static_cast<std::size_t>(a);
    double w = 0.0;
    if (d_.alpha_beta && kernel == FactoredOptions::Kernel::scatter) {
      const int B = h.batch;
      for (std::int64_t b = h.ab_ptr[i] + k; b < h.ab_ptr[i + 1]; b += p) {
        const auto c = static_cast<std::size_t>(h.ab_class[static_cast<std::size_t>(b)]);
        // its steps walk the replacements up to the last live one, in pairs (FactoredScatterKernel::walk_upto): a step
        // is the table's load and the add (~3 shared-memory wavefronts) and a broadcast of each two integrals
        const int walked = h.ab_walked[static_cast<std::size_t>(b)];
        w += static_cast<double>(h.cls_ptr[c + 1] - h.cls_ptr[c]) * h.ab_len[static_cast<std::size_t>(b)] *
             (3.0 + walked / 2.0) / (3.0 + B / 2.0);
      }
    } else if (d_.alpha_beta) {
      const bool mma = kernel == FactoredOptions::Kernel::mma;
      for (std::int64_t u = h.mu_ptr[i] + (mma ? 0 : k); u < h.mu_ptr[i + 1]; u += mma ? 1 : p) {
        const auto v = static_cast<std::size_t>(u);
        w += static_cast<double>(h.mu_pairs[v]) * h.mu_ksteps[v] * h.mu_len[v] / (mma ? p : 1);
      }
    }
    const std::int64_t len = h.a_hi[i] - h.a_lo[i];
    const double positions = static_cast<double>(len * (k + 1) / p - len * k / p);
    // same-spin terms a position: its beta string's H_beta entries and the string's H_alpha entries (their mean)
    const double same_spin = d_.same_spin ? static_cast<double>(h.bb_col.size()) / std::max<std::int64_t>(1, h.rows) +
                                                static_cast<double>(h.aa_ptr[i + 1] - h.aa_ptr[i])
                                          : 0.0;
    return w + positions * (1.0 + same_spin);
  }

  static std::size_t vector_bytes(const impl::FactoredHost& h) {
    auto b = [](const auto& v) { return v.size() * sizeof(v[0]); };
    return b(h.a_rowbase) + b(h.a_lo) + b(h.a_hi) + b(h.q_rank) + b(h.q_position) + b(h.q_block_end) + b(h.aa_ptr) +
           b(h.aa_col) + b(h.aa_val) + b(h.bb_ptr) + b(h.bb_count) + b(h.bb_col) + b(h.bb_val) + b(h.be_ptr) +
           b(h.be_count) + b(h.be_data) + b(h.ab_ptr) + b(h.ab_class) + b(h.ab_ja) + b(h.ab_pair) + b(h.ab_sign) +
           b(h.ab_lo) + b(h.ab_len) + b(h.ab_walked) + b(h.eri) + b(h.cls_ptr) + b(h.cls_pair) + b(h.pair_slot) +
           b(h.table) + b(h.mu_ptr) + b(h.mu_batch) + b(h.mu_ksteps) + b(h.mu_pair) + b(h.mu_pairs) + b(h.mu_lo) +
           b(h.mu_len);
  }

  Exec exec_;
  impl::FactoredData<memory_space> d_;
  impl::GatheredGemmData<memory_space> gemm_;
  std::vector<std::int32_t> gemm_launches_;  // the dense products' launches (GatheredGemmHost::launch_ptr)
  bool gemm_same_spin_ = false;
  bool concurrent_ = false;                     // the dense products beside the alpha-beta kernel
  std::vector<impl::SideInstance<Exec>> side_;  // their instances, one a launch (concurrent_)
  double same_spin_flops_ = 0.0;
  Kokkos::View<std::int32_t*, memory_space> task_ia_, task_first_, task_end_;
  std::int64_t rows_ = 0;
  std::size_t terms_ = 0, bytes_ = 0;
  bool symmetry_ = false;
  FactoredOptions::Kernel kernel_ = FactoredOptions::Kernel::rows;
  bool teams_ = false;
  bool lists_ = false;
  int team_size_ = 1;
  int slots_ = 1;
  int ys_rows_ = 1;                // the scatter kernel's copies of a string's row (FactoredOptions::RowCopies)
  bool largest_first_ = false;     // the teams' order (FactoredOptions::TaskOrder)
  std::vector<double> team_work_;  // their estimated work, in that order
  int na_ = 0;
};

}  // namespace cispmv::ci
