#pragma once
/// \file ci/factored/policy.hpp
/// Every automatic choice of the factored Hamiltonian, made once when it is built, from the backend, the space's
/// string tables and the internal switches (FactoredTuning): which alpha-beta kernel and batch (before the tables
/// are built: choose_factored_layout), and then whether the same-spin terms are dense products, how many teams an
/// alpha string takes, whether a warp adds into its own copy of the row, and the teams' order
/// (use_same_spin_gemm, choose_parts, choose_row_copies, plan_factored_tasks). The numbers behind each rule are
/// measurements on H100 and H200 GPUs and on 2- and 16-core hosts (docs/performance.md, "The factored operator").

#include <Kokkos_Core.hpp>

#include "cispmv/ci/factored/options.hpp"
#include "cispmv/ci/factored/scatter_kernel.hpp"
#include "cispmv/ci/factored/strings.hpp"
#include "cispmv/ci/factored/tile_kernel.hpp"
#include "cispmv/ci/factored/warp_mma.hpp"
#include "cispmv/impl/backend.hpp"
#include "cispmv/impl/kernels/host_simd.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::impl {

/// What the string tables are built for: chosen before factor_hamiltonian runs.
struct FactoredLayout {
  FactoredTuning::Kernel kernel = FactoredTuning::Kernel::scatter;  ///< never `automatic`
  bool lists = false;                                               ///< the scatter kernel's lists' walk
  int batch = 8;                                                    ///< alpha replacements per batch
  FactoredTable table = FactoredTable::none;                        ///< the scatter kernel's table, or none
  bool want_gemm = false;  ///< build the same-spin terms' dense products (used where use_same_spin_gemm says)
};

/// The alpha-beta kernel and its batch for Exec: on GPUs the scatter kernel's table walk at batch 16; on CPUs with
/// AVX-512 or AVX2 + FMA the tile kernel, elsewhere (or where the switches ask for the scatter kernel's batch or
/// lists) its lists' walk at batch 8. Measured on 2 cores of a Zen 4 (AVX-512): the frozen-core H2O/6-31G product
/// 23.9 ms with the tiles against 41.3 with the lists' walk, the all-electron one 0.267 s against 0.517 (the tiles in
/// portable C++: 49.6 ms and 0.534 s); on 2 cores of an EPYC with AVX2 alone, the tiles in AVX2: 72.4 ms against
/// 83.4, 0.722 s against 0.907. Throws std::invalid_argument on switches that do not go together.
template <class Exec>
FactoredLayout choose_factored_layout(const FactoredTuning& t) {
  using K = FactoredTuning::Kernel;
  const std::string who = "cispmv::ci::FactoredHamiltonian: ";
  const bool gpu = is_gpu_space_v<Exec>;
  const bool auto_tiles = !gpu && host_tile_isa() != TileIsa::portable && !t.scatter_lists &&
                          (t.batch == 0 || t.batch == 8) && t.team_size <= 1;
  FactoredLayout l;
  l.kernel = t.kernel != K::automatic ? t.kernel : auto_tiles ? K::tiles : K::scatter;
  const bool tiles = l.kernel == K::tiles;
  l.lists = t.scatter_lists || (t.kernel == K::automatic && !gpu && !auto_tiles && (t.batch == 0 || t.batch == 8));
  l.batch = t.batch > 0 ? t.batch : (!tiles && !l.lists && gpu) ? 16 : 8;
  const bool batch_ok = tiles ? l.batch == 8 : l.batch == 8 || l.batch == 16;
  if (t.batch < 0 || !batch_ok) {
    throw std::invalid_argument(who + "batch " + std::to_string(t.batch) + " (0; scatter 8 or 16, tiles 8)");
  }
  if (tiles && t.team_size > 1) {
    throw std::invalid_argument(who + "team size " + std::to_string(t.team_size) +
                                " (the tile kernel's teams are one thread: 0 or 1)");
  }
  if (l.lists && (tiles || l.batch != 8))
    throw std::invalid_argument(who + "scatter_lists needs the scatter kernel at batch 8");
  if (t.team_size < 0 || t.team_size > 256 || t.parts < 0) {
    throw std::invalid_argument(who + "team size " + std::to_string(t.team_size) + " (0 or 1..256) or parts " +
                                std::to_string(t.parts) + " (0 or more)");
  }
  using Pass = FactoredTuning::SameSpinPass;
  if (t.same_spin_pass == Pass::gemm && !warp_mma_runs<Exec>) {
    throw std::invalid_argument(who + "the same-spin pass `gemm` runs on CUDA GPUs and on CPUs, not on this backend");
  }
  l.want_gemm = warp_mma_runs<Exec> && t.terms != FactoredTuning::Terms::alpha_beta &&
                (t.same_spin_pass == Pass::gemm || (t.same_spin_pass == Pass::automatic && gpu));
  l.table = !tiles && !l.lists ? FactoredTable::rows : FactoredTable::none;
  return l;
}

