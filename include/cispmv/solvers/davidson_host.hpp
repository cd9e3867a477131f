#pragma once
/// \file solvers/davidson_host.hpp
/// The Davidson's bookkeeping on the host (solvers/davidson.hpp), apart from its vectors: the order of the Ritz pairs
/// it tracks (ritz_order), a restart's basis in the coefficients of the current one (restart_basis: the candidates
/// in order, orthonormalised, those already in the span dropped) and the projected matrix in it (restart_projection:
/// Q^T G Q), and the groups of new basis vectors that one product takes (disjoint_groups). The new basis itself, V Q
/// and AV Q, is formed on the execution space (combine_in_place, solvers/davidson_kernels.hpp).

#include "cispmv/solvers/symmetric_eigen.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace cispmv::solvers::impl {

/// A vector of the projected space (its coefficients in the current basis) offered to a restart, and its block of
/// rows (DavidsonOptions::row_blocks; -1: none or several).
struct RestartCandidate {
  std::vector<double> coefficients;
  int block = -1;
};

/// The restart's coefficients Q: the candidates in order, each orthogonalised against those kept before it (classical
/// Gram-Schmidt, twice) and dropped where less than 1e-8 of it is left (the previous Ritz vector of a converged pair
/// is its current one), until `most` are kept. Candidates of distinct blocks are exactly orthogonal (their
/// coefficients lie on distinct basis vectors), so a kept vector stays in its block.
inline std::vector<RestartCandidate> restart_basis(std::vector<RestartCandidate> candidates, int most) {
  std::vector<RestartCandidate> kept;
  for (RestartCandidate& c : candidates) {
    if (static_cast<int>(kept.size()) == most) break;
    std::vector<double>& v = c.coefficients;
    for (int pass = 0; pass < 2; ++pass) {
      for (const RestartCandidate& u : kept) {
        double d = 0.0;
        for (std::size_t j = 0; j < v.size(); ++j) d += u.coefficients[j] * v[j];
        for (std::size_t j = 0; j < v.size(); ++j) v[j] -= d * u.coefficients[j];
      }
    }
    double norm = 0.0;
    for (const double x : v) norm += x * x;
    norm = std::sqrt(norm);
    if (norm < 1e-8) continue;
    for (double& x : v) x /= norm;
    kept.push_back(std::move(c));
  }
  return kept;
}

/// G <- Q^T G Q (symmetrised; its other entries zero), for G of m x m row-major with leading dimension ld (m: the
/// length of Q's vectors), q = Q.size() <= m.
inline void restart_projection(std::vector<double>& G, std::size_t ld, const std::vector<RestartCandidate>& Q) {
  const std::size_t q = Q.size(), m = q > 0 ? Q[0].coefficients.size() : 0;
  std::vector<double> GQ(m * q, 0.0);  // G Q, row-major m x q
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < m; ++j) {
      for (std::size_t c = 0; c < q; ++c) GQ[i * q + c] += G[i * ld + j] * Q[c].coefficients[j];
    }
  }
  std::vector<double> P(q * q, 0.0);
  for (std::size_t a = 0; a < q; ++a) {
    for (std::size_t b = 0; b < q; ++b) {
      for (std::size_t i = 0; i < m; ++i) P[a * q + b] += Q[a].coefficients[i] * GQ[i * q + b];
    }
  }
  std::fill(G.begin(), G.end(), 0.0);
  for (std::size_t a = 0; a < q; ++a) {
    for (std::size_t b = 0; b < q; ++b) G[a * ld + b] = 0.5 * (P[a * q + b] + P[b * q + a]);
  }
}

/// The Ritz pairs a Davidson iteration tracks (`pairs`, indices into eig), in order: the k lowest, then, with blocks
/// (guarded), each block's guard (its lowest pair not among them): `active` of them; then the lowest others up to
/// `keep` in all. `blocks`: each one's block, that of its largest coefficient (each basis vector lies in one block,
/// col_block, and G couples no two blocks, so a Ritz vector does not mix them); -1 without blocks.
struct RitzOrder {
  std::vector<int> pairs;
  std::vector<int> blocks;
  int active = 0;
};
inline RitzOrder ritz_order(const SymmetricEigen& eig, int m, int k, const std::vector<int>& col_block, int num_blocks,
                            bool guarded, int keep) {
  std::vector<int> block(static_cast<std::size_t>(m), -1);
  for (int i = 0; i < m && guarded; ++i) {
    int best = 0;
    for (int j = 1; j < m; ++j) {
      if (std::abs(eig.vectors[static_cast<std::size_t>(i) * m + j]) >
          std::abs(eig.vectors[static_cast<std::size_t>(i) * m + best]))
        best = j;
    }
    block[static_cast<std::size_t>(i)] = col_block[static_cast<std::size_t>(best)];
  }
  RitzOrder r;
  for (int i = 0; i < std::min(k, m); ++i) r.pairs.push_back(i);
  for (int b = 0; b < (guarded ? num_blocks : 0); ++b) {
    for (int i = k; i < m; ++i) {
      if (block[static_cast<std::size_t>(i)] == b) {
        r.pairs.push_back(i);
        break;
      }
    }
  }
  r.active = static_cast<int>(r.pairs.size());
  const int count = std::min(m, std::max(r.active, keep));
  for (int i = 0; i < m && static_cast<int>(r.pairs.size()) < count; ++i) {
    if (std::find(r.pairs.begin(), r.pairs.end(), i) == r.pairs.end()) r.pairs.push_back(i);
  }
  for (const int i : r.pairs) r.blocks.push_back(block[static_cast<std::size_t>(i)]);
  return r;
}

/// Columns [first, m) in groups of at most one column of each block (col_block: each column's, -1 none), in order;
/// without blocks (guarded false) one column a group.
inline std::vector<std::vector<int>> disjoint_groups(int first, int m, const std::vector<int>& col_block,
                                                     bool guarded) {
  std::vector<std::vector<int>> groups;
  std::vector<std::uint64_t> taken;  // per group: the blocks it holds
  for (int j = first; j < m; ++j) {
    const int b = col_block[static_cast<std::size_t>(j)];
    std::size_t g = 0;
    if (guarded && b >= 0) {
      while (g < groups.size() && (taken[g] >> b & 1u)) ++g;
    } else {
      g = groups.size();
    }
    if (g == groups.size()) {
      groups.emplace_back();
      taken.push_back(0);
    }
    groups[g].push_back(j);
    if (b >= 0) taken[g] |= std::uint64_t(1) << b;
  }
  return groups;
}

}  // namespace cispmv::solvers::impl
