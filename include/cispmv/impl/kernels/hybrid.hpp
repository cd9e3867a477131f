#pragma once
// The hybrid ELL+CSR kernel: thread per row, and the paper's warp-per-row Algorithm 7.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/hybrid.hpp"
#include "cispmv/impl/kernels/common.hpp"

namespace cispmv::impl {

// ------------------------------------------------------------------------------ hybrid ELL + CSR
/// The paper's hybrid format. Thread per row: reference region then expansion region.
/// Vector per row (Algorithm 7): the row's lanes walk its reference-region slots (row-major, so
/// consecutive lanes read consecutive addresses), then its expansion-region CSR entries, each lane
/// accumulating both in registers; one ThreadVectorRange reduction (shuffles, no shared memory, no
/// atomics; the paper used two shared-memory trees) gives the row, and one lane writes y(row) once.
template <class Exec, class S, class O, class Off, class D, class R, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, HybridMatrix<S, O, Off, D, R>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, HybridMatrix<S, O, Off, D, R>, XView, YView, Beta> {
  using Base = SpmvFunctorBase<Exec, HybridMatrix<S, O, Off, D, R>, XView, YView, Beta>;
  using Base::Base;
  static constexpr bool has_vector_kernel = true;
  static constexpr bool unrolled = true;
  static constexpr bool prefers_vector_on_gpu = true;

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    S sum = 0;
    const O reference_end = this->A.reference_row_length(row);
    for (O k = 0; k < reference_end; ++k)
      sum += this->A.reference_values(row, k) * this->x(this->A.reference_col_idx(row, k));
    const Off expansion_end = this->A.expansion_row_ptr(row + 1);
    for (Off k = this->A.expansion_row_ptr(row); k < expansion_end; ++k) {
      sum += this->A.expansion_values(k) * this->x(this->A.expansion_col_idx(k));
    }
    this->update(row, sum);
  }

  static constexpr bool can_stage_x = true;
  using scratch_view = Kokkos::View<S*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  /// Copy x(0 .. reference_x_extent-1) into team scratch first (see SpmvOptions::stage_reference_x): the
  /// reference region of a CI matrix spans few columns, so every team reads them from shared memory.
  bool stage_x = false;

  /// Team scratch bytes of the staged x (0 when the reference region is empty: nothing to stage).
  static std::size_t scratch_bytes(const HybridMatrix<S, O, Off, D, R>& A) {
    return A.reference_x_extent > 0 ? scratch_view::shmem_size(A.reference_x_extent) : 0;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename Base::team_member& team) const {
    if (stage_x) {
      const scratch_view xs(team.team_scratch(0), this->A.reference_x_extent);
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, this->A.reference_x_extent),
                           [&](const O i) { xs(i) = this->x(i); });
      team.team_barrier();
      team_rows(team, xs);
    } else {
      team_rows(team, this->x);
    }
  }

  template <class RefX>
  KOKKOS_INLINE_FUNCTION void team_rows(const typename Base::team_member& team, const RefX& reference_x) const {
    this->for_team_rows(team, [&](const O row, S& sum) {
      const O reference_end = this->A.reference_row_length(row);
      const Off expansion_begin = this->A.expansion_row_ptr(row), expansion_end = this->A.expansion_row_ptr(row + 1);
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, this->vector_length),
          [&](const int lane, S& lsum) {
            lsum += strided_row_sum<Unroll>(O(0), reference_end, lane, this->vector_length, [&](const O k) {
              return load_once(this->A.reference_values(row, k)) *
                     reference_x(load_once(this->A.reference_col_idx(row, k)));
            });
            lsum +=
                strided_row_sum<Unroll>(expansion_begin, expansion_end, lane, this->vector_length, [&](const Off k) {
                  return load_once(this->A.expansion_values(k)) * this->x(load_once(this->A.expansion_col_idx(k)));
                });
          },
          sum);
    });
  }
};

/// The hybrid format, several vectors: thread per row, or Algorithm 7's vector per row with K partial
/// sums per lane (x is not staged: K columns of the reference part would rarely fit a team's scratch).
template <class Exec, class S, class O, class Off, class D, class R, class XView, class YView, int K>
struct SpmvBlockFunctor<Exec, HybridMatrix<S, O, Off, D, R>, XView, YView, K>
    : SpmvBlockFunctorBase<Exec, HybridMatrix<S, O, Off, D, R>, XView, YView, K> {
  using Base = SpmvBlockFunctorBase<Exec, HybridMatrix<S, O, Off, D, R>, XView, YView, K>;
  using Base::Base;
  static constexpr bool has_vector_kernel = true;

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    S sum[K];
    for (int j = 0; j < K; ++j) sum[j] = 0;
    partial(row, 0, 1, sum);
    this->update(row, sum);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename Base::team_member& team) const {
    this->for_team_rows(team,
                        [&](const O row, const int lane, S* part) { partial(row, lane, this->vector_length, part); });
  }

 private:
  // entries lane, lane + V, ... of the row's reference region, then of its expansion region
  KOKKOS_FORCEINLINE_FUNCTION void partial(const O row, const int lane, const int V, S* sum) const {
    const O reference_end = this->A.reference_row_length(row);
    for (O k = static_cast<O>(lane); k < reference_end; k += static_cast<O>(V))
      this->add(sum, load_once(this->A.reference_values(row, k)),
                static_cast<O>(load_once(this->A.reference_col_idx(row, k))));
    const Off end = this->A.expansion_row_ptr(row + 1);
    for (Off k = this->A.expansion_row_ptr(row) + static_cast<Off>(lane); k < end; k += static_cast<Off>(V))
      this->add(sum, load_once(this->A.expansion_values(k)), load_once(this->A.expansion_col_idx(k)));
  }
};

}  // namespace cispmv::impl
