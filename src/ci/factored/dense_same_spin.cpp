// The factored CI Hamiltonian's same-spin terms as dense products (FactoredHost::gemm, the `gemm` same-spin pass):
// the dense blocks of H_alpha and H_beta by irrep, and the groups and segments of gathered_gemm that multiply them
// with the rows and columns of a CI vector. Built from the lists factor_hamiltonian made.
#include "cispmv/ci/factored.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cispmv::impl {

namespace {

// The dense blocks of the string Hamiltonians, one per set of strings (sorted ids of one spin), each built once:
// rows and columns in the set's order, in g.mat. Refuses (gemm_why) a block past factored_gemm_max_bytes.
class DenseBlocks {
 public:
  explicit DenseBlocks(FactoredHost& h) : h_(h), g_(h.gemm) {}

  // Offset of the block of `set` of spin 0 (H_alpha, ids) or 1 (H_beta, positions) in g.mat; -1 when too large.
  // nonzeros(): its stored entries.
  std::int64_t of(int spin, const std::vector<std::int32_t>& set) {
    const auto key = std::make_pair(spin, set);
    if (const auto it = done_.find(key); it != done_.end()) {
      nonzeros_ = it->second.second;
      return it->second.first;
    }
    const std::size_t n = set.size();
    if (static_cast<double>(g_.mat.size() + n * n) * 8.0 > factored_gemm_max_bytes) {
      h_.gemm_why = "its dense blocks would take more than " +
                    std::to_string(static_cast<long long>(factored_gemm_max_bytes / (1024 * 1024))) + " MiB";
      return -1;
    }
    const auto at = static_cast<std::int64_t>(g_.mat.size());
    g_.mat.resize(g_.mat.size() + n * n, 0.0);
    std::unordered_map<std::int32_t, std::size_t> slot;
    for (std::size_t i = 0; i < n; ++i) slot.emplace(set[i], i);
    nonzeros_ = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      row(spin, set[i], [&](std::int32_t col, double v) {
        const auto it = slot.find(col);
        if (it == slot.end()) return;
        g_.mat[static_cast<std::size_t>(at) + i * n + it->second] = v;
        nonzeros_ += 1.0;
      });
    }
    done_.emplace(key, std::make_pair(at, nonzeros_));
    return at;
  }
  double nonzeros() const { return nonzeros_; }

 private:
  // f(column, value) for each stored entry of H_alpha's row of alpha id a / H_beta's row of position a
  template <class F>
  void row(int spin, std::int32_t a, F&& f) const {
    if (spin == 0) {
      for (auto e = static_cast<std::size_t>(h_.aa_ptr[static_cast<std::size_t>(a)]);
           e < static_cast<std::size_t>(h_.aa_ptr[static_cast<std::size_t>(a) + 1]); ++e) {
        f(h_.aa_col[e], h_.aa_val[e]);
      }
      return;
    }
    const std::int64_t first = h_.bb_ptr[static_cast<std::size_t>(a) / 32];
    for (int k = 0; k < h_.bb_count[static_cast<std::size_t>(a)]; ++k) {
      const auto at = static_cast<std::size_t>(first + 32 * static_cast<std::int64_t>(k) + (a & 31));
      f(h_.bb_col[at], h_.bb_val[at]);
    }
  }

  FactoredHost& h_;
  GatheredGemmHost& g_;
  std::map<std::pair<int, std::vector<std::int32_t>>, std::pair<std::int64_t, double>> done_;  // offset, nonzeros
  double nonzeros_ = 0.0;
};

std::int64_t rowbase(const FactoredHost& h, std::int32_t a, int kb) {
  const std::int64_t r =
      h.a_rowbase[static_cast<std::size_t>(a) * static_cast<std::size_t>(h.nkb) + static_cast<std::size_t>(kb)];
  if (r < 0) throw std::logic_error("cispmv::ci::FactoredHamiltonian: a string pair of a block is off the space");
  return r;
}

std::vector<std::int64_t> iota_from(std::int64_t first, int count) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(count));
  std::iota(v.begin(), v.end(), first);
  return v;
}

// H_alpha (x) 1: each block of beta positions (one rank, and irrep in a space of one irrep) against the alpha
// strings that pair with it, by class: y(a, q) += sum_a' H_alpha(a, a') x(a', q). False where a block is too large.
bool alpha_products(FactoredHost& h, DenseBlocks& dense, const std::vector<std::uint8_t>& a_class) {
  GatheredGemmHost& g = h.gemm;
  for (int q0 = 0; q0 < h.nb;) {
    const int q1 = h.q_block_end[static_cast<std::size_t>(q0)], kb = h.q_rank[static_cast<std::size_t>(q0)];
    std::map<int, std::vector<std::int32_t>> sets;
    for (std::int32_t a = 0; a < h.na; ++a) {
      if (h.a_lo[static_cast<std::size_t>(a)] <= q0 && q0 < h.a_hi[static_cast<std::size_t>(a)]) {
        sets[a_class[static_cast<std::size_t>(a)]].push_back(a);
      }
    }
    const std::int64_t cols = g.add_index(iota_from(h.q_position[static_cast<std::size_t>(q0)], q1 - q0));
    for (const auto& [c, set] : sets) {
      const std::int64_t at = dense.of(0, set);
      if (at < 0) return false;
      const auto m = static_cast<int>(set.size());
      std::vector<std::int64_t> rows;
      for (const std::int32_t a : set) rows.push_back(rowbase(h, a, kb));
      const std::int64_t ru = g.add_index(rows);
      g.add_group(m, q1 - q0, ru, cols);
      g.add_segment(at, m, m, ru, cols, false);
      h.same_spin_terms += dense.nonzeros() * (q1 - q0);
    }
    q0 = q1;
  }
  g.end_launch();
  return true;
}