/// How products launch: chosen once the tables are built.
struct FactoredLaunch {
  bool gemm = false;           ///< the same-spin terms as dense products
  bool concurrent = false;     ///< those products beside the alpha-beta kernel
  int team_size = 1;           ///< threads a team of the alpha-beta kernel
  int row_copies = 1;          ///< copies of a string's row the scatter kernel adds into (one a warp, or 1)
  int slots = 1;               ///< the most teams an alpha string takes
  bool largest_first = false;  ///< the teams sorted by their estimated work
  /// per team, in launch order: its alpha string, its part, its string's parts, its estimated work
  std::vector<std::int32_t> task_ia, task_part, task_parts;
  std::vector<double> task_work;
};

/// Whether the same-spin terms are dense products on GPUs: where their dense work is at most 16 times the lists'
/// terms (the all-electron H2O/6-31G's blocks by irrep: ~4 times), and, unless they run beside the alpha-beta
/// kernel, each launch has tiles enough for 3 teams an SM (2,048 threads an SM, as compute capability 8.0 and 9.0
/// have). Measured on an H200: the all-electron space's launches of 506 and 756 tiles, same-spin terms 0.358 ms
/// against the lists' 0.770; the frozen core's (its smaller launch 88 tiles, run alone) 0.113 against 0.105.
template <class Exec>
bool use_same_spin_gemm(const Exec& exec, const FactoredHost& h, const FactoredTuning& t, bool concurrent) {
  if (!h.gemm_built) return false;
  if (t.same_spin_pass == FactoredTuning::SameSpinPass::gemm) return true;
  const double gpu_teams = static_cast<double>(exec.concurrency()) / 2048.0 * 3.0;
  return h.gemm.flops <= 16.0 * 2.0 * std::max(1.0, h.same_spin_terms) &&
         (concurrent || GatheredGemmHost::smallest_launch(h.gemm.launch_ptr) >= gpu_teams);
}

/// Teams an alpha string takes (parts), where its beta range is long: enough teams where the alpha strings are few
/// (4), else as few as fill the GPU without a long tail of teams (each part adds its row into y atomically, y scaled
/// first). H200 and H100, ms: the all-electron H2O/6-31G's 1,287 strings (ranges of 1,287) 1.65 with 2 parts, 1.68
/// with 4, 1.79 with 1; its frozen core's 495 (ranges of 495) 0.248 with 1, 0.252 with 2, 0.253 with 4. Where the
/// teams form no same-spin terms (the dense products, or the alpha-beta sum alone), 2 for the frozen core too (0.179
/// against 0.187), and 2 for short ranges (under 256 on average) with fewer than 1,024 strings (its A1 space: 495
/// teams, less than a wave; 0.069-0.078 against 0.077-0.083). CPUs and the tile kernel: 1.
template <class Exec>
int choose_parts(const FactoredHost& h, const FactoredLayout& l, const FactoredTuning& t, bool same_spin_in_teams) {
  if (t.parts > 0) return t.parts;
  if (l.kernel == FactoredTuning::Kernel::tiles || !is_gpu_space_v<Exec>) return 1;
  const double mean_range = static_cast<double>(h.rows) / std::max(1, h.na);
  if (mean_range >= 256) return h.na >= 1024 || (h.na >= 384 && !same_spin_in_teams) ? 2 : h.na >= 384 ? 1 : 4;
  return h.na < 1024 && !same_spin_in_teams ? 2 : 1;
}

/// Copies of an alpha string's row the scatter kernel's table walk adds into on CUDA (level-0 scratch, teams of
/// whole warps): one a warp where they keep a team's scratch within 32 KB (the frozen-core H2O/6-31G's 4 copies of
/// 495 values; the all-electron one's 1,287 would take a team's share of an SM's shared memory from 6 teams an SM to
/// 3), else 1. Measured on an H100: the frozen core's alpha-beta sum 0.144-0.148 ms with copies against 0.161-0.167
/// with one row (the whole product on an H200: 0.151 against 0.166). Throws where per_warp is asked for and does not
/// fit.
template <class Exec>
int choose_row_copies(const FactoredData<typename Exec::memory_space>& d, const FactoredLayout& l, int team_size,
                      const FactoredTuning& t) {
  using RowOptions = FactoredTuning::RowCopies;
  if (l.kernel != FactoredTuning::Kernel::scatter || l.lists || !warp_mma_runs<Exec> || !is_gpu_space_v<Exec> ||
      t.row_copies == RowOptions::shared) {
    return 1;
  }
  using V = Kokkos::View<double*, typename Exec::memory_space>;
  using Wide = FactoredScatterKernel<Exec, V, V, 16, false>;
  const int copies = team_size % 32 == 0 ? team_size / 32 : 1;
  const std::size_t with = l.batch == 16 ? Wide::scratch_bytes(d, copies)
                                         : FactoredScatterKernel<Exec, V, V, 8, false>::scratch_bytes(d, copies);
  const auto most = static_cast<std::size_t>(Wide::Policy::scratch_size_max(0));
  const bool fits = copies > 1 && with <= most;
  if (t.row_copies == RowOptions::per_warp && !fits) {
    throw std::invalid_argument(
        "cispmv::ci::FactoredHamiltonian: row copies per warp need teams of 64 or more threads, whole warps (team "
        "size " +
        std::to_string(team_size) + "), and " + std::to_string(with) + " bytes of level-0 scratch (at most " +
        std::to_string(most) + ")");
  }
  return fits && (t.row_copies == RowOptions::per_warp || with <= 32 * 1024) ? copies : 1;
}

