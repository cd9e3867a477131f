#pragma once
/// \file mpi/partition.hpp
/// Rows of a matrix in contiguous blocks, one per MPI rank, balanced by a weight per row (its
/// nonzeros): how the distributed matrix, its vectors and the distributed CI Hamiltonian are cut.

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::mpi {

/// Throws std::runtime_error naming the MPI call when it failed (for communicators whose error
/// handler returns; MPI's default handler aborts first).
inline void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, message, &length);
  throw std::runtime_error(std::string("cispmv::mpi: ") + call + " failed: " + std::string(message, length));
}

/// This process's rank and the number of ranks of `comm`.
inline int rank_of(MPI_Comm comm) {
  int r = 0;
  check(MPI_Comm_rank(comm, &r), "MPI_Comm_rank");
  return r;
}
inline int size_of(MPI_Comm comm) {
  int s = 0;
  check(MPI_Comm_size(comm, &s), "MPI_Comm_size");
  return s;
}

/// Rank r owns the global rows [offsets[r], offsets[r + 1]); the vectors are cut the same way.
struct RowPartition {
  std::int64_t global_rows = 0;
  std::vector<std::int64_t> offsets{0, 0};  ///< ranks + 1 ascending offsets, offsets.front() == 0
  int rank = 0;                             ///< this process's rank

  int ranks() const { return static_cast<int>(offsets.size()) - 1; }
  std::int64_t first() const { return offsets[static_cast<std::size_t>(rank)]; }
  std::int64_t end() const { return offsets[static_cast<std::size_t>(rank) + 1]; }
  std::int64_t local_rows() const { return end() - first(); }
  std::int64_t rows_of(int r) const {
    return offsets[static_cast<std::size_t>(r) + 1] - offsets[static_cast<std::size_t>(r)];
  }
  /// The rank that owns global row g (0 <= g < global_rows).
  int owner(std::int64_t g) const {
    return static_cast<int>(std::upper_bound(offsets.begin(), offsets.end(), g) - offsets.begin()) - 1;
  }

  /// n rows in `ranks` blocks of n / ranks rows (the first n % ranks one more).
  static RowPartition even(std::int64_t n, int ranks, int rank) {
    if (n < 0 || ranks < 1 || rank < 0 || rank >= ranks) {
      throw std::invalid_argument("cispmv::mpi::RowPartition: " + std::to_string(n) + " rows cannot be cut into " +
                                  std::to_string(ranks) + " blocks for rank " + std::to_string(rank));
    }
    RowPartition p;
    p.global_rows = n;
    p.rank = rank;
    p.offsets.assign(static_cast<std::size_t>(ranks) + 1, 0);
    for (int r = 0; r < ranks; ++r) {
      p.offsets[static_cast<std::size_t>(r) + 1] = p.offsets[static_cast<std::size_t>(r)] + n / ranks + (r < n % ranks);
    }
    return p;
  }
};

/// A partition of the same rows whose blocks carry nearly equal total weight (block q ends at the
/// first row where the weight before it reaches q/ranks of the total, so each block is within one
/// row's weight of the mean). `current` is how the rows are cut now (each rank knows the weights of
/// its own block: `local_weights[i]` is the weight of row current.first() + i, e.g. its nonzeros).
/// Collective over `comm`; every rank gets the same partition. Zero total weight: the even one.
inline RowPartition balanced_partition(MPI_Comm comm, const RowPartition& current,
                                       const std::vector<std::uint64_t>& local_weights) {
  if (local_weights.size() != static_cast<std::size_t>(current.local_rows())) {
    throw std::invalid_argument("cispmv::mpi::balanced_partition: " + std::to_string(local_weights.size()) +
                                " weights for a block of " + std::to_string(current.local_rows()) + " rows");
  }
  const int ranks = current.ranks();
  std::vector<std::uint64_t> prefix(local_weights.size() + 1, 0);  // weight of this block's rows before i
  std::partial_sum(local_weights.begin(), local_weights.end(), prefix.begin() + 1);
  const unsigned long long mine = prefix.back();
  unsigned long long before = 0, total = 0;
  check(MPI_Exscan(&mine, &before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm), "MPI_Exscan");
  if (current.rank == 0) before = 0;  // MPI leaves rank 0's result undefined
  check(MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm), "MPI_Allreduce");
  if (total == 0) return RowPartition::even(current.global_rows, ranks, current.rank);
  // split q (1 <= q < ranks): the first global row g with W(g) >= target_q, W(g) the weight of the
  // rows before g; the rank whose block holds that row finds it, the others contribute 0
  std::vector<long long> splits(static_cast<std::size_t>(ranks) - 1, 0), all(splits.size(), 0);
  for (int q = 1; q < ranks; ++q) {
    const long double exact = static_cast<long double>(total) * q / ranks;
    const auto target = static_cast<unsigned long long>(exact);
    if (target > before && target <= before + mine) {
      const auto at = std::lower_bound(prefix.begin(), prefix.end(), static_cast<std::uint64_t>(target - before));
      splits[static_cast<std::size_t>(q) - 1] = current.first() + (at - prefix.begin());
    }
  }
  check(MPI_Allreduce(splits.data(), all.data(), static_cast<int>(all.size()), MPI_LONG_LONG, MPI_MAX, comm),
        "MPI_Allreduce");
  RowPartition p;
  p.global_rows = current.global_rows;
  p.rank = current.rank;
  p.offsets.assign(static_cast<std::size_t>(ranks) + 1, 0);
  for (int q = 1; q < ranks; ++q) {
    p.offsets[static_cast<std::size_t>(q)] =
        std::max<std::int64_t>(p.offsets[static_cast<std::size_t>(q) - 1], all[static_cast<std::size_t>(q) - 1]);
  }
  p.offsets.back() = current.global_rows;
  return p;
}

}  // namespace cispmv::mpi
