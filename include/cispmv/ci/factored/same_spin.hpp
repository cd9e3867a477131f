#pragma once
/// \file ci/factored/same_spin.hpp
/// The end every team kernel of the factored Hamiltonian shares: once a team's alpha-beta terms for its alpha
/// string are in its row in team scratch, the same-spin terms 1 (x) H_beta and H_alpha (x) 1 at the team's
/// positions from the lists (unless the dense `gemm` pass forms them), and the row written into y (or added into
/// it atomically where several teams share the string). Also the scaling of y that such adds need first, and the
/// singlet's y = T + T^T.

#include <Kokkos_Core.hpp>

#include "cispmv/ci/factored/strings.hpp"

#include <cstdint>

namespace cispmv::impl {

/// y = beta y, 0 where beta is 0 (NaN in y overwritten).
template <class Y>
struct FactoredScale {
  Y y;
  double beta;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { y(i) = beta == 0.0 ? 0.0 : beta * y(i); }
};

/// FactoredOptions::singlet: y = beta y + alpha (T + T^T) over alpha string ia's row, T the half product (T(i) +
/// T(i^T) is the same sum for a determinant and its transpose, so that y stays exactly symmetric).
template <class Mem, class T, class Y>
struct FactoredSymmetrize {
  FactoredData<Mem> d;
  FactoredSinglet<Mem> s;
  T t;
  Y y;
  double alpha, beta;
  KOKKOS_INLINE_FUNCTION void operator()(const int ia) const {
    for (int q = d.a_lo(ia); q < d.a_hi(ia); ++q) {
      const std::int64_t i = d.index(ia, q);
      const double v = alpha * (t(i) + t(s.transposed(d, ia, q)));
      y(i) = beta == 0.0 ? v : beta * y(i) + v;
    }
  }
};

/// The end of a team's product for alpha string ia, once its alpha-beta terms are in ys (its row of the
/// result in team scratch, positions lo_a.. of ia's beta range) and a barrier has passed: 1 (x) H_beta
/// (x's row ia staged in `row`; each thread's list entries read eight at a time) and H_alpha (x) 1 (rows
/// ja of x, coalesced: in teams two positions and four entries at a time, in a team of one thread entry by
/// entry along the rows) at this part's positions, then the
/// row added into y (atomically where `accumulate`: parts > 1, y scaled by beta beforehand) or written as
/// y = beta y + alpha row.
// (in CUDA builds a call of its own, so that on the GPU its registers are allocated apart from the alpha-beta walk it
// follows: H200, with the walk's loads and adds in shared memory inlined before it, the same-spin terms alone took
// 0.890 ms of the all-electron product, against 0.812 with the call)
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
    // x are in flight where a walk of one position's entries waited on each entry's chain of loads (H200, ncu:
    // the same-spin terms alone took 0.89 ms of the all-electron product's 1.95, 69 % of their stalls on
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

}  // namespace cispmv::impl
