// FCIDUMP reader (Knowles and Handy, Comput. Phys. Commun. 54 (1989) 75), in the dialects of PySCF,
// Psi4 and Molpro.
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/ci/determinants.hpp"
#include "cispmv/errors.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cispmv::ci {

namespace {

[[noreturn]] void fail(const std::string& source, int line, const std::string& what) {
  throw ParseError(source, line > 0 ? static_cast<std::size_t>(line) : 0, what);
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

struct Token {
  std::string text;
  int line;
};

// Splits the namelist into keys, '=' and values; commas and blanks only separate.
void tokenize_namelist_line(const std::string& text, int line, std::vector<Token>& tokens) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
      ++i;
    } else if (c == '=') {
      tokens.push_back({"=", line});
      ++i;
    } else {
      std::size_t j = i;
      while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) && text[j] != ',' &&
             text[j] != '=') {
        ++j;
      }
      tokens.push_back({text.substr(i, j - i), line});
      i = j;
    }
  }
}

bool is_key(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool parse_int(const std::string& s, long& value) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtol(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size();
}

// A decimal real number ("1.5", "-2.0E-03", Fortran's "1.0D-01"): what strtod reads, less its
// hexadecimal floats, "inf" and "nan" (an FCIDUMP never holds them; a file that does is corrupt).
// Returns "" on success, else what is wrong with `s`.
std::string parse_real(std::string s, double& value) {
  if (s.empty()) return "an empty field";
  if (s.find_first_not_of("0123456789+-.eEdD") != std::string::npos) {
    return "not a decimal real number (no hexadecimal, inf or nan)";
  }
  std::replace(s.begin(), s.end(), 'D', 'E');
  std::replace(s.begin(), s.end(), 'd', 'e');
  errno = 0;
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || end == s.c_str()) return "not a real number";
  if (errno == ERANGE && std::abs(value) > 1.0) return "out of the range of a double";
  return "";
}

// std::getline with a bound: a line longer than this is not an FCIDUMP line (a binary file,
// /dev/zero), and is refused before it fills memory.
constexpr std::size_t max_line = std::size_t{1} << 20;
bool read_line(std::istream& in, std::string& text, const std::string& source, int line_no) {
  text.clear();
  std::streambuf* buf = in.rdbuf();
  bool any = false;
  for (;;) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      if (!any) in.setstate(std::ios::eofbit | std::ios::failbit);
      return any;
    }
    any = true;
    if (c == '\n') return true;
    if (text.size() == max_line) {
      fail(source, line_no + 1, "a line longer than 1 MiB: not an FCIDUMP text file");
    }
    text.push_back(static_cast<char>(c));
  }
}

struct NamelistEntry {
  std::vector<Token> values;
  int line = 0;
};

int single_int(const std::string& source, const std::string& key, const NamelistEntry& e) {
  if (e.values.size() != 1) {
    fail(source, e.line, "expected one integer value for " + key + ", got " + std::to_string(e.values.size()));
  }
  long v = 0;
  if (!parse_int(e.values[0].text, v)) {
    fail(source, e.values[0].line,
         "expected an integer for " + key + ", got " + quote_excerpt(e.values[0].text) +
             (errno == ERANGE ? " (out of range)" : ""));
  }
  if (v < -2147483647L || v > 2147483647L) {
    fail(source, e.values[0].line, key + " = " + e.values[0].text.substr(0, 30) + " is out of range");
  }
  return static_cast<int>(v);
}

using Namelist = std::vector<std::pair<std::string, NamelistEntry>>;

