#pragma once
/// \file options.hpp
/// The public choices of an SpMV: which kernel shape, its launch parameters, and whether the hybrid
/// kernel stages x in team scratch memory. Zero (or `automatic`) always means "choose for me"; a
/// plan (plan.hpp) resolves every automatic choice once per matrix.

namespace cispmv {

/// Which kernel shape spmv runs.
enum class Kernel {
  automatic,  ///< vector per row on GPUs for formats laid out for it (CSR, hybrid, csell with row_lanes > 1), else
              ///< scalar
  scalar,     ///< thread per row (paper, Algorithms 1-5)
  vector      ///< vector (warp on CUDA) per row (paper, Algorithm 7)
};

/// Whether the hybrid vector kernel copies the part of x its reference region reads into team
/// scratch memory once per team, so that the reference region's gathers hit shared memory.
enum class StageReferenceX {
  /// off. (Not on where it fits on GPUs: Kokkos 3.x gives the staged team kernels ~23 KB of L1;
  /// with the L1 preferred (TeamCache) the unstaged kernel is faster: hybrid vector on paper32k-1,
  /// H100, 0.165 ms against 0.203 staged.)
  automatic,
  off,  ///< never
  on    ///< always (the plan throws std::invalid_argument if it does not fit)
};

/// How team (block) kernels on GPUs split an SM's on-chip memory between L1 cache and shared
/// memory. Kokkos 3.x launches every team kernel on CUDA preferring shared memory, which leaves an
/// H100 SM ~23 KB of L1 for the gathers of x (ncu: a 233 KB shared-memory configuration).
enum class TeamCache {
  automatic,  ///< l1, unless the kernel stages x in team scratch (then shared: its blocks need the room)
  l1,         ///< prefer L1: the carve-out keeps only the shared memory the launch needs
  shared      ///< Kokkos' own choice (prefer shared memory)
};

/// Whether csell's GPU kernels with values inline (no value table) request each group of entries'
/// deltas and values while the group before it gathers x (unroll 4 or 8; H200, against the plain loop
/// at the same shape: paper32k-1 0.124 -> 0.093 ms, scaled-1048576 4.41 -> 3.72). A kernel of its own,
/// compiled apart from the plain loop.
enum class LoadsAhead {
  automatic,  ///< on where it can run: csell with values inline on a GPU, unroll 4 or 8
  off,        ///< the plain loop (each group's loads, then its gathers): for comparisons
  on          ///< as automatic, but the plan throws std::invalid_argument where it cannot run
};

/// csell's CPU slice kernel in AVX-512 (impl::host_simd: x86-64 CPUs that have AVX-512F and VL,
/// double or float values, 32-bit columns, x of unit stride; block products of 2-16 columns of a
/// double X whose rows are contiguous take the block walk, which reads the table by scalar loads
/// whatever this says, except off); elsewhere the portable loop runs.
enum class HostSimd {
  automatic,  ///< AVX-512 where it runs; the value table read by gathers or by scalar loads, whichever
              ///< is faster on this CPU (impl::host_simd::table_gathers_pay, timed once per process)
  off,        ///< the portable loop: for comparisons
  gather,     ///< AVX-512, the table read by gathers; std::invalid_argument where AVX-512 cannot run
  loads       ///< AVX-512, the table read by scalar loads; std::invalid_argument where AVX-512 cannot run
};

/// How a multi-vector product (rank-2 X and Y, k columns) spreads its columns over threads.
enum class BlockShape {
  automatic,  ///< lanes on GPUs for 8 or more columns in the formats that have that shape (CSR, csell), else rows
  rows,       ///< a thread (or, with Kernel::vector, a vector of lanes) per row keeps the k sums in registers
  lanes       ///< a lane per column: k lanes (rounded up to a power of two) share each row; on a GPU they
              ///< decode each entry once in step and load the entry's k values of X in one coalesced read
};

/// Tuning knobs of spmv; zero means "choose for me".
struct SpmvOptions {
  Kernel kernel = Kernel::automatic;
  /// Rows a team works on (the paper's block-size study); csell's thread-per-row kernel on GPUs: rows
  /// per block of threads, at most what the kernel's registers allow and, for its plain loop (compiled
  /// with launch bounds), at most 256 (the plan's description says).
  int rows_per_team = 0;
  int vector_length = 0;  ///< lanes per row (power of two <= 32; 32 = a CUDA warp; csell: its row_lanes)
  /// Independent accumulators per lane of the CSR / hybrid vector kernels, and entries the csell
  /// scalar kernel decodes together per row (1, 2, 4, 8).
  int unroll = 0;
  int team_size = 0;  ///< rows a team works on concurrently, one vector of lanes each (<= rows_per_team)
  StageReferenceX stage_reference_x = StageReferenceX::automatic;
  BlockShape block_shape = BlockShape::automatic;  ///< multi-vector products only
  /// Lane shape only: columns of X each lane owns (0 = the format's choice, 1, 2, 4 or 8). With 2, 4
  /// and 8 a lane loads its columns in pairs (one 16-byte load of two doubles), so a row needs a half,
  /// a quarter or an eighth of the lanes and each decoded matrix entry feeds that many sums. Pairs need
  /// an even number of columns in rows of X that are contiguous (LayoutRight, or LayoutStride with
  /// unit column stride) with an even row stride and an aligned start; elsewhere a lane takes one
  /// column. (An odd block can be padded: a zero column costs the lane shape nothing.)
  int lane_columns = 0;
  TeamCache team_cache = TeamCache::automatic;     ///< team kernels on CUDA (vector shapes, rows per block)
  LoadsAhead loads_ahead = LoadsAhead::automatic;  ///< csell on GPUs, values inline
  HostSimd host_simd = HostSimd::automatic;        ///< csell on CPUs (one vector; off also for several)
};

/// "automatic", "scalar" or "vector".
inline const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::scalar: return "scalar";
    case Kernel::vector: return "vector";
    default: return "automatic";
  }
}

/// "automatic", "rows" or "lanes".
inline const char* block_shape_name(BlockShape s) {
  switch (s) {
    case BlockShape::rows: return "rows";
    case BlockShape::lanes: return "lanes";
    default: return "automatic";
  }
}

/// "automatic", "off", "gather" or "loads".
inline const char* host_simd_name(HostSimd s) {
  switch (s) {
    case HostSimd::off: return "off";
    case HostSimd::gather: return "gather";
    case HostSimd::loads: return "loads";
    default: return "automatic";
  }
}

/// "automatic", "off" or "on".
inline const char* stage_name(StageReferenceX s) {
  switch (s) {
    case StageReferenceX::off: return "off";
    case StageReferenceX::on: return "on";
    default: return "automatic";
  }
}

}  // namespace cispmv
