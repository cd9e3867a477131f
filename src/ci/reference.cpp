// The reference determinant: aufbau on orbital energies (the file's or a self-consistent Fock
// diagonal), honouring ISYM, or what the user asks for.
#include "cispmv/ci/reference.hpp"
#include "cispmv/ci/slater_condon.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::ci {

namespace {

inline std::uint64_t bit(int p) { return std::uint64_t{1} << p; }

std::string fail_prefix() { return "cispmv reference determinant: "; }

// Occupies the `n` orbitals of lowest energy (ties by orbital number); with `per_irrep` (one count per
// irrep, 0-based irreps) the lowest `per_irrep[h]` orbitals of each irrep h instead.
std::uint64_t occupy(const std::vector<double>& energy, int n, const std::vector<int>& orbsym,
                     const std::vector<int>* per_irrep) {
  std::vector<int> order(energy.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return energy[a] < energy[b]; });
  std::uint64_t s = 0;
  if (per_irrep == nullptr) {
    for (int k = 0; k < n; ++k) s |= bit(order[static_cast<std::size_t>(k)]);
    return s;
  }
  std::vector<int> left = *per_irrep;
  for (int p : order) {
    const int h = orbsym[static_cast<std::size_t>(p)] - 1;
    if (h < static_cast<int>(left.size()) && left[static_cast<std::size_t>(h)] > 0) {
      --left[static_cast<std::size_t>(h)];
      s |= bit(p);
    }
  }
  return s;
}

// f_sigma(p) of the determinant (alpha, beta): the diagonal of its Fock matrix for spin sigma.
std::vector<double> fock_diagonal(const FciDump& dump, std::uint64_t same, std::uint64_t other) {
  const int n = dump.num_orbitals;
  std::vector<double> f(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    double v = dump.one(p, p);
    for (int q = 0; q < n; ++q) {
      if ((same >> q) & 1u) v += dump.two(p, p, q, q) - dump.two(p, q, q, p);
      if ((other >> q) & 1u) v += dump.two(p, p, q, q);
    }
    f[static_cast<std::size_t>(p)] = v;
  }
  return f;
}

void check_orbitals(const std::vector<int>& occ, int expected, int norb, const std::string& spin) {
  if (static_cast<int>(occ.size()) != expected) {
    throw std::invalid_argument(fail_prefix() + std::to_string(occ.size()) + " occupied " + spin +
                                " orbitals given, but NELEC and MS2 of the FCIDUMP give " + std::to_string(expected) +
                                " " + spin + " electrons");
  }
  std::set<int> seen;
  for (int p : occ) {
    if (p < 0 || p >= norb) {
      throw std::invalid_argument(fail_prefix() + spin + " orbital " + std::to_string(p + 1) +
                                  " is outside 1..NORB = 1.." + std::to_string(norb));
    }
    if (!seen.insert(p).second) {
      throw std::invalid_argument(fail_prefix() + spin + " orbital " + std::to_string(p + 1) + " is given twice");
    }
  }
}

