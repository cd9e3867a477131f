#pragma once
/// \file plan_instances.hpp
/// The plans of every registry format on the default execution space, compiled once: SpmvPlan's constructor (every
/// automatic choice), description, one-vector product (double and float) and strided-block product (double:
/// OperatorRef's) are declared `extern` here and instantiated in the SpMV library (src/spmv/plans/*.cpp), so that a
/// unit which multiplies with several formats (the `cispmv` program's run, ci and distributed ci; the tests; the
/// benchmark) calls them instead of compiling every kernel again (they were most of those units' compile time).
/// Other execution spaces, scalar types and View types instantiate from the headers as before. A build of the
/// library without these instances (CMake option CISPMV_PLAN_INSTANCES=OFF, e.g. the Python module, which
/// multiplies with none of them) defines CISPMV_NO_PLAN_INSTANCES, and the declarations go away with the definitions.
#include <Kokkos_Core.hpp>

#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/formats/csr.hpp"
#include "cispmv/formats/ell.hpp"
#include "cispmv/formats/hybrid.hpp"
#include "cispmv/formats/sliced_ell.hpp"
#include "cispmv/plan.hpp"

#include <cstddef>
#include <cstdint>

namespace cispmv::impl::plan_instances {

using Exec = Kokkos::DefaultExecutionSpace;
template <class S>
using Csr = CsrMatrix<S, int, std::size_t, Exec>;
template <class S>
using Ell = EllMatrix<S, int, Exec>;
template <class S>
using EllR = EllRMatrix<S, int, Exec>;
template <class S>
using Sell = SlicedEllMatrix<S, int, std::size_t, Exec>;
template <class S>
using SellR = SlicedEllRMatrix<S, int, std::size_t, Exec>;
template <class S>
using Hybrid = HybridMatrix<S, int, std::size_t, Exec>;
template <class S>
using Hybrid16 = HybridMatrix<S, int, std::size_t, Exec, std::uint16_t>;
template <class S>
using Csell = CompressedSellMatrix<S, int, std::size_t, Exec>;

}  // namespace cispmv::impl::plan_instances

/// The instantiations of one format (a template of impl::plan_instances) on the default execution space: its
/// plan's constructor, description and one-vector product in double and float, its strided-block product in
/// double. KIND is `extern` (the declarations, below) or empty (the definitions, in the library).
#define CISPMV_PLAN_INSTANCES_OF(KIND, FORMAT, S)                                                                \
  KIND template SpmvPlan<impl::plan_instances::Exec, impl::plan_instances::FORMAT<S>>::SpmvPlan(                 \
      const execution_space&, const matrix_type&, const SpmvOptions&);                                           \
  KIND template std::string SpmvPlan<impl::plan_instances::Exec, impl::plan_instances::FORMAT<S>>::description() \
      const;                                                                                                     \
  KIND template void SpmvPlan<impl::plan_instances::Exec, impl::plan_instances::FORMAT<S>>::apply_contiguous(    \
      S, const ContiguousX&, S, const ContiguousY&) const;
#define CISPMV_PLAN_INSTANCES(KIND, FORMAT)                                                                     \
  CISPMV_PLAN_INSTANCES_OF(KIND, FORMAT, double)                                                                \
  CISPMV_PLAN_INSTANCES_OF(KIND, FORMAT, float)                                                                 \
  KIND template void SpmvPlan<impl::plan_instances::Exec, impl::plan_instances::FORMAT<double>>::apply_strided( \
      double, const StridedConstBlock&, double, const StridedBlock&) const;

#if !defined(CISPMV_NO_PLAN_INSTANCES)
namespace cispmv {
CISPMV_PLAN_INSTANCES(extern, Csr)
CISPMV_PLAN_INSTANCES(extern, Ell)
CISPMV_PLAN_INSTANCES(extern, EllR)
CISPMV_PLAN_INSTANCES(extern, Sell)
CISPMV_PLAN_INSTANCES(extern, SellR)
CISPMV_PLAN_INSTANCES(extern, Hybrid)
CISPMV_PLAN_INSTANCES(extern, Hybrid16)
CISPMV_PLAN_INSTANCES(extern, Csell)
}  // namespace cispmv
#endif
