#pragma once
/// \file mpi/ci.hpp
/// The CI Hamiltonian built distributed: each rank builds only its own block of rows, on its own
/// device, with the single-process builder (ci/hamiltonian.hpp); the blocks are balanced by their
/// nonzeros. No rank ever holds the whole matrix.

#include <mpi.h>

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/formats/csr.hpp"
#include "cispmv/memory_budget.hpp"
#include "cispmv/mpi/distributed_spmv.hpp"
#include "cispmv/mpi/partition.hpp"

#include <cstdint>

namespace cispmv::mpi {

/// The row blocks of `space`'s Hamiltonian, one per rank: first each rank counts the elements of
/// an even share of the rows (the builder's counting pass, no values), then the ranks agree on
/// blocks of nearly equal nonzeros (balanced_partition). Collective.
/// `elements` (optional): the structurally possible elements of the whole matrix (the counting
/// pass's sum over all ranks; not counted, and left alone, on one rank).
template <class Exec>
RowPartition hamiltonian_partition(const Exec& exec, MPI_Comm comm, const ci::FciDump& integrals,
                                   const ci::DeterminantSpace& space, const ci::HamiltonianOptions& options = {},
                                   double* elements = nullptr) {
  const RowPartition even = RowPartition::even(static_cast<std::int64_t>(space.size()), size_of(comm), rank_of(comm));
  if (even.ranks() == 1) return even;
  const std::vector<std::uint64_t> counts =
      ci::hamiltonian_row_counts(exec, integrals, space, even.first(), even.end(), options);
  if (elements != nullptr) {
    double mine = 0;
    for (const auto c : counts) mine += static_cast<double>(c);
    check(MPI_Allreduce(&mine, elements, 1, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
  }
  return balanced_partition(comm, even, counts);
}

/// A rank's part of a distributed CI Hamiltonian: the row partition and its block of rows, in CSR
/// in the memory of `Exec` (partition.local_rows() x all the space's columns).
template <class Exec>
struct DistributedHamiltonian {
  RowPartition partition;
  CsrMatrix<double, int, std::size_t, Exec> local;
};

/// Builds this rank's rows of the Hamiltonian of `integrals` in `space` (every rank holds the same
/// space: it is O(determinants) and cheap next to the matrix). First each rank counts the elements
/// of an even share of the rows (the builder's counting pass, no values), then the ranks agree on
/// blocks of nearly equal nonzeros (balanced_partition), then each builds its block. Collective.
template <class Exec>
DistributedHamiltonian<Exec> build_distributed_hamiltonian(const Exec& exec, MPI_Comm comm,
                                                           const ci::FciDump& integrals,
                                                           const ci::DeterminantSpace& space,
                                                           const ci::HamiltonianOptions& options = {}) {
  DistributedHamiltonian<Exec> out;
  out.partition = hamiltonian_partition(exec, comm, integrals, space, options);
  out.local = ci::build_hamiltonian_rows(exec, integrals, space, out.partition.first(), out.partition.end(), options);
  return out;
}

/// A rank's part of a distributed CI Hamiltonian cut by columns (a SplitBlock, in CSR in the memory
/// of `Exec`): what a DistributedSpmvPlan that overlaps the exchange with the product is made from.
template <class Exec>
struct SplitHamiltonian {
  RowPartition partition;
  SplitBlock<CsrMatrix<double, int, std::size_t, Exec>> block;
};

/// How build_split_hamiltonian makes a rank's two parts.
enum class SplitBuild {
  automatic,       ///< whole_then_cut where twice the block fits in free memory (on every rank), else in_two_parts
  whole_then_cut,  ///< the block built once, then cut (split_columns): one build, twice its memory for a moment
  in_two_parts     ///< each part built apart (the builder's column window): the block never exists whole, but
                   ///< each build walks every element of the rows
};

/// As build_distributed_hamiltonian, each rank's block as its SplitBlock (its own columns, renumbered
/// from 0, and the others). Collective.
template <class Exec>
SplitHamiltonian<Exec> build_split_hamiltonian(const Exec& exec, MPI_Comm comm, const ci::FciDump& integrals,
                                               const ci::DeterminantSpace& space,
                                               const ci::HamiltonianOptions& options = {},
                                               SplitBuild how = SplitBuild::automatic) {
  SplitHamiltonian<Exec> out;
  double elements = -1;
  out.partition = hamiltonian_partition(exec, comm, integrals, space, options, &elements);
  if (how == SplitBuild::automatic) {
    // the block's CSR (values, columns) twice over, against the free memory of the tightest rank
    const double block = elements / out.partition.ranks() * (sizeof(double) + sizeof(int));
    double free_bytes = static_cast<double>(available_bytes<Exec>());
    check(MPI_Allreduce(MPI_IN_PLACE, &free_bytes, 1, MPI_DOUBLE, MPI_MIN, comm), "MPI_Allreduce");
    how = elements >= 0 && 2.2 * block < free_bytes ? SplitBuild::whole_then_cut : SplitBuild::in_two_parts;
  }
  if (how == SplitBuild::whole_then_cut) {
    auto whole =
        ci::build_hamiltonian_rows(exec, integrals, space, out.partition.first(), out.partition.end(), options);
    out.block = split_columns(whole, out.partition.first(), out.partition.end());
    return out;
  }
  ci::HamiltonianOptions part = options;
  part.columns.first = out.partition.first();
  part.columns.end = out.partition.end();
  part.columns.keep = ci::HamiltonianOptions::ColumnWindow::Keep::inside;
  out.block.own = ci::build_hamiltonian_rows(exec, integrals, space, out.partition.first(), out.partition.end(), part);
  part.columns.keep = ci::HamiltonianOptions::ColumnWindow::Keep::outside;
  out.block.other =
      ci::build_hamiltonian_rows(exec, integrals, space, out.partition.first(), out.partition.end(), part);
  return out;
}

}  // namespace cispmv::mpi
