#pragma once
/// \file mpi.hpp
/// cispmv over MPI (target CiSpmv::mpi, built with -DCISPMV_ENABLE_MPI=ON or AUTO when MPI is found):
/// row partitions balanced by nonzeros, the distributed SpMV plan (allgather or halo exchange,
/// GPU-aware MPI or host staging), and the distributed CI Hamiltonian. With solvers::davidson, a
/// DistributedSpmvPlan solves for the lowest roots on all ranks together. The rest of cispmv does
/// not depend on MPI.

#include "cispmv/mpi/ci.hpp"
#include "cispmv/mpi/distributed_spmv.hpp"
#include "cispmv/mpi/partition.hpp"
