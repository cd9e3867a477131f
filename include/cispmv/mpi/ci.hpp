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
#include "cispmv/mpi/distributed_spmv.hpp"
#include "cispmv/mpi/partition.hpp"

#include <cstdint>

namespace cispmv::mpi {

/// The row blocks of `space`'s Hamiltonian, one per rank: first each rank counts the elements of
/// an even share of the rows (the builder's counting pass, no values), then the ranks agree on
/// blocks of nearly equal nonzeros (balanced_partition). Collective.
template <class Exec>
RowPartition hamiltonian_partition(const Exec& exec, MPI_Comm comm, const ci::FciDump& integrals,
                                   const ci::DeterminantSpace& space, const ci::HamiltonianOptions& options = {}) {
  const RowPartition even = RowPartition::even(static_cast<std::int64_t>(space.size()), size_of(comm), rank_of(comm));
  if (even.ranks() == 1) return even;
  const std::vector<std::uint64_t> counts =
      ci::hamiltonian_row_counts(exec, integrals, space, even.first(), even.end(), options);
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

/// As build_distributed_hamiltonian, each rank's block built in its two parts (its own columns,
/// renumbered from 0, then the others; the builder's column window), so that the block never
/// exists whole either. Collective.
template <class Exec>
SplitHamiltonian<Exec> build_split_hamiltonian(const Exec& exec, MPI_Comm comm, const ci::FciDump& integrals,
                                               const ci::DeterminantSpace& space,
                                               const ci::HamiltonianOptions& options = {}) {
  SplitHamiltonian<Exec> out;
  out.partition = hamiltonian_partition(exec, comm, integrals, space, options);
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
