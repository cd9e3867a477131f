#pragma once
// The one place where SpMV launch shapes depend on the backend.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <type_traits>

namespace cispmv {

/// Which kernel shape spmv runs.
enum class Kernel {
  automatic,  ///< vector per row on GPUs for formats laid out for it (CSR, hybrid), else scalar
  scalar,     ///< thread per row (paper, Algorithms 1-5)
  vector      ///< vector (warp on CUDA) per row (paper, Algorithm 7)
};

/// Tuning knobs of spmv; zero means "choose for me".
struct SpmvOptions {
  Kernel kernel = Kernel::automatic;
  int rows_per_team = 0;  ///< rows a team works on at once (the paper's block-size study)
  int vector_length = 0;  ///< lanes per row (power of two; 32 = a CUDA warp)
  int unroll = 0;         ///< independent accumulators per lane in the CSR / hybrid vector kernels (1, 2, 4, 8)
  int team_size = 0;      ///< rows a team works on concurrently, one vector of lanes each (<= rows_per_team)
  /// Hybrid vector kernel on a GPU: copy the part of x the reference region reads (ref_width
  /// entries) into team scratch memory once per team, so the reference region's gathers hit
  /// shared memory. -1: automatic (on where it fits), 0: off, 1: on (throws if it does not fit).
  int stage_reference_x = -1;
};

inline const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::scalar: return "scalar";
    case Kernel::vector: return "vector";
    default: return "automatic";
  }
}

namespace impl {

template <class Exec>
inline constexpr bool is_gpu_space_v =
#if defined(KOKKOS_ENABLE_CUDA)
    std::is_same_v<Exec, Kokkos::Cuda> ||
#endif
    false;

/// Team shape of the vector kernels.
struct VectorLaunch {
  int rows_per_team;
  int team_size;
  int vector_length;
};

/// Default rows per team of the vector kernel on a GPU, without and with x staged in scratch
/// memory (a staged team loads the reference part of x once, so it should cover many rows).
/// Measured on an H200 in the perf suite's sweep (perf/results/).
inline constexpr int gpu_default_rows_per_team = 4;
inline constexpr int gpu_default_staged_rows_per_team = 32;
inline constexpr int gpu_default_staged_team_size = 16;
/// Rows a host thread takes at once in the vector kernel (one lane per row on the host).
inline constexpr int host_default_rows_per_team = 64;
/// Default independent accumulators per lane of the unrolled vector kernels, without and with x
/// staged (H200 sweep, perf/results/: staged teams keep more rows in flight and need fewer).
inline constexpr int default_unroll = 4;
inline constexpr int default_staged_unroll = 2;
/// Threads a GPU team may have (CUDA's block limit).
inline constexpr int gpu_max_team_threads = 1024;

/// Launch shape of the vector kernels for execution space Exec; `staged`: the hybrid kernel stages
/// the reference part of x in scratch memory.
/// GPU: `vector_length` lanes per row (32, a warp, unless the rows are short: then the smallest power
/// of two >= mean row length, as Kokkos Kernels does), `rows_per_team` rows per team, `team_size` of
/// them at a time (one vector of lanes each, at most 1024 threads per team). Host: one lane per row
/// and one thread per team, which walks rows_per_team rows.
template <class Exec>
VectorLaunch vector_launch(const SpmvOptions& opts, double mean_row_length, bool staged = false) {
  if constexpr (is_gpu_space_v<Exec>) {
    int vl = opts.vector_length;
    if (vl <= 0) {
      vl = 1;
      while (vl < 32 && vl < mean_row_length) vl *= 2;
    }
    const int rows = opts.rows_per_team > 0 ? opts.rows_per_team
                                            : staged ? gpu_default_staged_rows_per_team
                                                     : std::max(1, gpu_default_rows_per_team * 32 / vl);
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

/// What Kernel::automatic means for a format on Exec.
template <class Exec>
Kernel resolve_kernel(Kernel requested, bool has_vector_kernel, bool prefers_vector_on_gpu) {
  if (requested != Kernel::automatic) return requested;
  if (is_gpu_space_v<Exec> && has_vector_kernel && prefers_vector_on_gpu) return Kernel::vector;
  return Kernel::scalar;
}

}  // namespace impl
}  // namespace cispmv
