// The `cispmv ci` command: FCIDUMP -> determinant space -> the Hamiltonian (factored, or assembled in a format) ->
// Davidson, with a report. This file reads the input, plans the run's memory and format before anything large is
// built, builds the space and writes the report; ci_factored.cpp and ci_assembled.cpp build the operator and solve.
#include "ci_run.hpp"

#include "cispmv/choose_format.hpp"
#include "cispmv/ci.hpp"
#include "cispmv/memory_budget.hpp"
#include "cispmv/registry.hpp"

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::app {

std::string ci_memory_advice(const CiCommandOptions& o, int max_level, double matrix_bytes) {
  std::string s = "What would fit: ";
  if (o.format != "csell") {
    s += "--format csell stores the matrix in ~" + format_bytes(matrix_bytes * 0.4) + " on a GPU; ";
  }
  if (o.roots > 1) s += "fewer --roots; ";
  if (!o.restrict_to_isym) s += "dropping --all-irreps keeps only irrep ISYM (~1/4 of the space in C2v); ";
  s += "a lower --level (now " + std::to_string(max_level) +
       "), or fewer orbitals (frozen core, a smaller basis) in the FCIDUMP.";
  return s;
}

void ci_refuse(const std::string& where, double need, double have, const std::string& parts,
               const std::string& advice) {
  throw MemoryBudgetError("cispmv ci: not enough " + where + " memory: the run needs about " + format_bytes(need) +
                          " (" + parts + "), " + format_bytes(have) + " are available. " + advice);
}

namespace {

using namespace cispmv::ci;
using Exec = CiRun::Exec;

/// Options that cannot work, refused before any work; --json's file checked for writing.
void check_options(const CiCommandOptions& options) {
  if (options.format == "factored" && !options.write_mtx.empty()) {
    throw std::invalid_argument(
        "cispmv ci: --write-mtx writes the assembled matrix; --format factored never builds it");
  }
  if (options.roots < 1) throw std::invalid_argument("cispmv ci: --roots must be at least 1");
  if (options.level < 0) throw std::invalid_argument("cispmv ci: --level must be >= 0");
  if (!(options.drop_tolerance >= 0)) throw std::invalid_argument("cispmv ci: the drop tolerance must be >= 0");
  if (options.format != "auto" && options.format != "factored") (void)parse_format(options.format);
  if (!options.json.empty() && options.json != "-") {
    std::ofstream probe(options.json, std::ios::app);
    if (!probe) throw std::runtime_error("cispmv ci: cannot write the --json file " + options.json);
  }
  if (!options.save_vectors.empty()) check_vector_file_writable(options.save_vectors);
  if (options.singlet && (options.format != "auto" && options.format != "factored")) {
    throw std::invalid_argument("cispmv ci: --singlet multiplies the factored Hamiltonian, not --format " +
                                options.format);
  }
  if (options.singlet &&
      (!options.write_mtx.empty() || !options.save_vectors.empty() || !options.start_vectors.empty())) {
    throw std::invalid_argument(
        "cispmv ci: --singlet keeps half-length vectors and never assembles the matrix: no --write-mtx, "
        "--save-vectors or --start-vectors with it");
  }
}

/// Errors of the libraries about this input name the file they come from.
template <class Step>
auto in_file(const CiCommandOptions& options, Step&& step) -> decltype(step()) {
  try {
    return step();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(options.fcidump + ": " + e.what());
  }
}

/// The FCIDUMP and the reference determinant, reported.
void read_input(CiRun& run) {
  Kokkos::Timer timer;
  run.dump = read_fcidump(run.options.fcidump, orbsym_numbering(run.options));
  run.timings.read = timer.seconds();
  const FciDump& dump = run.dump;
  run.out << "cispmv ci: " << run.options.fcidump << "\n";
  run.out << "  orbitals " << dump.num_orbitals << ", electrons " << dump.num_electrons << ", MS2 " << dump.ms2
          << ", ISYM " << dump.isym << ", core energy " << std::fixed << std::setprecision(10) << dump.core_energy
          << std::defaultfloat << ", ORBSYM in " << orbsym_numbering_name(dump.orbsym_numbering) << " numbering"
          << std::endl;
  if (!dump.has_core_energy) {
    run.out << "warning: " << run.options.fcidump
            << " has no core-energy line ('value 0 0 0 0'): the total energies below exclude the nuclear repulsion"
            << std::endl;
  }
  timer.reset();
  run.reference = in_file(run.options, [&] {
    return choose_reference(dump, run.options.restrict_to_isym, reference_request(run.options));
  });
  run.timings.reference = timer.seconds();
  run.out << "reference: " << describe_determinant(run.reference.determinant, dump.num_orbitals, dump.orbsym) << "\n";
  run.out << "  chosen by " << run.reference.method << "; energy " << std::fixed << std::setprecision(10)
          << run.reference.energy + dump.core_energy << " Eh" << std::defaultfloat << std::endl;
}

/// The irreps that products of the orbitals' irreps reach (1 where the space keeps one irrep).
int possible_irreps(const CiRun& run) {
  if (run.options.restrict_to_isym) return 1;
  std::uint32_t reach = 1;  // bit h: irrep h (0-based)
  for (int g : run.dump.orbsym) {
    for (int h = 0; h < 8; ++h) {
      if ((reach >> h) & 1u) reach |= 1u << (h ^ (g - 1));
    }
  }
  return __builtin_popcount(reach);
}

/// Strings of k electrons in the FCIDUMP's orbitals: an upper bound of a space's strings of one spin.
double strings_of(const FciDump& dump, int k) {
  double c = 1.0;
  for (int i = 0; i < k; ++i) c = c * (dump.num_orbitals - i) / (i + 1);
  return c;
}

/// The factored Hamiltonian's bytes where it lives, bounded from above before its lists exist: per string its row
/// of the same-spin string Hamiltonian (the string, its singles and same-spin doubles, 12 bytes each) and its
/// replacement lists (16 bytes per single); on a GPU the scatter kernel's table (4 bytes per orbital pair and beta
/// string) and the diagonal replacement's integrals (8 bytes per orbital pair and alpha string).
double factored_operator_bytes(const FciDump& dump) {
  const int n = dump.num_orbitals;
  const int na = (dump.num_electrons + dump.ms2) / 2, nb = (dump.num_electrons - dump.ms2) / 2;
  const double pairs = n * (n + 1) / 2.0;
  auto per_string = [&](int k) {
    const double singles = static_cast<double>(k) * (n - k);
    const double doubles = k * (k - 1) / 2.0 * (n - k) * (n - k - 1) / 2.0;
    return 12.0 * (1.0 + singles + doubles) + 16.0 * (1.0 + singles);
  };
  const double lists = strings_of(dump, na) * per_string(na) + strings_of(dump, nb) * per_string(nb);
  return lists + (CiRun::on_host ? 0.0 : (4.0 * strings_of(dump, nb) + 8.0 * strings_of(dump, na)) * pairs);
}

/// The factored Hamiltonian's run for `determinants`: the Davidson's rows and one vector's bytes, and the operator's
/// bytes (an upper bound). --singlet: half as many rows (and each string's own determinant, at most the square root of
/// the determinants), the operator three of the space's vectors more (x and y of a product, and its half T) and two
/// indices a packed row.
struct FactoredSizes {
  double rows = 0.0, vector = 0.0, op = 0.0;
};
FactoredSizes factored_sizes(const CiRun& run, double determinants) {
  const double packed = 0.5 * determinants + std::sqrt(determinants);
  FactoredSizes s;
  s.rows = run.options.singlet ? std::ceil(packed) : determinants;
  s.vector = s.rows * sizeof(double);
  s.op = factored_operator_bytes(run.dump) +
         (run.options.singlet ? 3.0 * determinants * sizeof(double) + 8.0 * packed : 0.0);
  return s;
}

/// Where the factored Hamiltonian's Davidson keeps its vectors, and how many fit: on the execution space beside the
/// operator and the diagonal (a subspace as large as the budget allows: solvers::davidson_memory_plan), or, where
/// not even the smallest fits there (or --subspace host), in host memory, each product's x and y copied to the
/// device. Sets run.davidson_budget and run.host_subspace; returns the plan, `fits` false where neither holds it.
solvers::DavidsonMemoryPlan plan_factored_memory(CiRun& run, double determinants, int guards) {
  const FactoredSizes sizes = factored_sizes(run, determinants);
  const auto rows = static_cast<std::size_t>(sizes.rows);
  const double vector = sizes.vector, op = sizes.op;
  solvers::DavidsonOptions o = davidson_options(run);
  o.row_blocks.clear();
  const std::string where = run.options.subspace;
  if (where != "host" || CiRun::on_host) {
    // beside the operator and the diagonal, with the space on the host (where that is the device too)
    o.memory_budget = std::max(1.0, 0.9 * run.have() - op - vector - (CiRun::on_host ? run.mem.space : 0.0));
    const auto plan = solvers::davidson_memory_plan<Exec>(rows, o, guards, false);
    if (plan.fits || where == "device" || CiRun::on_host) {
      run.davidson_budget = o.memory_budget;
      run.host_subspace = false;
      return plan;
    }
  }
  // the subspace in host memory, with the diagonal and the space; the operator, x and y on the device
  o.memory_budget = std::max(1.0, 0.9 * run.host_have - vector - run.mem.space);
  auto plan = solvers::davidson_memory_plan<Kokkos::DefaultHostExecutionSpace>(rows, o, guards, false, true);
  if (op + 2.0 * vector > 0.9 * run.device_have) plan.fits = false;
  run.davidson_budget = o.memory_budget;
  run.host_subspace = true;
  return plan;
}

bool factored_fits(CiRun& run, double determinants, int guards) {
  const bool fits = plan_factored_memory(run, determinants, guards).fits;
  run.davidson_budget = 0;
  run.host_subspace = false;
  return fits;
}

/// Before the space is built: the space's host memory, and the first choices of --format auto. The factored
/// Hamiltonian for full CI wherever its Davidson vectors fit: on a GPU its products are as fast as csell's or faster
/// (H200: all-electron H2O/6-31G 1.93 ms against 2.11, frozen core 0.273 against 0.269, its A1 0.105 against 0.137)
/// and there is no matrix to build (0.73 s end to end against 1.03 with csell, when its products were 2.4x slower);
/// on CPUs (2 cores, the tile kernel) the all-electron H2O/6-31G full CI took 11.6 s and 0.96 GB against the
/// assembled matrix's 38.9 s and 13.9 GB, the frozen core 1.13 s against 2.86, and its 5 roots 4.06 s against
/// csell's block products' 5.56. Truncated spaces keep the model's choice (the factored walk visits the
/// replacements a truncation leaves out), and so do more than 5 roots (the factored Hamiltonian multiplies one
/// vector at a time; 5 roots factored took 1.19 s, about what csell's block products take on a GPU). Then a first
/// look at the matrix: the reference's row has one entry per determinant within two excitations of it and of its own
/// irrep, counted like the space; rows of a level-ordered CI space are about as long (H2O/6-31G full CI: 679
/// against a mean of 659). Refused here only when even half of that estimate does not fit; the exact estimate after
/// the space decides every closer case.
void plan_before_space(CiRun& run) {
  const CiCommandOptions& options = run.options;
  const FciDump& dump = run.dump;
  std::ostream& out = run.out;
  const int nalpha = (dump.num_electrons + dump.ms2) / 2, nbeta = (dump.num_electrons - dump.ms2) / 2;
  const double count = count_determinants(dump.num_orbitals, nalpha, nbeta, options.level, dump.orbsym,
                                          options.restrict_to_isym ? dump.isym : 0, run.reference.determinant);
  const int guards = possible_irreps(run) > 1 ? possible_irreps(run) : 0;
  const bool may_fall_back = options.format == "auto" && options.write_mtx.empty();
  const auto choose_factored = [&](const std::string& why) {
    run.factored = true;
    out << "automatic format choice: " << why << ": the factored Hamiltonian, never assembled" << std::endl;
  };
  // the determinants listed one by one, as the assembled matrix's builders need them
  const double listed = count * (sizeof(Determinant) + 2 * sizeof(std::int32_t));
  // (the factored Hamiltonian needs less than any assembled matrix beside the same vectors: where its memory plan
  // does not fit, nothing does, and the plan says so)
  if (options.singlet && dump.ms2 != 0) {
    throw std::invalid_argument("cispmv ci: --singlet needs M_S = 0 (the FCIDUMP's MS2 is " + std::to_string(dump.ms2) +
                                ")");
  }
  if (options.singlet) {
    run.factored = true;  // (--format auto or factored: check_options)
    out << "--singlet: the factored Hamiltonian on the vectors symmetric under the exchange of alpha and beta"
        << (impl::is_gpu_space_v<Exec> ? std::string(" (on ") + Exec::name() +
                                             " with the CPUs' tile kernel, a thread a team: for checks, slower than "
                                             "the whole space's products there)"
                                       : std::string())
        << std::endl;
  } else if (may_fall_back && options.level >= dump.num_electrons && options.roots <= 5) {
    choose_factored("full CI on " + std::string(Exec::name()) +
                    " (its products are as fast as the assembled matrix's or faster, and no matrix is built)");
  } else if (may_fall_back && listed > 0.9 * run.host_have) {
    choose_factored("the space's determinants, listed, would take " + format_bytes(listed) + " of the host's " +
                    format_bytes(run.host_have));
  }
  if (run.factored) return;  // (its space is its strings alone)
  run.mem.space = listed;
  if (run.mem.space > 0.9 * run.host_have) {
    ci_refuse("host", run.mem.space, run.host_have,
              format_bytes(run.mem.space) + " for " + std::to_string(count).substr(0, 12) + " determinants alone",
              "Use a lower --level or fewer orbitals.");
  }
  const int reference_irrep = static_cast<int>(string_irrep(run.reference.determinant.alpha, dump.orbsym) ^
                                               string_irrep(run.reference.determinant.beta, dump.orbsym)) +
                              1;
  const double reference_row = count_determinants(dump.num_orbitals, nalpha, nbeta, std::min(options.level, 2),
                                                  dump.orbsym, reference_irrep, run.reference.determinant);
  const double matrix = count * reference_row * (sizeof(double) + sizeof(int));
  if (0.5 * matrix <= run.have()) return;
  if (may_fall_back && factored_fits(run, count, guards)) {
    choose_factored("the matrix (~" + format_bytes(matrix) + " in CSR, estimated) does not fit in " +
                    format_bytes(run.have()) + " on " + Exec::name());
    return;
  }
  ci_refuse(run.where(), matrix, run.have(),
            "matrix ~" + format_bytes(matrix) + " in CSR for " + std::to_string(static_cast<long long>(count)) +
                " determinants with ~" + std::to_string(static_cast<long long>(reference_row)) +
                " nonzeros per row, estimated before building the space",
            ci_memory_advice(options, std::min(options.level, dump.num_electrons), matrix));
}

/// The space, reported, and the Davidson's blocks (every irrep's rows named: its guesses and guards).
void build_space(CiRun& run) {
  Kokkos::Timer timer;
  const CiCommandOptions& options = run.options;
  run.space = in_file(options, [&] {
    return make_determinant_space(run.dump, options.level, options.restrict_to_isym, run.reference.determinant,
                                  run.factored ? SpaceListing::strings : SpaceListing::determinants);
  });
  run.timings.space = timer.seconds();
  const DeterminantSpace& space = run.space;
  if (space.size() == 0) {
    throw std::invalid_argument(
        options.fcidump + ": the space is empty: no determinant of " + std::to_string(run.dump.num_electrons) +
        " electrons (MS2 = " + std::to_string(run.dump.ms2) + ") in " + std::to_string(run.dump.num_orbitals) +
        " orbitals has irrep ISYM = " + std::to_string(run.dump.isym) + " of the ORBSYM within excitation level " +
        std::to_string(options.level) + "; check ISYM, or keep every irrep (--all-irreps)");
  }
  run.out << "  space: " << method_name(space) << " (excitation level <= " << space.max_level
          << " from the reference), irrep "
          << (space.irrep == 0 ? std::string("unrestricted") : std::to_string(space.irrep) + " only") << "\n";
  run.out << "determinants: " << space.size() << std::endl;
  run.irreps = irrep_count(space);
  run.guards = run.irreps > 1 && irreps_uncoupled(run.dump, space) ? run.irreps : 0;
  if (run.irreps > 1 && run.guards == 0)
    run.out << "  the integrals break ORBSYM (they couple the irreps): the Davidson searches the space as one"
            << std::endl;
  if (static_cast<std::size_t>(options.roots) > space.size()) {
    throw std::invalid_argument("cispmv ci: " + std::to_string(options.roots) + " roots asked for but the space has " +
                                std::to_string(space.size()) + " determinants");
  }
}

/// The assembled matrix's nonzeros, estimated from the exact lengths of up to 4096 rows spread over the space.
double estimated_nonzeros(const CiRun& run) {
  const std::size_t n = run.space.size();
  const std::size_t samples = std::min<std::size_t>(n, 4096);
  std::vector<std::int64_t> rows(samples);
  for (std::size_t i = 0; i < samples; ++i) rows[i] = static_cast<std::int64_t>(i * n / samples);
  HamiltonianOptions hopt;
  hopt.drop_tolerance = run.options.drop_tolerance;
  const auto lengths = hamiltonian_row_lengths(run.dump, run.space, rows, hopt);
  double sum = 0;
  for (std::size_t l : lengths) sum += static_cast<double>(l);
  return samples ? sum / static_cast<double>(samples) * static_cast<double>(n) : 0.0;
}

/// After the space: the assembled matrix's memory; csell built in blocks of rows where its CSR does not fit beside
/// it; the factored Hamiltonian (--format auto) or a refusal where nothing assembled fits.
void plan_assembled(CiRun& run) {
  const CiCommandOptions& options = run.options;
  CiMemoryEstimate& mem = run.mem;
  const std::size_t n = run.space.size();
  const double nnz = estimated_nonzeros(run);
  const double rows_d = static_cast<double>(n);
  mem.matrix = nnz * (sizeof(double) + sizeof(int)) + (rows_d + 1) * sizeof(std::size_t);
  const bool converts = options.format != "csr";
  const bool to_csell = options.format == "csell" || options.format == "auto";
  // a format of the same order (auto may keep CSR); csell ~0.4x of CSR on a CI Hamiltonian, ~0.85x with its values
  // inline (block products on a GPU, impl::block_values_inline, where that fits)
  const auto converted_bytes = [&] {
    return !converts ? 0.0 : to_csell ? (run.csell_values_inline ? 0.85 : 0.45) * mem.matrix : mem.matrix;
  };
  const FormatParams block_params = FormatParams::for_block_products<Exec>();
  run.csell_values_inline = to_csell && run.vectors() > 1 && block_params.min_table_coverage > 1.0;
  mem.converted = converted_bytes();
  mem.davidson = davidson_vector_bytes(options.roots, rows_d, run.guards);
  run.out << "memory estimate: matrix " << format_bytes(mem.matrix) << " in CSR (~" << std::setprecision(3) << nnz / 1e6
          << std::defaultfloat << "M nonzeros), solver " << format_bytes(mem.davidson) << "; available: host "
          << format_bytes(run.host_have) << (CiRun::on_host ? "" : ", device " + format_bytes(run.device_have))
          << std::endl;
  const std::string parts = "matrix " + format_bytes(mem.matrix) +
                            (converts ? ", converted copy " + format_bytes(mem.converted) : std::string()) +
                            ", Davidson vectors " + format_bytes(mem.davidson) + ", space " + format_bytes(mem.space);
  // On a GPU, CSR and csell are built where they are used; other formats (and --write-mtx) go through a host copy.
  const bool may_stay_on_device = options.format == "auto" || (!CiRun::on_host && options.write_mtx.empty() &&
                                                               (options.format == "csr" || options.format == "csell"));
  const bool csell_allowed = options.write_mtx.empty() && (options.format == "auto" || options.format == "csell");
  const bool may_fall_back = options.format == "auto" && options.write_mtx.empty();
  const double have = run.have(), fill = CiRun::on_host ? 0.9 : 0.95;
  const double csell_block = std::min(8e9, 0.15 * have);
  const auto need_for = [&] {
    return (CiRun::on_host ? mem.space + mem.matrix + mem.converted
                           : mem.matrix + (may_stay_on_device ? mem.converted : 0.0)) +
           mem.davidson;
  };
  if (run.csell_values_inline && need_for() > fill * have) {  // the value table's 4 bytes per entry, then
    run.csell_values_inline = false;
    mem.converted = converted_bytes();
    run.out << "csell's values inline (faster block products) do not fit beside the CSR on " << Exec::name()
            << ": csell keeps its value table" << std::endl;
  }
  const double need = need_for();
  const std::string advice = ci_memory_advice(options, run.space.max_level, mem.matrix);
  if (need > fill * have && csell_allowed && nnz > 0 &&
      (CiRun::on_host ? mem.space : 0.0) + 0.45 * mem.matrix + csell_block + mem.davidson <= fill * have) {
    // csell (asked for, or the automatic choice's only way) is built in blocks of rows, one block's CSR at a time
    const double row_bytes = mem.matrix / rows_d;
    run.csell_block_rows = hamiltonian_block_rows(row_bytes, csell_block);
    run.out << "the CSR (" << format_bytes(mem.matrix) << ") does not fit beside its csell on " << Exec::name()
            << ": csell is built in blocks of " << run.csell_block_rows << " rows (~"
            << format_bytes(static_cast<double>(run.csell_block_rows) * row_bytes) << " of CSR at a time)" << std::endl;
  } else if (need > fill * have && may_fall_back && factored_fits(run, rows_d, run.guards)) {
    run.factored = true;
    run.out << "automatic format choice: the matrix does not fit (" << parts << " against " << format_bytes(have)
            << " on " << Exec::name() << "): the factored Hamiltonian, never assembled" << std::endl;
    return;
  } else if (need > fill * have) {
    ci_refuse(run.where(), need, have, parts, advice);
  }
  if (!CiRun::on_host) {
    const double host_need =
        mem.space + (may_stay_on_device || run.csell_block_rows > 0 ? 0.0 : mem.matrix + mem.converted);
    if (host_need > 0.9 * run.host_have) ci_refuse("host", host_need, run.host_have, parts, advice);
  }
}

/// The factored Hamiltonian's memory: the Davidson's vectors are what is large.
void plan_factored(CiRun& run) {
  const double n = static_cast<double>(run.space.size());
  const solvers::DavidsonMemoryPlan plan = plan_factored_memory(run, n, run.guards);
  const FactoredSizes sizes = factored_sizes(run, n);
  const double op = sizes.op, vector = sizes.vector;
  const auto gb = [](double b) { return format_bytes(b); };
  run.mem.davidson = plan.bytes;
  std::ostringstream line;
  line << "for " << run.space.size() << " determinants"
       << (run.options.singlet
               ? " (--singlet: vectors of at most " + std::to_string(static_cast<std::int64_t>(sizes.rows)) + " rows)"
               : std::string())
       << ", ";
  if (run.host_subspace) {
    line << "device: operator <= " << gb(op) << ", x and y " << gb(2 * vector) << "; host: the Davidson's "
         << plan.describe(gb) << ", diagonal " << gb(vector);
  } else {
    line << (CiRun::on_host ? "host" : "device") << ": operator <= " << gb(op) << ", diagonal " << gb(vector)
         << ", the Davidson's " << plan.describe(gb) << (plan.bounded ? " (bounded by the memory)" : "");
  }
  line << "; available: host " << gb(run.host_have) << (CiRun::on_host ? "" : ", device " + gb(run.device_have));
  if (!plan.fits) {
    ci_refuse(run.host_subspace ? "host" : run.where(), plan.bytes + vector,
              run.host_subspace ? run.host_have : run.have(), "memory plan: " + line.str(),
              "Fewer --roots, a lower --level or fewer orbitals would fit.");
  }
  run.out << "memory plan: " << line.str() << std::endl;
}

void write_json(const CiRun& run, double total_seconds, std::ostream& text_out) {
  const CiCommandOptions& options = run.options;
  const FciDump& dump = run.dump;
  const DeterminantSpace& space = run.space;
  const CiResult& res = run.result;
  const CiTimings& timings = run.timings;
  nlohmann::json j;
  j["fcidump"] = options.fcidump;
  j["orbitals"] = dump.num_orbitals;
  j["electrons"] = dump.num_electrons;
  j["ms2"] = dump.ms2;
  j["isym"] = dump.isym;
  j["orbsym_numbering"] = dump.orbsym_numbering == OrbsymNumbering::pyscf    ? "pyscf"
                          : dump.orbsym_numbering == OrbsymNumbering::molpro ? "molpro"
                                                                             : "none";
  j["core_energy"] = dump.core_energy;
  j["reference"] = {{"occupation", describe_determinant(run.reference.determinant, dump.num_orbitals, dump.orbsym)},
                    {"method", run.reference.method},
                    {"energy", run.reference.energy + dump.core_energy}};
  j["space"] = {{"method", method_name(space)},
                {"max_level", space.max_level},
                {"irrep", space.irrep},
                {"determinants", space.size()}};
  std::vector<std::size_t> per_level;
  for (int l = 0; l <= space.max_level; ++l) per_level.push_back(space.level_size(l));
  j["space"]["determinants_per_level"] = per_level;
  // (factored: never assembled, no nonzeros stored)
  j["matrix"] = {{"nonzeros", run.nnz}, {"built_on", Exec::name()}, {"assembled", !run.factored}};
  j["space"]["singlet"] = options.singlet;  // (--singlet: the vectors' packed half)
  j["davidson"] = {{"format", res.format},         {"plan", res.plan},           {"device", res.device},
                   {"roots", options.roots},       {"energies", res.energies},   {"residual_norms", res.residuals},
                   {"iterations", res.iterations}, {"spmv_calls", res.num_spmv}, {"converged", res.converged}};
  nlohmann::json iterations = nlohmann::json::array();
  for (const solvers::DavidsonProgress& p : run.history) {
    std::vector<double> energies;
    for (const double e : p.eigenvalues) energies.push_back(e + dump.core_energy);
    iterations.push_back({{"iteration", p.iteration},
                          {"energies", energies},
                          {"max_residual", p.max_residual},
                          {"seconds", p.seconds},
                          {"subspace", p.subspace},
                          {"restarts", p.restarts},
                          {"spmv_calls", p.num_spmv}});
  }
  j["davidson"]["history"] = iterations;
  j["davidson"]["max_subspace"] = run.result.max_subspace;
  j["davidson"]["restarts"] = run.result.restarts;
  j["davidson"]["subspace_in_host_memory"] = run.host_subspace;
  j["timings_s"] = {{"read", timings.read},       {"reference", timings.reference},
                    {"space", timings.space},     {"hamiltonian", timings.hamiltonian},
                    {"convert", timings.convert}, {"davidson", res.davidson_seconds},
                    {"spmv", res.spmv_seconds},   {"projected_eigenproblems", res.projected_seconds},
                    {"total", total_seconds}};
  write_ci_json(j, options.json, text_out);
}

}  // namespace

int ci_command(const CiCommandOptions& options, std::ostream& text_out) {
#if defined(CISPMV_HAVE_MPI)
  if ((options.distributed || mpi_world_size() > 1) &&
      (!options.start_vectors.empty() || !options.save_vectors.empty()))
    throw std::invalid_argument("cispmv ci: --start-vectors and --save-vectors work in one process, not under mpirun");
  if (options.singlet && (options.distributed || options.spmv_repetitions > 0 || mpi_world_size() > 1)) {
    throw std::invalid_argument("cispmv ci: --singlet runs in one process, not on the distributed code path");
  }
  if (options.distributed || options.spmv_repetitions > 0) {
    if (!mpi_running()) {
      throw std::invalid_argument(
          "cispmv ci: --distributed and --spmv-repetitions take the distributed code path: start cispmv under "
          "mpirun (one rank is fine)");
    }
    return ci_distributed(options, text_out, MPI_COMM_WORLD);
  }
  if (const int ranks = mpi_world_size(); ranks > 1) return ci_distributed(options, text_out, MPI_COMM_WORLD);
#else
  if (options.distributed || options.spmv_repetitions > 0) {
    throw std::invalid_argument(
        "cispmv ci: --distributed and --spmv-repetitions need MPI; this cispmv was built without it "
        "(CISPMV_ENABLE_MPI)");
  }
#endif
  check_options(options);
  std::size_t budget = std::numeric_limits<std::size_t>::max();
  if (!options.max_memory.empty()) budget = parse_bytes(options.max_memory, "--max-memory");
  std::ostringstream discard;
  CiRun run(options, options.json == "-" ? static_cast<std::ostream&>(discard) : text_out);
  run.factored = options.format == "factored";
  run.host_have = static_cast<double>(std::min(budget, host_available_bytes()));
  run.device_have = static_cast<double>(std::min(budget, available_bytes<Exec>()));
  Kokkos::Timer total;
  if (!options.start_vectors.empty()) run.start = open_vector_file(options.start_vectors);
  read_input(run);
  plan_before_space(run);
  build_space(run);
  if (run.start.count > 0 && run.start.rows != static_cast<std::int64_t>(run.space.size())) {
    throw std::invalid_argument("--start-vectors: " + run.start.path + " holds vectors of " +
                                std::to_string(run.start.rows) + " rows; this space has " +
                                std::to_string(run.space.size()) + " determinants");
  }
  if (!run.factored) plan_assembled(run);
  if (run.factored) plan_factored(run);
  // every irrep's rows named to the Davidson (its guesses and guards; see DavidsonOptions::row_blocks), once the
  // plan holds
  if (run.guards > 0) run.blocks = irrep_blocks(run.dump, run.space, 0, run.space.size());
  const int status = run.factored ? solve_factored(run) : solve_assembled(run);
  const double seconds = total.seconds();
  run.out << "total " << std::fixed << std::setprecision(3) << seconds << " s" << std::defaultfloat << std::endl;
  if (!options.json.empty()) write_json(run, seconds, text_out);
  return status;
}

}  // namespace cispmv::app