std::string join(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

Reference choose_reference(const FciDump& dump, bool restrict_to_isym, const ReferenceRequest& request) {
  const int norb = dump.num_orbitals;
  if ((dump.num_electrons + dump.ms2) % 2 != 0 || dump.num_electrons < std::abs(dump.ms2)) {
    throw std::invalid_argument(fail_prefix() + "NELEC = " + std::to_string(dump.num_electrons) + " and MS2 = " +
                                std::to_string(dump.ms2) + " give no whole number of alpha and beta electrons");
  }
  const int na = (dump.num_electrons + dump.ms2) / 2;
  const int nb = (dump.num_electrons - dump.ms2) / 2;
  if (norb < 1 || norb > max_orbitals || na > norb || nb > norb) {
    throw std::invalid_argument(fail_prefix() + std::to_string(na) + " alpha and " + std::to_string(nb) +
                                " beta electrons in " + std::to_string(norb) + " orbitals (1.." +
                                std::to_string(max_orbitals) + " supported)");
  }
  const std::vector<int> orbsym =
      dump.orbsym.empty() ? std::vector<int>(static_cast<std::size_t>(norb), 1) : dump.orbsym;
  const std::uint32_t target = static_cast<std::uint32_t>(dump.isym - 1);
  const SlaterCondon sc(dump);
  Reference ref;

  if (!request.alpha.empty() || !request.beta.empty()) {
    if (!request.docc.empty() || !request.socc.empty()) {
      throw std::invalid_argument(fail_prefix() + "give either occupied orbitals or DOCC/SOCC, not both");
    }
    check_orbitals(request.alpha, na, norb, "alpha");
    check_orbitals(request.beta, nb, norb, "beta");
    for (int p : request.alpha) ref.determinant.alpha |= bit(p);
    for (int p : request.beta) ref.determinant.beta |= bit(p);
    ref.method = "given occupied orbitals";
  }

  // Orbital energies: the file's, or the Fock diagonal found self-consistently below.
  const bool file_energies = !dump.orbital_energies.empty();
  std::vector<int> alpha_per_irrep, beta_per_irrep;
  const bool by_irrep = !request.docc.empty() || !request.socc.empty();
  if (by_irrep) {
    const std::size_t nirrep = std::max(request.docc.size(), request.socc.size());
    alpha_per_irrep.assign(nirrep, 0);
    beta_per_irrep.assign(nirrep, 0);
    std::vector<int> available(8, 0);
    for (int s : orbsym) ++available[static_cast<std::size_t>(s - 1)];
    for (std::size_t h = 0; h < nirrep; ++h) {
      const int d = h < request.docc.size() ? request.docc[h] : 0;
      const int s = h < request.socc.size() ? request.socc[h] : 0;
      if (d < 0 || s < 0) throw std::invalid_argument(fail_prefix() + "negative DOCC or SOCC entry");
      if (h >= 8 || d + s > available[h]) {
        throw std::invalid_argument(fail_prefix() + "DOCC " + join(request.docc) + " SOCC " + join(request.socc) +
                                    " asks for " + std::to_string(d + s) + " orbitals of irrep " +
                                    std::to_string(h + 1) + ", ORBSYM has " + std::to_string(h < 8 ? available[h] : 0));
      }
      alpha_per_irrep[h] = d + s;
      beta_per_irrep[h] = d;
    }
    const int sa = std::accumulate(alpha_per_irrep.begin(), alpha_per_irrep.end(), 0);
    const int sb = std::accumulate(beta_per_irrep.begin(), beta_per_irrep.end(), 0);
    if (sa != na || sb != nb) {
      throw std::invalid_argument(fail_prefix() + "DOCC " + join(request.docc) + " SOCC " + join(request.socc) +
                                  " give " + std::to_string(sa) + " alpha and " + std::to_string(sb) +
                                  " beta electrons, NELEC and MS2 of the FCIDUMP " + std::to_string(na) + " and " +
                                  std::to_string(nb));
    }
  }
  const std::vector<int>* pa = by_irrep ? &alpha_per_irrep : nullptr;
  const std::vector<int>* pb = by_irrep ? &beta_per_irrep : nullptr;

  std::vector<double> ea, eb;
  if (ref.method.empty()) {
    if (file_energies) {
      ea = eb = dump.orbital_energies;
      ref.determinant = {occupy(ea, na, orbsym, pa), occupy(eb, nb, orbsym, pb)};
      ref.method = "aufbau on the FCIDUMP's orbital energies";
    } else {
      std::vector<double> h(static_cast<std::size_t>(norb));
      for (int p = 0; p < norb; ++p) h[static_cast<std::size_t>(p)] = dump.one(p, p);
      Determinant d{occupy(h, na, orbsym, pa), occupy(h, nb, orbsym, pb)};
      std::vector<Determinant> seen;
      Determinant best = d;
      double best_energy = sc.diagonal(d);
      int iterations = 0;
      while (true) {
        seen.push_back(d);
        ea = fock_diagonal(dump, d.alpha, d.beta);
        eb = fock_diagonal(dump, d.beta, d.alpha);
        const Determinant next{occupy(ea, na, orbsym, pa), occupy(eb, nb, orbsym, pb)};
        ++iterations;
        const double e = sc.diagonal(next);
        if (e < best_energy) {
          best = next;
          best_energy = e;
        }
        if (std::find(seen.begin(), seen.end(), next) != seen.end() || iterations >= 100) break;
        d = next;
      }
      ref.determinant = best;
      ea = fock_diagonal(dump, best.alpha, best.beta);
      eb = fock_diagonal(dump, best.beta, best.alpha);
      ref.method = "aufbau on the self-consistent Fock diagonal (" + std::to_string(iterations) +
                   (iterations == 1 ? " iteration)" : " iterations)");
    }
    if (by_irrep) ref.method += ", occupations per irrep DOCC " + join(request.docc) + " SOCC " + join(request.socc);
  } else {
    ea = fock_diagonal(dump, ref.determinant.alpha, ref.determinant.beta);
    eb = fock_diagonal(dump, ref.determinant.beta, ref.determinant.alpha);
  }

  // The target irrep.
  auto irrep_of = [&](const Determinant& d) { return string_irrep(d.alpha, orbsym) ^ string_irrep(d.beta, orbsym); };
  if (restrict_to_isym && irrep_of(ref.determinant) != target) {
    if (!request.automatic()) {
      throw std::invalid_argument(fail_prefix() + "the requested reference " +
                                  describe_determinant(ref.determinant, norb, orbsym) + " has irrep " +
                                  std::to_string(irrep_of(ref.determinant) + 1) + ", the FCIDUMP's ISYM is " +
                                  std::to_string(dump.isym));
    }
    const std::uint32_t needed = irrep_of(ref.determinant) ^ target;
    double best_cost = 0;
    Determinant best{};
    bool found = false;
    for (int spin = 0; spin < 2; ++spin) {
      const std::uint64_t s = spin == 0 ? ref.determinant.alpha : ref.determinant.beta;
      const std::vector<double>& e = spin == 0 ? ea : eb;
      for (int i = 0; i < norb; ++i) {
        if (!((s >> i) & 1u)) continue;
        for (int a = 0; a < norb; ++a) {
          if ((s >> a) & 1u) continue;
          if (static_cast<std::uint32_t>((orbsym[i] - 1) ^ (orbsym[a] - 1)) != needed) continue;
          const double cost = e[static_cast<std::size_t>(a)] - e[static_cast<std::size_t>(i)];
          if (!found || cost < best_cost) {
            found = true;
            best_cost = cost;
            best = ref.determinant;
            (spin == 0 ? best.alpha : best.beta) = s ^ bit(i) ^ bit(a);
          }
        }
      }
    }
    if (!found) {
      throw std::invalid_argument(fail_prefix() + "no determinant of irrep ISYM = " + std::to_string(dump.isym) +
                                  " is one excitation from the aufbau determinant; give the reference explicitly");
    }
    ref.determinant = best;
    ref.method += ", moved to irrep ISYM = " + std::to_string(dump.isym) + " by its cheapest single excitation";
  }
  ref.orbital_energies = ea;
  ref.energy = sc.diagonal(ref.determinant);
  return ref;
}

std::vector<int> parse_orbital_list(const std::string& text, const std::string& what) {
  std::vector<int> out;
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument(what + " '" + text.substr(0, 80) + "': " + why +
                                " (expected 1-based orbital numbers and ranges, e.g. 1-3,5)");
  };
  std::size_t i = 0;
  auto number = [&]() {
    std::size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i || j - i > 3) bad("expected a number at position " + std::to_string(i + 1));
    const int v = std::stoi(text.substr(i, j - i));
    i = j;
    if (v < 1 || v > max_orbitals) bad("orbital " + std::to_string(v) + " is outside 1..64");
    return v;
  };
  if (text.empty()) bad("empty list");
  while (i < text.size()) {
    const int a = number();
    int b = a;
    if (i < text.size() && text[i] == '-') {
      ++i;
      b = number();
      if (b < a) bad("range " + std::to_string(a) + "-" + std::to_string(b) + " runs backwards");
    }
    for (int p = a; p <= b; ++p) out.push_back(p - 1);
    if (i < text.size()) {
      if (text[i] != ',') bad("unexpected '" + std::string(1, text[i]) + "'");
      ++i;
      if (i == text.size()) bad("trailing ','");
    }
  }
  return out;
}