/// The tokens of the &FCI namelist, from its header line to `&END` or `/`; `line_no` ends on the
/// namelist's last line.
std::vector<Token> read_namelist_tokens(std::istream& in, const std::string& source, int& line_no) {
  std::string text;
  bool started = false;
  bool finished = false;
  std::vector<Token> tokens;
  auto blank = [](const std::string& t) {
    return std::all_of(t.begin(), t.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  };
  while (!finished && read_line(in, text, source, line_no)) {
    ++line_no;
    std::string rest = text;
    if (!started) {
      const std::string up = upper(text);
      const std::size_t at = up.find("&FCI");
      if (at == std::string::npos) {
        if (blank(text)) continue;
        fail(source, line_no, "expected the '&FCI' namelist header, got " + quote_excerpt(text));
      }
      if (!blank(text.substr(0, at))) {
        fail(source, line_no, "text before the '&FCI' namelist header: " + quote_excerpt(text.substr(0, at)));
      }
      started = true;
      rest = text.substr(at + 4);
    }
    // The namelist ends at &END (also $END in old files) or at a '/'.
    const std::string up = upper(rest);
    std::size_t end = std::string::npos;
    for (const char* marker : {"&END", "$END", "/"}) {
      end = std::min(end, up.find(marker));
    }
    if (end != std::string::npos) {
      rest = rest.substr(0, end);
      finished = true;
    }
    tokenize_namelist_line(rest, line_no, tokens);
  }
  if (!started) fail(source, 0, "empty file: expected the '&FCI' namelist header");
  if (!finished) fail(source, line_no, "end of file inside the &FCI namelist: expected '&END' or '/'");

  return tokens;
}

/// The namelist's `KEY = value[, value...]` entries, keys upper-cased, in file order.
Namelist group_entries(const std::vector<Token>& tokens, const std::string& source) {
  Namelist entries;
  for (std::size_t t = 0; t < tokens.size();) {
    const Token& key = tokens[t];
    if (!is_key(key.text) || t + 1 >= tokens.size() || tokens[t + 1].text != "=") {
      fail(source, key.line, "expected 'KEY=value' in the &FCI namelist, got " + quote_excerpt(key.text));
    }
    for (const auto& [seen, earlier] : entries) {
      if (seen == upper(key.text)) {
        fail(source, key.line,
             seen + " is given twice in the &FCI namelist (first on line " + std::to_string(earlier.line) + ")");
      }
    }
    NamelistEntry entry;
    entry.line = key.line;
    t += 2;
    // A value list runs up to the next 'KEY ='.
    while (t < tokens.size() && !(t + 1 < tokens.size() && tokens[t + 1].text == "=")) {
      if (tokens[t].text == "=") fail(source, tokens[t].line, "unexpected '=' in the &FCI namelist");
      entry.values.push_back(tokens[t]);
      ++t;
    }
    entries.emplace_back(upper(key.text), std::move(entry));
  }

  return entries;
}

/// The header values (NORB, NELEC, MS2, ISYM, ORBSYM) checked, as an FciDump with zero integrals.
FciDump header_from_namelist(const Namelist& entries, const std::string& source, int line_no,
                             OrbsymNumbering numbering) {
  auto find = [&](const std::string& key) -> const NamelistEntry* {
    const NamelistEntry* found = nullptr;
    for (const auto& e : entries) {
      if (e.first == key) found = &e.second;
    }
    return found;
  };

  const NamelistEntry* norb_entry = find("NORB");
  const NamelistEntry* nelec_entry = find("NELEC");
  if (norb_entry == nullptr) fail(source, line_no, "the &FCI namelist has no NORB");
  if (nelec_entry == nullptr) fail(source, line_no, "the &FCI namelist has no NELEC");
  const int norb = single_int(source, "NORB", *norb_entry);
  const int nelec = single_int(source, "NELEC", *nelec_entry);
  if (norb < 1 || norb > max_orbitals) {
    fail(source, norb_entry->line,
         "expected 1 <= NORB <= " + std::to_string(max_orbitals) + " (64-bit occupation strings), got " +
             std::to_string(norb));
  }
  if (nelec < 0 || nelec > 2 * norb) {
    fail(source, nelec_entry->line,
         "expected 0 <= NELEC <= 2*NORB = " + std::to_string(2 * norb) + ", got " + std::to_string(nelec));
  }
  FciDump dump(norb, nelec, 0);
  if (const NamelistEntry* e = find("MS2")) {
    dump.ms2 = single_int(source, "MS2", *e);
    if (dump.ms2 < -nelec || dump.ms2 > nelec || (nelec + dump.ms2) % 2 != 0 || (nelec + dump.ms2) / 2 > norb ||
        (nelec - dump.ms2) / 2 > norb) {
      fail(source, e->line,
           "MS2 = " + std::to_string(dump.ms2) + " is impossible for NELEC = " + std::to_string(nelec) +
               " in NORB = " + std::to_string(norb) + " orbitals");
    }
  }
  if (const NamelistEntry* e = find("ISYM")) {
    dump.isym = single_int(source, "ISYM", *e);
    if (dump.isym < 1 || dump.isym > 8) {
      fail(source, e->line, "expected ISYM in 1..8 (Molpro irrep numbering), got " + std::to_string(dump.isym));
    }
  }
  if (const NamelistEntry* e = find("ORBSYM")) {
    if (e->values.size() != static_cast<std::size_t>(norb)) {
      fail(source, e->line,
           "expected NORB = " + std::to_string(norb) + " ORBSYM values, got " + std::to_string(e->values.size()));
    }
    std::vector<long> values(static_cast<std::size_t>(norb));
    for (int p = 0; p < norb; ++p) {
      if (!parse_int(e->values[p].text, values[static_cast<std::size_t>(p)])) {
        fail(source, e->values[p].line, "expected an ORBSYM value, got " + quote_excerpt(e->values[p].text));
      }
    }
    if (numbering == OrbsymNumbering::automatic) {
      numbering = std::find(values.begin(), values.end(), 0L) != values.end() ? OrbsymNumbering::pyscf
                                                                              : OrbsymNumbering::molpro;
    }
    const bool pyscf = numbering == OrbsymNumbering::pyscf;
    for (int p = 0; p < norb; ++p) {
      const long v = values[static_cast<std::size_t>(p)];
      if (v < (pyscf ? 0 : 1) || v > (pyscf ? 7 : 8)) {
        fail(source, e->values[p].line,
             pyscf ? "expected ORBSYM values in 0..7 (PySCF's irrep ids), got " + quote_excerpt(e->values[p].text)
                   : "expected ORBSYM values in 1..8 (Molpro's numbering; PySCF's own ids 0..7 are read with "
                     "--orbsym pyscf), got " +
                         quote_excerpt(e->values[p].text));
      }
      dump.orbsym[p] = static_cast<int>(pyscf ? v + 1 : v);
    }
    dump.orbsym_numbering = numbering;
  }
  for (const char* key : {"IUHF", "UHF"}) {
    if (const NamelistEntry* e = find(key)) {
      const std::string v = e->values.empty() ? "" : upper(e->values[0].text);
      if (v == "1" || v == ".TRUE." || v == "T" || v == ".T.") {
        fail(source, e->line, "unrestricted (spin-dependent) integrals are not supported");
      }
    }
  }
  return dump;
}

/// Reads the integral lines `value i j k l` into `dump`.
void read_integrals(std::istream& in, const std::string& source, int& line_no, FciDump& dump) {
  const int norb = dump.num_orbitals;
  std::vector<double> energies(static_cast<std::size_t>(norb), 0.0);
  int num_energies = 0;
  std::vector<char> has_energy(static_cast<std::size_t>(norb), 0);
  // which integrals were given: the same one twice must agree (some programs write permutations of
  // one integral, PySCF with the last digits printed differently: 1e-10 relative is "the same")
  std::vector<char> has_one(dump.one_electron.size(), 0), has_two(dump.two_electron.size(), 0);
  auto once = [&](char& seen, double& slot, double value, const char* what) {
    if (seen && !(std::abs(slot - value) <= 1e-10 * std::max({1.0, std::abs(slot), std::abs(value)}))) {
      fail(source, line_no,
           std::string(what) + " given twice with different values (" + std::to_string(slot) + " earlier, now " +
               std::to_string(value) + ")");
    }
    seen = 1;
    slot = value;
  };
  char has_core = 0;
  std::string text;
  while (read_line(in, text, source, line_no)) {
    ++line_no;
    std::istringstream ls(text);
    std::string fields[6];
    int count = 0;
    while (count < 6 && ls >> fields[count]) ++count;
    if (count == 0) continue;
    if (count != 5) {
      fail(source, line_no, "expected an integral line 'value i j k l', got " + quote_excerpt(text));
    }
    double value = 0.0;
    const std::string bad = parse_real(fields[0], value);
    if (!bad.empty()) {
      fail(source, line_no,
           "expected a real number as the integral value, got " + quote_excerpt(fields[0]) + ": " + bad);
    }
    long idx[4];
    for (int a = 0; a < 4; ++a) {
      if (!parse_int(fields[a + 1], idx[a])) {
        fail(source, line_no, "expected an integer orbital index, got " + quote_excerpt(fields[a + 1]));
      }
      if (idx[a] < 0 || idx[a] > norb) {
        fail(source, line_no,
             "orbital index " + std::to_string(idx[a]) + " is outside 1..NORB = 1.." + std::to_string(norb) +
                 " (0 only as a placeholder)");
      }
    }
    const int i = static_cast<int>(idx[0]) - 1;
    const int j = static_cast<int>(idx[1]) - 1;
    const int k = static_cast<int>(idx[2]) - 1;
    const int l = static_cast<int>(idx[3]) - 1;
    if (i >= 0 && j >= 0 && k >= 0 && l >= 0) {
      const std::size_t at = FciDump::eri_index(i, j, k, l);
      once(has_two[at], dump.two_electron[at], value, "the two-electron integral");
    } else if (i >= 0 && j >= 0 && k < 0 && l < 0) {
      const std::size_t at = static_cast<std::size_t>(std::max(i, j)) * norb + std::min(i, j);
      once(has_one[at], dump.one_electron[at], value, "the one-electron integral");
      dump.set_one(i, j, value);
    } else if (i >= 0 && j < 0 && k < 0 && l < 0) {
      // Orbital energy: not part of the Hamiltonian; it orders the orbitals for the reference.
      energies[static_cast<std::size_t>(i)] = value;
      if (!has_energy[static_cast<std::size_t>(i)]) ++num_energies;
      has_energy[static_cast<std::size_t>(i)] = 1;
    } else if (i < 0 && j < 0 && k < 0 && l < 0) {
      once(has_core, dump.core_energy, value, "the core energy (0 0 0 0)");
    } else {
      fail(source, line_no,
           "expected the indices 'i j k l', 'i j 0 0', 'i 0 0 0' or '0 0 0 0', got '" + fields[1] + " " + fields[2] +
               " " + fields[3] + " " + fields[4] + "'");
    }
  }
  if (num_energies == norb) dump.orbital_energies = std::move(energies);
  dump.has_core_energy = has_core != 0;
}

}  // namespace

