#pragma once
/// \file ci/singlet.hpp
/// The factored Hamiltonian on the singlet half of an M_S = 0 space: ci::SingletHamiltonian, an operator for the
/// Davidson (cispmv/operator.hpp) whose vectors hold one entry per pair of a determinant and its transpose (alpha
/// and beta strings exchanged), as PySCF's direct_spin0 keeps c = c^T.
///
/// A vector c of the space with c(a, b) = c(b, a) (the singlets, quintets, ... of the space) is packed into p:
/// p_k = sqrt(2) c(a, b) for a pair of two determinants, p_k = c(a, a) for a determinant that is its own transpose.
/// The packing is an isometry (p . p' = c . c'), so the Davidson on the packed operator S^T H S (S: p -> c) finds
/// the same energies and residual norms as on H restricted to such vectors, with half the vector memory and half
/// the work outside the products; each product is the factored Hamiltonian's singlet product
/// (FactoredOptions::singlet: half its terms). States that are odd under the exchange (triplets, ...) are out of its
/// reach: `cispmv ci --singlet`.

#include <Kokkos_Core.hpp>

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/factored.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/impl/convert_helpers.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::impl {

/// p = beta p + alpha S^T y for y symmetric: p_k = sqrt(2) y(rep_k) for a pair, y(rep_k) for a determinant that is
/// its own transpose.
template <class R, class Y, class P>
struct SingletPack {
  R rep, partner;
  Y y;
  P p;
  double alpha, beta;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const double v = alpha * (rep(k) == partner(k) ? 1.0 : M_SQRT2) * y(rep(k));
    p(k) = beta == 0.0 ? v : beta * p(k) + v;
  }
};

/// c = S p: c(rep_k) = c(partner_k) = p_k / sqrt(2) for a pair, p_k for a determinant that is its own transpose.
template <class R, class P, class C>
struct SingletUnpack {
  R rep, partner;
  P p;
  C c;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const bool pair = rep(k) != partner(k);
    const double v = pair ? p(k) * M_SQRT1_2 : p(k);
    c(rep(k)) = v;
    if (pair) c(partner(k)) = v;
  }
};

/// out(k) = full(rep_k): a quantity of the space's rows (the diagonal) at the packed vector's rows.
template <class R, class F, class O>
struct SingletGather {
  R rep;
  F full;
  O out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const { out(k) = full(rep(k)); }
};

}  // namespace cispmv::impl

namespace cispmv::ci {

/// The factored Hamiltonian (FactoredOptions::singlet) on packed vectors of the symmetric half of a space (see the
/// file's comment), in the memory of Exec.
template <class Exec>
class SingletHamiltonian {
 public:
  using execution_space = Exec;
  using memory_space = typename Exec::memory_space;
  using value_type = double;
  using Index = Kokkos::View<std::int32_t*, memory_space>;
  using Vector = Kokkos::View<double*, memory_space>;

