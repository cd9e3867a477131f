#pragma once
// The benchmark families of spmv_bench, each in its own file: register_formats (one vector: the baselines, every
// format and kernel, csell's shapes), register_blocks (--vectors: several vectors at once), register_factored (a CI
// Hamiltonian in factored form). Each is compiled once for the execution spaces spmv_bench runs on
// (CISPMV_BENCH_INSTANTIATE), so that the families compile in parallel.
#include "bench/suite.hpp"

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"

#include <memory>

namespace cispmv::bench {

template <class Exec, class Scalar>
void register_formats(Suite<Exec, Scalar>& s);
template <class Exec, class Scalar>
void register_blocks(Suite<Exec, Scalar>& s);
template <class Exec, class Scalar>
void register_factored(Suite<Exec, Scalar>& s, const std::shared_ptr<const ci::FciDump>& dump,
                       const std::shared_ptr<const ci::DeterminantSpace>& space);

}  // namespace cispmv::bench

// `--space device` runs Kokkos' default execution space, `--space host` its default host space: one type in a CPU
// build, two in a GPU build.
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
#define CISPMV_BENCH_INSTANTIATE(what, Scalar)                                                \
  what<Kokkos::DefaultExecutionSpace, Scalar>(Suite<Kokkos::DefaultExecutionSpace, Scalar>&); \
  what<Kokkos::DefaultHostExecutionSpace, Scalar>(Suite<Kokkos::DefaultHostExecutionSpace, Scalar>&);
#define CISPMV_BENCH_INSTANTIATE_FACTORED(what)                                                      \
  what<Kokkos::DefaultExecutionSpace, double>(Suite<Kokkos::DefaultExecutionSpace, double>&,         \
                                              const std::shared_ptr<const ci::FciDump>&,             \
                                              const std::shared_ptr<const ci::DeterminantSpace>&);   \
  what<Kokkos::DefaultHostExecutionSpace, double>(Suite<Kokkos::DefaultHostExecutionSpace, double>&, \
                                                  const std::shared_ptr<const ci::FciDump>&,         \
                                                  const std::shared_ptr<const ci::DeterminantSpace>&);
#else
#define CISPMV_BENCH_INSTANTIATE(what, Scalar) \
  what<Kokkos::DefaultExecutionSpace, Scalar>(Suite<Kokkos::DefaultExecutionSpace, Scalar>&);
#define CISPMV_BENCH_INSTANTIATE_FACTORED(what)                                              \
  what<Kokkos::DefaultExecutionSpace, double>(Suite<Kokkos::DefaultExecutionSpace, double>&, \
                                              const std::shared_ptr<const ci::FciDump>&,     \
                                              const std::shared_ptr<const ci::DeterminantSpace>&);
#endif