FciDump::FciDump(int norb, int nelec, int ms2_value)
    : num_orbitals(norb),
      num_electrons(nelec),
      ms2(ms2_value),
      orbsym(static_cast<std::size_t>(norb), 1),
      one_electron(static_cast<std::size_t>(norb) * norb, 0.0) {
  const std::size_t npair = static_cast<std::size_t>(norb) * (norb + 1) / 2;
  two_electron.assign(npair * (npair + 1) / 2, 0.0);
}

void FciDump::set_one(int p, int q, double value) {
  one_electron[static_cast<std::size_t>(p) * num_orbitals + q] = value;
  one_electron[static_cast<std::size_t>(q) * num_orbitals + p] = value;
}

void FciDump::set_two(int p, int q, int r, int s, double value) { two_electron[eri_index(p, q, r, s)] = value; }

FciDump permute_orbitals(const FciDump& dump, const std::vector<int>& order) {
  const int n = dump.num_orbitals;
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  if (order.size() != static_cast<std::size_t>(n)) {
    throw std::invalid_argument("cispmv::permute_orbitals: " + std::to_string(order.size()) + " entries for " +
                                std::to_string(n) + " orbitals");
  }
  for (int p : order) {
    if (p < 0 || p >= n || seen[static_cast<std::size_t>(p)]) {
      throw std::invalid_argument("cispmv::permute_orbitals: the order is not a permutation of 0.." +
                                  std::to_string(n - 1) + " (entry " + std::to_string(p) + ")");
    }
    seen[static_cast<std::size_t>(p)] = 1;
  }
  FciDump out(n, dump.num_electrons, dump.ms2);
  out.isym = dump.isym;
  out.core_energy = dump.core_energy;
  out.has_core_energy = dump.has_core_energy;
  auto old = [&](int p) { return order[static_cast<std::size_t>(p)]; };
  for (int p = 0; p < n; ++p) {
    out.orbsym[static_cast<std::size_t>(p)] = dump.orbsym.empty() ? 1 : dump.orbsym[static_cast<std::size_t>(old(p))];
    for (int q = 0; q < n; ++q) out.one_electron[static_cast<std::size_t>(p) * n + q] = dump.one(old(p), old(q));
  }
  if (!dump.orbital_energies.empty()) {
    out.orbital_energies.resize(static_cast<std::size_t>(n));
    for (int p = 0; p < n; ++p)
      out.orbital_energies[static_cast<std::size_t>(p)] = dump.orbital_energies[static_cast<std::size_t>(old(p))];
  }
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q <= p; ++q) {
      for (int r = 0; r < n; ++r) {
        for (int s = 0; s <= r; ++s) out.set_two(p, q, r, s, dump.two(old(p), old(q), old(r), old(s)));
      }
    }
  }
  return out;
}