std::vector<int> parse_irrep_counts(const std::string& text, const std::string& what) {
  std::vector<int> out;
  std::size_t i = 0;
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument(what + " '" + text.substr(0, 80) + "': " + why +
                                " (expected up to 8 counts per irrep, e.g. 3,0,1,1)");
  };
  if (text.empty()) bad("empty list");
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i || j - i > 2) bad("expected a count at position " + std::to_string(i + 1));
    out.push_back(std::stoi(text.substr(i, j - i)));
    i = j;
    if (i < text.size()) {
      if (text[i] != ',') bad("unexpected '" + std::string(1, text[i]) + "'");
      ++i;
      if (i == text.size()) bad("trailing ','");
    }
  }
  if (out.size() > 8) bad(std::to_string(out.size()) + " irreps (at most 8)");
  return out;
}

std::string describe_determinant(const Determinant& d, int num_orbitals, const std::vector<int>& orbsym) {
  auto list = [&](std::uint64_t s) {
    std::string out;
    for (int p = 0; p < num_orbitals;) {
      if (!((s >> p) & 1u)) {
        ++p;
        continue;
      }
      int q = p;
      while (q + 1 < num_orbitals && ((s >> (q + 1)) & 1u)) ++q;
      out += (out.empty() ? "" : ",") + std::to_string(p + 1) + (q > p ? "-" + std::to_string(q + 1) : "");
      p = q + 1;
    }
    return out.empty() ? std::string("none") : out;
  };
  std::string s = "alpha " + list(d.alpha) + ", beta " + list(d.beta);
  int nirrep = 1;
  for (int h : orbsym) nirrep = std::max(nirrep, h);
  if (nirrep > 1) {
    std::vector<int> docc(static_cast<std::size_t>(nirrep), 0), socc(static_cast<std::size_t>(nirrep), 0);
    for (int p = 0; p < num_orbitals; ++p) {
      const bool a = (d.alpha >> p) & 1u, b = (d.beta >> p) & 1u;
      const std::size_t h = static_cast<std::size_t>(orbsym[static_cast<std::size_t>(p)] - 1);
      if (a && b) ++docc[h];
      if (a != b) ++socc[h];
    }
    s += "; DOCC " + join(docc) + " SOCC " + join(socc);
  }
  return s;
}

}  // namespace cispmv::ci