// 1 (x) H_beta: the alpha strings of one beta range against the dense blocks of H_beta over the range's positions of
// each class: y(a, q) += sum_q' H_beta(q, q') x(a, q'), in groups of the output's blocks (one rank), a segment per
// block of q' (the rows of x of another rank lie elsewhere). False where a block is too large.
bool beta_products(FactoredHost& h, DenseBlocks& dense, const std::vector<std::uint8_t>& q_class) {
  GatheredGemmHost& g = h.gemm;
  std::map<std::pair<int, int>, std::vector<std::int32_t>> by_range;
  for (std::int32_t a = 0; a < h.na; ++a) {
    by_range[{h.a_lo[static_cast<std::size_t>(a)], h.a_hi[static_cast<std::size_t>(a)]}].push_back(a);
  }
  for (const auto& [range, alphas] : by_range) {
    const auto [lo, hi] = range;
    std::vector<std::pair<int, int>> blocks;  // [q0, q1) of one rank
    for (int q0 = lo; q0 < hi; q0 = h.q_block_end[static_cast<std::size_t>(q0)]) {
      blocks.emplace_back(q0, std::min(hi, h.q_block_end[static_cast<std::size_t>(q0)]));
    }
    std::map<int, std::int64_t> rows_at;  // per rank: the alpha strings' row bases
    for (const auto& [q0, q1] : blocks) {
      const int kb = h.q_rank[static_cast<std::size_t>(q0)];
      if (rows_at.count(kb) != 0) continue;
      std::vector<std::int64_t> rows;
      for (const std::int32_t a : alphas) rows.push_back(rowbase(h, a, kb));
      rows_at[kb] = g.add_index(rows);
    }
    std::map<int, std::vector<std::int32_t>> sets;  // per class: the range's positions
    for (int q = lo; q < hi; ++q) sets[q_class[static_cast<std::size_t>(q)]].push_back(q);
    for (const auto& [c, set] : sets) {
      const std::int64_t at = dense.of(1, set);
      if (at < 0) return false;
      const auto ld = static_cast<int>(set.size());
      // the set's positions in each block: a run of the set (both in order of q)
      std::vector<std::pair<int, int>> runs;
      std::vector<std::int64_t> offsets;
      for (const auto& [q0, q1] : blocks) {
        const auto first = std::lower_bound(set.begin(), set.end(), q0) - set.begin();
        const auto last = std::lower_bound(set.begin(), set.end(), q1) - set.begin();
        runs.emplace_back(static_cast<int>(first), static_cast<int>(last));
        std::vector<std::int64_t> pos;
        for (auto i = first; i < last; ++i) {
          pos.push_back(h.q_position[static_cast<std::size_t>(set[static_cast<std::size_t>(i)])]);
        }
        offsets.push_back(g.add_index(pos));
      }
      for (std::size_t bo = 0; bo < blocks.size(); ++bo) {
        const auto [r0, r1] = runs[bo];
        if (r0 == r1) continue;
        const int ko = h.q_rank[static_cast<std::size_t>(blocks[bo].first)];
        g.add_group(r1 - r0, static_cast<int>(alphas.size()), offsets[bo], rows_at[ko]);
        for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
          const auto [c0, c1] = runs[bi];
          double used = 0.0;  // the sub-block's nonzeros (none: ranks more than 2 apart)
          for (int i = r0; i < r1; ++i) {
            for (int k = c0; k < c1; ++k) {
              used += g.mat[static_cast<std::size_t>(at) + static_cast<std::size_t>(i) * ld + k] != 0.0 ? 1.0 : 0.0;
            }
          }
          if (used == 0.0) continue;
          const int ki = h.q_rank[static_cast<std::size_t>(blocks[bi].first)];
          g.add_segment(at + static_cast<std::int64_t>(r0) * ld + c0, ld, c1 - c0, offsets[bi], rows_at[ki], true);
          h.same_spin_terms += used * static_cast<double>(alphas.size());
        }
      }
    }
  }
  g.end_launch();
  return true;
}

}  // namespace

void same_spin_products(FactoredHost& h, const std::vector<std::uint8_t>& a_class,
                        const std::vector<std::uint8_t>& q_class) {
  h.gemm = GatheredGemmHost{};
  h.gemm_built = false;
  h.same_spin_terms = 0.0;
  DenseBlocks dense(h);
  h.gemm_built = alpha_products(h, dense, a_class) && beta_products(h, dense, q_class);
}

}  // namespace cispmv::impl