std::vector<int> irrep_blocked_order(const FciDump& dump) {
  std::vector<int> order(static_cast<std::size_t>(dump.num_orbitals));
  for (int p = 0; p < dump.num_orbitals; ++p) order[static_cast<std::size_t>(p)] = p;
  if (dump.orbsym.empty()) return order;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return dump.orbsym[static_cast<std::size_t>(a)] < dump.orbsym[static_cast<std::size_t>(b)];
  });
  return order;
}

FciDump parse_fcidump(std::istream& in, const std::string& source, const OrbsymNumbering numbering) {
  int line_no = 0;
  const std::vector<Token> tokens = read_namelist_tokens(in, source, line_no);
  FciDump dump = header_from_namelist(group_entries(tokens, source), source, line_no, numbering);
  read_integrals(in, source, line_no, dump);
  return dump;
}

FciDump read_fcidump(const std::string& path, const OrbsymNumbering numbering) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the FCIDUMP file: " + std::strerror(errno));
  if (std::filesystem::is_directory(path)) throw std::runtime_error(path + ": is a directory, not an FCIDUMP file");
  return parse_fcidump(in, path, numbering);
}

std::string orbsym_numbering_name(const OrbsymNumbering numbering) {
  switch (numbering) {
    case OrbsymNumbering::molpro: return "Molpro's (1..8)";
    case OrbsymNumbering::pyscf: return "PySCF's (0..7)";
    default: return "none given";
  }
}

}  // namespace cispmv::ci