/// The estimated work of part k of p of alpha string a's team: the alpha-beta sum's multiply-adds by position
/// (scatter: the pairs of each of its batches' class times the batch's positions, weighed by the replacements its
/// walk takes; tiles: a unit's pairs times its k-steps times its positions), and its share of the string's
/// positions, which it writes and, without the dense products, whose same-spin terms it forms.
inline double factored_task_work(const FactoredHost& h, const FactoredLayout& l, int a, int k, int p, bool alpha_beta,
                                 bool same_spin_in_teams) {
  const auto i = static_cast<std::size_t>(a);
  double w = 0.0;
  if (alpha_beta && l.kernel == FactoredTuning::Kernel::scatter) {
    for (std::int64_t b = h.ab_ptr[i] + k; b < h.ab_ptr[i + 1]; b += p) {
      const auto u = static_cast<std::size_t>(b);
      const auto c = static_cast<std::size_t>(h.ab_class[u]);
      // a step walks the replacements up to the last live one, in pairs (FactoredScatterKernel::walk_upto): the
      // table's load and the add (~3 shared-memory wavefronts) and a broadcast of each two integrals
      w += static_cast<double>(h.cls_ptr[c + 1] - h.cls_ptr[c]) * h.ab_len[u] * (3.0 + h.ab_walked[u] / 2.0) /
           (3.0 + h.batch / 2.0);
    }
  } else if (alpha_beta) {
    for (std::int64_t u = h.mu_ptr[i] + k; u < h.mu_ptr[i + 1]; u += p) {
      const auto v = static_cast<std::size_t>(u);
      w += static_cast<double>(h.mu_pairs[v]) * h.mu_ksteps[v] * h.mu_len[v];
    }
  }
  const std::int64_t len = h.a_hi[i] - h.a_lo[i];
  const double positions = static_cast<double>(len * (k + 1) / p - len * k / p);
  // same-spin terms a position: its beta string's H_beta entries and the string's H_alpha entries (their mean)
  const double same_spin = same_spin_in_teams ? static_cast<double>(h.bb_col.size()) /
                                                        static_cast<double>(std::max<std::int64_t>(1, h.rows)) +
                                                    static_cast<double>(h.aa_ptr[i + 1] - h.aa_ptr[i])
                                              : 0.0;
  return w + positions * (1.0 + same_spin);
}

/// The teams of a launch: `parts` an alpha string (fewer where it has fewer batches or units), in string order or,
/// with largest_first, by their estimated work, the largest first (ties in string order): a GPU hands out a launch's
/// teams in order as its slots free, so the small teams fill the last partial wave instead of the large ones running
/// alone. Measured on an H100 (H200 alike): the frozen-core H2O/6-31G product 0.135-0.154 ms largest first against
/// 0.163-0.173 string by string, the all-electron one 1.02-1.03 against 1.10.
inline void plan_factored_tasks(const FactoredHost& h, const FactoredLayout& l, int parts, bool alpha_beta,
                                bool same_spin_in_teams, FactoredLaunch& launch) {
  const bool tiles = l.kernel == FactoredTuning::Kernel::tiles;
  std::vector<std::int32_t> ia, part, count;
  std::vector<double> work;
  for (int a = 0; a < h.na; ++a) {
    const auto i = static_cast<std::size_t>(a);
    const auto units = static_cast<int>(tiles ? h.mu_ptr[i + 1] - h.mu_ptr[i] : h.ab_ptr[i + 1] - h.ab_ptr[i]);
    const int p = std::max(1, std::min(parts, units));
    for (int k = 0; k < p; ++k) {
      ia.push_back(a);
      part.push_back(k);
      count.push_back(p);
      work.push_back(factored_task_work(h, l, a, k, p, alpha_beta, same_spin_in_teams));
    }
    launch.slots = std::max(launch.slots, p);
  }
  std::vector<std::size_t> order(ia.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (launch.largest_first) {
    std::stable_sort(order.begin(), order.end(), [&](std::size_t u, std::size_t v) { return work[u] > work[v]; });
  }
  for (const std::size_t o : order) {
    launch.task_ia.push_back(ia[o]);
    launch.task_part.push_back(part[o]);
    launch.task_parts.push_back(count[o]);
    launch.task_work.push_back(work[o]);
  }
}

}  // namespace cispmv::impl
