#pragma once
/// \file operator_ref.hpp
/// OperatorRef: a reference to any operator of the interface in operator.hpp, behind one type. Code that solves
/// with one of several operators chosen at run time (the `cispmv ci` program: eight stored formats, each alone or
/// distributed) instantiates the eigensolver once for OperatorRef instead of once per operator type: the solver's
/// few hundred lines of vector kernels are compiled once, and each product costs one virtual call more (the
/// products take milliseconds to seconds). The operator is referenced, not copied: it must outlive the reference.
///
/// Products go through contiguous rank-1 Views (a column of a LayoutLeft basis, or any contiguous View) and, where
/// the operator has a block kernel (has_block_apply, known here at run time: block_kernel()), through strided
/// rank-2 Views. With Distributed = true the reference also forwards the distributed operator's reductions
/// (is_distributed_operator); the referenced operator must then be distributed.

#include <Kokkos_Core.hpp>

#include "cispmv/operator.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace cispmv {

template <class MemorySpace, bool Distributed = false>
class OperatorRef {
 public:
  using memory_space = MemorySpace;
  using value_type = double;
  using Vector = Kokkos::View<double*, Kokkos::LayoutLeft, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using ConstVector =
      Kokkos::View<const double*, Kokkos::LayoutLeft, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Block = Kokkos::View<double**, Kokkos::LayoutStride, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using ConstBlock =
      Kokkos::View<const double**, Kokkos::LayoutStride, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  template <class Op, class = std::enable_if_t<!std::is_same_v<std::decay_t<Op>, OperatorRef>>>
  explicit OperatorRef(const Op& op) : impl_(std::make_shared<const Model<Op>>(op)) {
    static_assert(is_operator_v<Op>, "cispmv::OperatorRef: the operator lacks the interface of cispmv/operator.hpp");
    static_assert(std::is_same_v<typename Op::memory_space, MemorySpace>,
                  "cispmv::OperatorRef: the operator's memory space is not the reference's");
    static_assert(!Distributed || is_distributed_operator<Op>::value,
                  "cispmv::OperatorRef<..., true>: the operator is not distributed");
  }

  int num_rows() const { return impl_->num_rows(); }
  int num_cols() const { return impl_->num_cols(); }
  std::size_t bytes() const { return impl_->bytes(); }
  /// Whether rank-2 products read the operator once for all their columns (the referenced type's
  /// has_block_apply): the solver multiplies several vectors together only then.
  bool block_kernel() const { return impl_->block_kernel(); }

  /// y = beta y + alpha A x: rank-1 Views, contiguous; or, where block_kernel(), rank-2 Views of any layout.
  template <class XView, class YView>
  void apply(double alpha, const XView& x, double beta, const YView& y) const {
    static_assert(XView::rank == YView::rank && (XView::rank == 1 || XView::rank == 2),
                  "cispmv::OperatorRef::apply: rank-1 or rank-2 Views");
    if constexpr (XView::rank == 1) {
      if (!x.span_is_contiguous() || !y.span_is_contiguous())
        throw std::invalid_argument("cispmv::OperatorRef::apply: rank-1 Views must be contiguous");
      impl_->apply(alpha, ConstVector(x.data(), x.extent(0)), beta, Vector(y.data(), y.extent(0)));
    } else {
      impl_->apply_block(alpha, strided<ConstBlock>(x), beta, strided<Block>(y));
    }
  }

  template <bool D = Distributed, class = std::enable_if_t<D>>
  std::int64_t global_rows() const {
    return impl_->global_rows();
  }
  template <bool D = Distributed, class = std::enable_if_t<D>>
  std::int64_t first_row() const {
    return impl_->first_row();
  }
  template <bool D = Distributed, class = std::enable_if_t<D>>
  void sum_over_ranks(double* values, int count) const {
    impl_->sum_over_ranks(values, count);
  }
  template <bool D = Distributed, class = std::enable_if_t<D>>
  std::vector<double> gather_from_ranks(const std::vector<double>& mine) const {
    return impl_->gather_from_ranks(mine);
  }

 private:
  template <class To, class From>
  static To strided(const From& v) {
    return To(v.data(), Kokkos::LayoutStride(v.extent(0), v.stride(0), v.extent(1), v.stride(1)));
  }

  struct Concept {
    virtual ~Concept() = default;
    virtual int num_rows() const = 0;
    virtual int num_cols() const = 0;
    virtual std::size_t bytes() const = 0;
    virtual bool block_kernel() const = 0;
    virtual void apply(double alpha, const ConstVector& x, double beta, const Vector& y) const = 0;
    virtual void apply_block(double alpha, const ConstBlock& x, double beta, const Block& y) const = 0;
    virtual std::int64_t global_rows() const = 0;
    virtual std::int64_t first_row() const = 0;
    virtual void sum_over_ranks(double* values, int count) const = 0;
    virtual std::vector<double> gather_from_ranks(const std::vector<double>& mine) const = 0;
  };

  template <class Op>
  struct Model final : Concept {
    explicit Model(const Op& o) : op(o) {}
    const Op& op;
    int num_rows() const override { return static_cast<int>(op.num_rows()); }
    int num_cols() const override { return static_cast<int>(op.num_cols()); }
    std::size_t bytes() const override { return operator_bytes(op); }
    bool block_kernel() const override { return has_block_apply<Op>::value; }
    void apply(double alpha, const ConstVector& x, double beta, const Vector& y) const override {
      op.apply(alpha, x, beta, y);
    }
    void apply_block(double alpha, const ConstBlock& x, double beta, const Block& y) const override {
      if constexpr (has_block_apply<Op>::value) {
        op.apply(alpha, x, beta, y);
      } else {
        (void)alpha, (void)x, (void)beta, (void)y;
        throw std::logic_error("cispmv::OperatorRef: a block product of an operator without a block kernel");
      }
    }
    std::int64_t global_rows() const override {
      if constexpr (Distributed) return static_cast<std::int64_t>(op.global_rows());
      return op.num_rows();
    }
    std::int64_t first_row() const override {
      if constexpr (Distributed) return static_cast<std::int64_t>(op.first_row());
      return 0;
    }
    void sum_over_ranks(double* values, int count) const override {
      if constexpr (Distributed) op.sum_over_ranks(values, count);
      (void)values, (void)count;
    }
    std::vector<double> gather_from_ranks(const std::vector<double>& mine) const override {
      if constexpr (Distributed) return op.gather_from_ranks(mine);
      return mine;
    }
  };

  std::shared_ptr<const Concept> impl_;
};

}  // namespace cispmv
