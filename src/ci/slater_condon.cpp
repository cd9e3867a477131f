// Slater-Condon rules: matrix elements of the FCIDUMP Hamiltonian between determinants.
#include "cispmv/ci/slater_condon.hpp"

#include <cstdint>
#include <vector>

namespace cispmv::ci {

namespace {
inline std::uint64_t bit(int p) { return std::uint64_t{1} << p; }
}  // namespace

SlaterCondon::SlaterCondon(const FciDump& integrals) : integrals_(&integrals), n_(integrals.num_orbitals) {
  coulomb_.resize(static_cast<std::size_t>(n_) * n_);
  exchange_.resize(static_cast<std::size_t>(n_) * n_);
  for (int p = 0; p < n_; ++p) {
    for (int q = 0; q < n_; ++q) {
      coulomb_[static_cast<std::size_t>(p) * n_ + q] = integrals.two(p, p, q, q);
      exchange_[static_cast<std::size_t>(p) * n_ + q] = integrals.two(p, q, q, p);
    }
  }
}

double SlaterCondon::diagonal(const Determinant& d) const {
  int oa[64], ob[64];
  int na = 0, nb = 0;
  for (std::uint64_t s = d.alpha; s != 0; s &= s - 1) oa[na++] = __builtin_ctzll(s);
  for (std::uint64_t s = d.beta; s != 0; s &= s - 1) ob[nb++] = __builtin_ctzll(s);
  const FciDump& ints = *integrals_;
  double e = 0.0;
  for (int x = 0; x < na; ++x) {
    const int p = oa[x];
    const double* J = &coulomb_[static_cast<std::size_t>(p) * n_];
    const double* K = &exchange_[static_cast<std::size_t>(p) * n_];
    e += ints.one(p, p);
    for (int y = 0; y < x; ++y) e += J[oa[y]] - K[oa[y]];
    for (int y = 0; y < nb; ++y) e += J[ob[y]];
  }
  for (int x = 0; x < nb; ++x) {
    const int p = ob[x];
    const double* J = &coulomb_[static_cast<std::size_t>(p) * n_];
    const double* K = &exchange_[static_cast<std::size_t>(p) * n_];
    e += ints.one(p, p);
    for (int y = 0; y < x; ++y) e += J[ob[y]] - K[ob[y]];
  }
  return e;
}

double SlaterCondon::single(std::uint64_t same, std::uint64_t other, int i, int a) const {
  const FciDump& ints = *integrals_;
  double v = ints.one(i, a);
  for (std::uint64_t s = same & ~bit(i); s != 0; s &= s - 1) {
    const int k = __builtin_ctzll(s);
    v += ints.two(i, a, k, k) - ints.two(i, k, k, a);
  }
  for (std::uint64_t s = other; s != 0; s &= s - 1) {
    const int k = __builtin_ctzll(s);
    v += ints.two(i, a, k, k);
  }
  return excitation_sign(same, i, a) * v;
}

double SlaterCondon::double_same_spin(std::uint64_t same, int i, int j, int a, int b) const {
  const FciDump& ints = *integrals_;
  const double sign = excitation_sign(same, i, a) * excitation_sign(same ^ bit(i) ^ bit(a), j, b);
  return sign * (ints.two(i, a, j, b) - ints.two(i, b, j, a));
}

double SlaterCondon::double_opposite_spin(std::uint64_t alpha, std::uint64_t beta, int i, int a, int j, int b) const {
  return excitation_sign(alpha, i, a) * excitation_sign(beta, j, b) * integrals_->two(i, a, j, b);
}

double SlaterCondon::element(const Determinant& bra, const Determinant& ket) const {
  if (__builtin_popcountll(bra.alpha) != __builtin_popcountll(ket.alpha) ||
      __builtin_popcountll(bra.beta) != __builtin_popcountll(ket.beta)) {
    return 0.0;  // H conserves the number of electrons of each spin
  }
  const std::uint64_t da = bra.alpha ^ ket.alpha;
  const std::uint64_t db = bra.beta ^ ket.beta;
  const int nda = __builtin_popcountll(da);
  const int ndb = __builtin_popcountll(db);
  if (nda + ndb == 0) return diagonal(ket);
  if (nda + ndb > 4) return 0.0;
  auto low = [](std::uint64_t s) { return __builtin_ctzll(s); };
  auto high = [](std::uint64_t s) { return 63 - __builtin_clzll(s); };
  if (nda == 2 && ndb == 0) return single(ket.alpha, ket.beta, low(ket.alpha & da), low(bra.alpha & da));
  if (nda == 0 && ndb == 2) return single(ket.beta, ket.alpha, low(ket.beta & db), low(bra.beta & db));
  if (nda == 4) {
    return double_same_spin(ket.alpha, low(ket.alpha & da), high(ket.alpha & da), low(bra.alpha & da),
                            high(bra.alpha & da));
  }
  if (ndb == 4) {
    return double_same_spin(ket.beta, low(ket.beta & db), high(ket.beta & db), low(bra.beta & db), high(bra.beta & db));
  }
  return double_opposite_spin(ket.alpha, ket.beta, low(ket.alpha & da), low(bra.alpha & da), low(ket.beta & db),
                              low(bra.beta & db));
}

}  // namespace cispmv::ci