  /// Builds the factored Hamiltonian with FactoredOptions::singlet and the packing: each determinant with its
  /// transpose, the earlier of the two first (O(determinants) on the host). Throws std::invalid_argument for a space
  /// whose alpha and beta strings differ (M_S != 0, or an open-shell reference).
  SingletHamiltonian(const Exec& exec, const FciDump& integrals, const DeterminantSpace& space,
                     FactoredOptions options = {})
      : exec_(exec), full_(exec, integrals, space, with_singlet(options)) {
    const auto d = full_.tables();
    const auto s = full_.singlet_tables();
    const auto host = [](const auto& v) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v); };
    const auto lo = host(d.a_lo), hi = host(d.a_hi), self = host(s.a_self), q_alpha = host(s.q_alpha);
    const auto rowbase = host(d.a_rowbase);  // (one declaration each: their types differ)
    const auto rank = host(d.q_rank);
    const auto position = host(d.q_position);
    const auto index = [&](std::int32_t a, int q) {
      return rowbase(static_cast<std::size_t>(a) * static_cast<std::size_t>(d.nkb) + rank(q)) + position(q);
    };
    std::vector<std::int32_t> rep, partner;
    rep.reserve(static_cast<std::size_t>(full_.num_rows()) / 2 + lo.extent(0));
    partner.reserve(rep.capacity());
    for (std::int32_t a = 0; a < static_cast<std::int32_t>(lo.extent(0)); ++a) {
      for (int q = lo(a); q < hi(a); ++q) {
        const std::int64_t i = index(a, q), t = index(q_alpha(q), self(a));
        if (i > t) continue;
        rep.push_back(static_cast<std::int32_t>(i));
        partner.push_back(static_cast<std::int32_t>(t));
      }
    }
    rep_ = impl::view_of<std::int32_t, memory_space>("cispmv::singlet::rep", rep);
    partner_ = impl::view_of<std::int32_t, memory_space>("cispmv::singlet::partner", partner);
    x_ = Vector(Kokkos::view_alloc(exec_, "cispmv::singlet::x"), static_cast<std::size_t>(full_.num_rows()));
    y_ = Vector(Kokkos::view_alloc(exec_, "cispmv::singlet::y"), static_cast<std::size_t>(full_.num_rows()));
  }

  /// Rows of the packed vectors: pairs of a determinant and its transpose, and determinants that are their own.
  int num_rows() const { return static_cast<int>(rep_.extent(0)); }
  int num_cols() const { return num_rows(); }
  /// Determinants of the space.
  int space_rows() const { return full_.num_rows(); }
  /// The factored Hamiltonian's bytes, two vectors of the space and the packing's two indices a packed row.
  std::size_t bytes() const { return full_.bytes() + 16 * x_.extent(0) + 8 * rep_.extent(0); }
  const FactoredHamiltonian<Exec>& factored() const { return full_; }

  /// yp = beta yp + alpha S^T H S xp (packed vectors of num_rows() entries in memory_space; yp may not alias xp).
  template <class XView, class YView>
  void apply(double alpha, const XView& xp, double beta, const YView& yp) const {
    if (xp.extent(0) != rep_.extent(0) || yp.extent(0) != rep_.extent(0)) {
      throw std::invalid_argument("cispmv::ci::SingletHamiltonian::apply: x has " + std::to_string(xp.extent(0)) +
                                  " entries and y " + std::to_string(yp.extent(0)) + ", the packed space " +
                                  std::to_string(rep_.extent(0)) + " rows");
    }
    unpack(xp, x_);
    full_.apply(1.0, x_, 0.0, y_);
    Kokkos::parallel_for("cispmv::ci::singlet_pack", policy(),
                         impl::SingletPack<Index, Vector, YView>{rep_, partner_, y_, yp, alpha, beta});
  }
  /// c = S p: a packed vector as the symmetric vector of the space (space_rows() entries) it stands for.
  template <class P, class C>
  void unpack(const P& p, const C& c) const {
    Kokkos::parallel_for("cispmv::ci::singlet_unpack", policy(),
                         impl::SingletUnpack<Index, P, C>{rep_, partner_, p, c});
  }
  /// out(k) = full(rep_k): a quantity of the space's determinants (the diagonal) at the packed rows.
  template <class F, class O>
  void gather(const F& full, const O& out) const {
    Kokkos::parallel_for("cispmv::ci::singlet_gather", policy(), impl::SingletGather<Index, F, O>{rep_, full, out});
  }
  /// The packed rows' determinants (their indices in the space): row k stands for representatives()[k] and its
  /// transpose partners()[k], the same determinant where it is its own transpose.
  std::vector<std::int32_t> representatives() const { return on_host(rep_); }
  std::vector<std::int32_t> partners() const { return on_host(partner_); }

 private:
  static FactoredOptions with_singlet(FactoredOptions o) {
    o.singlet = true;
    return o;
  }
  static std::vector<std::int32_t> on_host(const Index& v) {
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    return std::vector<std::int32_t>(h.data(), h.data() + h.extent(0));
  }
  Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>> policy() const {
    return {exec_, 0, static_cast<std::int64_t>(rep_.extent(0))};
  }

  Exec exec_;
  FactoredHamiltonian<Exec> full_;
  Index rep_, partner_;
  Vector x_, y_;  // the space's vectors of a product: S xp and H S xp
};

}  // namespace cispmv::ci
