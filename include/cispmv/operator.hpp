#pragma once
/// \file operator.hpp
/// What cispmv's eigensolver (solvers/davidson.hpp) needs of the operator it diagonalises, in one place. The
/// solver never names a format: an SpmvPlan of any stored format, the factored CI Hamiltonian
/// (ci::FactoredHamiltonian) and the distributed plan (mpi::DistributedSpmvPlan) all satisfy this interface, and so
/// does any user type that provides it.
///
/// Required (checked by is_operator_v):
///   using memory_space;            where x and y live; the solver's execution space must reach it
///   using value_type;              double
///   int num_rows() const;          this process's rows (all of them, unless distributed)
///   int num_cols() const;          the operator's columns (square: num_cols() is the global size)
///   void apply(double alpha, const X& x, double beta, const Y& y) const;
///                                  y = beta y + alpha A x on rank-1 Views of memory_space (y never aliases x;
///                                  beta == 0 overwrites y, NaN included)
/// Optional:
///   static constexpr bool has_block_kernel();  true: apply also takes rank-2 Views (LayoutRight, or a strided
///                                  subview of one) and reads the operator once for all their columns, the block
///                                  product the solver uses for the new vectors of an iteration (has_block_apply)
///   bool block_kernel() const;     the same, known at run time (an OperatorRef of any operator; may_apply_blocks)
///   std::size_t bytes() const;     the memory the operator holds in memory_space (operator_bytes: 0 without it),
///                                  for memory plans
///   distributed (is_distributed_operator): global_rows(), first_row() (the global index of this process's row 0),
///                                  sum_over_ranks(double* values, int count) and
///                                  std::vector<double> gather_from_ranks(const std::vector<double>&), so that
///                                  every reduction of the solver covers all processes.
/// The diagonal, for the preconditioner, is passed beside the operator: csr_diagonal() of a stored matrix,
/// ci::hamiltonian_diagonal() of the factored Hamiltonian.

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace cispmv {

namespace impl {
template <class T, class = void>
struct is_operator : std::false_type {};
template <class T>
struct is_operator<
    T, std::void_t<typename T::memory_space, typename T::value_type, decltype(std::declval<const T&>().num_rows()),
                   decltype(std::declval<const T&>().num_cols())>> : std::true_type {};

template <class T, class = void>
struct has_bytes : std::false_type {};
template <class T>
struct has_bytes<T, std::void_t<decltype(std::declval<const T&>().bytes())>> : std::true_type {};
/// Stored formats (they name themselves): davidson() multiplies them through an SpmvPlan.
template <class T, class = void>
struct is_cispmv_format : std::false_type {};
template <class T>
struct is_cispmv_format<T, std::void_t<decltype(T::format_name)>> : std::true_type {};
}  // namespace impl

/// Whether T has the required part of the interface (its apply is checked where the solver calls it).
template <class T>
inline constexpr bool is_operator_v = impl::is_operator<T>::value;

/// Operators whose rank-2 apply reads the operator once for several vectors (an SpmvPlan of a format with a
/// multi-vector kernel): the solver multiplies an iteration's new vectors together through them.
template <class T, class = void>
struct has_block_apply : std::false_type {};
template <class T>
struct has_block_apply<T, std::void_t<decltype(T::has_block_kernel())>>
    : std::integral_constant<bool, T::has_block_kernel()> {};

namespace impl {
template <class T, class = void>
struct has_runtime_block_kernel : std::false_type {};
template <class T>
struct has_runtime_block_kernel<T, std::void_t<decltype(std::declval<const T&>().block_kernel())>> : std::true_type {};
}  // namespace impl

/// Operators whose apply may take rank-2 Views: has_block_apply, or a block_kernel() that says so at run time.
template <class T>
struct may_apply_blocks
    : std::integral_constant<bool, has_block_apply<T>::value || impl::has_runtime_block_kernel<T>::value> {};

/// Whether this operator's rank-2 apply reads it once for several vectors (block_kernel() where it has one).
template <class T>
bool block_apply_of(const T& op) {
  if constexpr (impl::has_runtime_block_kernel<T>::value) {
    return op.block_kernel();
  } else {
    (void)op;
    return has_block_apply<T>::value;
  }
}

/// Operators distributed over processes (mpi::DistributedSpmvPlan): num_rows() is this process's rows,
/// global_rows() all of them, and the solver's reductions go through sum_over_ranks and gather_from_ranks.
template <class T, class = void>
struct is_distributed_operator : std::false_type {};
template <class T>
struct is_distributed_operator<
    T, std::void_t<decltype(std::declval<const T&>().global_rows()), decltype(std::declval<const T&>().first_row()),
                   decltype(std::declval<const T&>().sum_over_ranks(std::declval<double*>(), 0)),
                   decltype(std::declval<const T&>().gather_from_ranks(std::declval<std::vector<double>>()))>>
    : std::true_type {};

/// The bytes an operator holds in its memory space (T::bytes()), or 0 where it does not say.
template <class T>
std::size_t operator_bytes(const T& op) {
  if constexpr (impl::has_bytes<T>::value) {
    return static_cast<std::size_t>(op.bytes());
  } else {
    (void)op;
    return 0;
  }
}

}  // namespace cispmv
