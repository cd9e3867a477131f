#pragma once
// The one place where SpMV launch shapes depend on the backend.

#include <Kokkos_Core.hpp>

#include "cispmv/impl/backend.hpp"
#include "cispmv/options.hpp"

#include <algorithm>

namespace cispmv::impl {

/// Team shape of the vector kernels.
struct VectorLaunch {
  int rows_per_team;
  int team_size;
  int vector_length;
};

/// Default rows per team of the vector kernel on a GPU, without and with x staged in scratch
/// memory (a staged team loads the reference part of x once, so it should cover many rows).
/// Measured on an H200 in the perf suite's sweep.
inline constexpr int gpu_default_rows_per_team = 4;
inline constexpr int gpu_default_staged_rows_per_team = 32;
inline constexpr int gpu_default_staged_team_size = 16;
/// Rows a host thread takes at once in the vector kernel (one lane per row on the host).
inline constexpr int host_default_rows_per_team = 64;
/// Default independent accumulators per lane of the unrolled vector kernels, without and with x
/// staged (H200 sweep: staged teams keep more rows in flight and need fewer).
inline constexpr int default_unroll = 4;
inline constexpr int default_staged_unroll = 2;
/// Entries csell's kernels decode together per lane of the layout unless SpmvOptions::unroll says
/// otherwise.
/// - Thread per row (one lane per row), launched as blocks of gpu_row_block_rows rows: 4 with a value
///   table (row_scalar_unroll), 8 with values inline (row_scalar_inline_unroll: their loads one group
///   ahead, SpmvOptions::loads_ahead). H200, unroll 1 / 2 / 4 / 8: all-electron FCI (table)
///   3.26 / 2.45 / 2.27 / 2.82 ms; frozen-core FCI (table) 0.523 / 0.324 / 0.302 / 0.440;
///   scaled-1048576 (values inline, ahead at 4 and 8; windows of 64) 4.95 / 4.08 / 4.64 / 3.99, the
///   plain loop at 4 / 8 4.31 / 4.45. (As a RangePolicy, on an H100, unroll 2 won everywhere.)
/// - The vector shape (several lanes per row, default_lanes_unroll): 4 while the lanes fill the GPU's
///   thread slots less than twice (each thread needs several loads in flight), 2 when they fill them
///   twice or more (loads in flight come from the threads, and fewer registers per thread). H200,
///   unroll 2 / 4 / 8: paper32k-1 (values inline) 4 lanes 0.110 / 0.099 / 0.119 ms, 8 lanes
///   0.111 / 0.105 / 0.113; frozen-core FCI (table) 4 lanes 0.317 / 0.310 / 0.318.
inline constexpr int row_scalar_unroll = 4;
inline constexpr int row_scalar_inline_unroll = 8;
inline constexpr int few_lanes_unroll = 4;
inline constexpr int many_lanes_unroll = 2;
template <class Exec>
int default_lanes_unroll(const Exec& exec, long long lanes) {
  return lanes >= 2LL * exec.concurrency() ? many_lanes_unroll : few_lanes_unroll;
}
/// csell's lanes per row (CompressedSellMatrix::row_lanes) for a matrix of `rows` rows and `nnz`
/// entries on a GPU with `gpu_threads` thread slots (0: no GPU, one lane), in slices of `slice_height`
/// rows of the layout (a row's lanes must divide it). One where a thread per row fills half the slots
/// or more; else the most lanes (a power of two, at most 32) that keep on average >= 64 entries each
/// with a value table, >= 128 with values inline (`values_inline`: their loads go out a group ahead,
/// which pays over longer lanes). H200: paper32k-1 (32K rows of 950, values inline, 0.12x the slots)
/// 2 / 4 / 8 / 16 lanes 0.103 / 0.097-0.099 / 0.102-0.105 / 0.114-0.119 ms at their best unroll;
/// frozen-core FCI (table; thread per row as a RangePolicy) 2 / 4 / 8 lanes 0.370 / 0.319 / 0.337: ~100
/// entries per lane. The frozen core (245K rows of 406, 0.91x the slots) runs best with one lane:
/// 0.299-0.302 ms thread per row against 4 lanes' 0.315.
inline constexpr int max_row_lanes = 32;
inline constexpr double min_entries_per_lane = 64.0;
inline constexpr double min_entries_per_inline_lane = 128.0;
inline int automatic_row_lanes(long long rows, double nnz, long long gpu_threads, int slice_height = 32,
                               bool values_inline = false) {
  if (gpu_threads <= 0 || rows <= 0 || 2 * rows >= gpu_threads) return 1;
  const double mean = nnz / static_cast<double>(rows);
  const double least = values_inline ? min_entries_per_inline_lane : min_entries_per_lane;
  int lanes = 1;
  while (lanes < max_row_lanes && slice_height % (2 * lanes) == 0 && mean / (2 * lanes) >= least) lanes *= 2;
  return lanes;
}
/// The thread slots of a GPU execution space (its concurrency), 0 for a CPU: automatic_row_lanes'
/// gpu_threads for a matrix that will run on Exec.
template <class Exec>
long long gpu_thread_slots() {
  if constexpr (is_gpu_space_v<Exec>) {
    return Exec().concurrency();
  } else {
    return 0;
  }
}
/// Threads a GPU team may have (CUDA's block limit).
inline constexpr int gpu_max_team_threads = 1024;
/// Rows per block of csell's thread-per-row kernel on GPUs where SpmvOptions::rows_per_team is 0 (a
/// TeamPolicy of blocks of consecutive rows, not a RangePolicy). As a RangePolicy, Kokkos 3.4 picks the
/// block size by occupancy from the kernel's registers: 96 threads at 40 registers (unroll 2), 64 at 38
/// (unroll 1); scaled-1048576 ran at 6.33 ms with 96 (L1 hit rate 18 %) and 4.87 with 64 (49 %). H200:
/// blocks of 128 / 256 / 512 / 1,024 rows, unroll 2: scaled-1048576 4.30 / 4.24 / 4.99 / 4.13 ms
/// against 6.33 as a RangePolicy; all-electron FCI 2.68 / 2.54 / 4.10 / 2.63 against 2.52; frozen core
/// 0.348 / 0.335 / 0.454 / 0.347 against 0.336. 256 is the one that never loses more than 1 %.
inline constexpr int gpu_row_block_rows = 256;
/// Launch shape of the vector kernels for execution space Exec; `staged`: the hybrid kernel stages
/// the reference part of x in scratch memory.
/// GPU: `vector_length` lanes per row (32, a warp, unless the rows are short: then the smallest power
/// of two >= mean row length, as Kokkos Kernels does), `rows_per_team` rows per team, `team_size` of
/// them at a time (one vector of lanes each, at most 1024 threads per team). Host: one lane per row
/// and one thread per team, which walks rows_per_team rows.
template <class Exec>
VectorLaunch vector_launch(const SpmvOptions& opts, double mean_row_length, bool staged) {
  if constexpr (is_gpu_space_v<Exec>) {
    int vl = opts.vector_length;
    if (vl <= 0) {
      vl = 1;
      while (vl < gpu_max_vector_length && vl < mean_row_length) vl *= 2;
    }
    const int rows = opts.rows_per_team > 0 ? opts.rows_per_team
                     : staged               ? gpu_default_staged_rows_per_team
                                            : std::max(1, gpu_default_rows_per_team * gpu_max_vector_length / vl);
    int team = opts.team_size > 0 ? opts.team_size : staged ? gpu_default_staged_team_size : rows;
    team = std::max(1, std::min({team, rows, gpu_max_team_threads / vl}));
    return {rows, team, vl};
  } else {
    (void)mean_row_length;
    (void)staged;
    const int rows = opts.rows_per_team > 0 ? opts.rows_per_team : host_default_rows_per_team;
    return {rows, 1, 1};
  }
}

/// What Kernel::automatic means for a format on Exec: the vector kernel on GPUs for formats laid
/// out for a vector per row (CSR, hybrid), else thread per row.
template <class Exec>
Kernel resolve_kernel(Kernel requested, bool has_vector_kernel, bool prefers_vector_on_gpu) {
  if (requested != Kernel::automatic) return requested;
  if (is_gpu_space_v<Exec> && has_vector_kernel && prefers_vector_on_gpu) return Kernel::vector;
  return Kernel::scalar;
}

/// Unroll factor of the vector kernels: the requested one, or the measured default.
inline int resolve_unroll(const SpmvOptions& opts, bool unrolled, bool staged) {
  if (!unrolled) return 1;
  if (opts.unroll > 0) return opts.unroll;
  return staged ? default_staged_unroll : default_unroll;
}

}  // namespace cispmv::impl
