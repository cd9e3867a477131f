// Consumer of the installed distributed layer (CiSpmv::mpi): the paper's 6x5 example cut into row
// blocks over the ranks of MPI_COMM_WORLD (one rank when run alone), y = A*x through a
// DistributedSpmvPlan; exits non-zero unless every rank's rows equal the hand-computed result.
#include <cispmv/cispmv.hpp>
#include <cispmv/mpi.hpp>

#include <cstdio>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int wrong = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    using Exec = Kokkos::DefaultExecutionSpace;
    cispmv::CooMatrix<double, int> coo;
    coo.num_rows = coo.num_cols = 6;
    coo.row_idx = {0, 1, 1, 2, 2, 3, 4, 5};
    coo.col_idx = {0, 2, 4, 1, 4, 2, 3, 5};
    coo.values = {1, 2, 3, 4, 5, 6, 7, 8};
    const auto part =
        cispmv::mpi::RowPartition::even(6, cispmv::mpi::size_of(MPI_COMM_WORLD), cispmv::mpi::rank_of(MPI_COMM_WORLD));
    cispmv::CooMatrix<double, int> mine;  // this rank's rows, all columns
    mine.num_rows = static_cast<int>(part.local_rows());
    mine.num_cols = 6;
    for (std::size_t k = 0; k < coo.values.size(); ++k) {
      if (coo.row_idx[k] >= part.first() && coo.row_idx[k] < part.end()) {
        mine.row_idx.push_back(coo.row_idx[k] - static_cast<int>(part.first()));
        mine.col_idx.push_back(coo.col_idx[k]);
        mine.values.push_back(coo.values[k]);
      }
    }
    const auto A = cispmv::to_device<Exec>(cispmv::from_coo(mine));
    const cispmv::mpi::DistributedSpmvPlan<Exec, std::remove_const_t<decltype(A)>> plan(Exec(), MPI_COMM_WORLD, part,
                                                                                        A);
    Kokkos::View<double*> x("x", part.local_rows()), y("y", part.local_rows());
    auto hx = Kokkos::create_mirror_view(x);
    for (int i = 0; i < part.local_rows(); ++i) hx(i) = static_cast<double>(part.first() + i + 1);
    Kokkos::deep_copy(x, hx);
    plan.apply(1.0, x, 0.0, y);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    const double expected[6] = {1, 21, 33, 18, 28, 48};
    for (int i = 0; i < part.local_rows(); ++i) wrong += hy(i) != expected[part.first() + i];
    std::printf("%s: consumer of CiSpmv::mpi, rank %d of %d (%s)\n", wrong ? "FAIL" : "PASS", part.rank, part.ranks(),
                plan.description().c_str());
  }
  MPI_Finalize();
  return wrong ? 1 : 0;
}
