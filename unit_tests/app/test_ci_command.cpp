// `cispmv ci`: the report, the refusals before anything large is built, csell built in blocks, the factored
// Hamiltonian where the matrix does not fit, the JSON file and a requested reference, the singlet on half-length
// vectors.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include "ci/ci_fixtures.hpp"
#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/io.hpp"
#include "cispmv/memory_budget.hpp"
#include "commands.hpp"
#include "test_utils.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
using cispmv::ci::Determinant;
using cispmv::ci::FciDump;
using namespace cispmv::test;
}  // namespace

TEST(CiCommand, PrintsCountsStatisticsAndEnergies) {
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2_sto3g.fcidump");
  opts.level = 2;
  opts.roots = 2;
  std::ostringstream out;
  EXPECT_EQ(cispmv::app::ci_command(opts, out), 0);
  const std::string text = out.str();
  EXPECT_NE(text.find("determinants: 4"), std::string::npos) << text;
  EXPECT_NE(text.find("full CI"), std::string::npos) << text;
  EXPECT_NE(text.find("-1.1372838345"), std::string::npos) << text;  // PySCF: -1.137283834489
  EXPECT_NE(text.find("-0.5307733570"), std::string::npos) << text;  // PySCF: -0.530773357001
  EXPECT_NE(text.find("spmv"), std::string::npos) << text;

  // every irrep (H2O/6-31G CISD, C2v): each irrep is searched (DavidsonOptions::row_blocks), and the
  // ground state is PySCF's (ci_references.txt, h2o_631g_cisd)
  {
    cispmv::app::CiCommandOptions all = opts;
    all.fcidump = data_path("h2o_631g.fcidump");
    all.level = 2;
    all.roots = 1;
    all.restrict_to_isym = false;
    std::ostringstream out1;
    EXPECT_EQ(cispmv::app::ci_command(all, out1), 0);
    const std::string t = out1.str();
    EXPECT_NE(t.find("determinants: 2241"), std::string::npos) << t;
    EXPECT_NE(t.find("irreps: 4, each searched; in 4 the next root lies above"), std::string::npos) << t;
    EXPECT_NE(t.find("-76.1140864984"), std::string::npos) << t;  // PySCF: -76.114086498352

    // the same integrals under an ORBSYM they break (orbitals 3 and 4, of irreps 3 and 1, swapped):
    // the irreps are coupled, so they are no blocks and the Davidson searches the space as one
    const FciDump h2o = cispmv::ci::read_fcidump(all.fcidump);
    const auto space = cispmv::ci::make_determinant_space(h2o, 2, false);
    EXPECT_TRUE(cispmv::ci::irreps_uncoupled(h2o, space));
    FciDump broken = h2o;
    std::swap(broken.orbsym[2], broken.orbsym[3]);
    const auto broken_space = cispmv::ci::make_determinant_space(broken, 2, false);
    EXPECT_FALSE(cispmv::ci::irreps_uncoupled(broken, broken_space));
    std::ifstream in(all.fcidump);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string orbsym = "ORBSYM=1,1,3,1,2,1,3,3,2,1,1,3,1";
    ASSERT_NE(text.find(orbsym), std::string::npos);
    text.replace(text.find(orbsym), orbsym.size(), "ORBSYM=1,1,1,3,2,1,3,3,2,1,1,3,1");
    const std::string path = ::testing::TempDir() + "cispmv_h2o_broken_orbsym.fcidump";
    std::ofstream(path) << text;
    all.fcidump = path;
    std::ostringstream outb;
    EXPECT_EQ(cispmv::app::ci_command(all, outb), 0);
    const std::string tb = outb.str();
    EXPECT_NE(tb.find("the integrals break ORBSYM"), std::string::npos) << tb;
    EXPECT_EQ(tb.find("irreps: 4"), std::string::npos) << tb;
    EXPECT_NE(tb.find("-76.1140864984"), std::string::npos) << tb;
  }

  // --write-mtx: a symmetric Matrix Market file that reads back as the same matrix.
  const std::string mtx = ::testing::TempDir() + "cispmv_ci_lih.mtx";
  opts.fcidump = data_path("lih_sto3g.fcidump");
  opts.level = 4;
  opts.roots = 1;
  opts.write_mtx = mtx;
  opts.format = "hybrid";
  std::ostringstream out2;
  EXPECT_EQ(cispmv::app::ci_command(opts, out2), 0);
  EXPECT_NE(out2.str().find("-7.8823243789"), std::string::npos) << out2.str();  // PySCF: -7.882324378884
  EXPECT_NE(out2.str().find("format hybrid"), std::string::npos) << out2.str();
  const auto back = cispmv::read_matrix_market(mtx);
  const FciDump lih = cispmv::ci::read_fcidump(opts.fcidump);
  const auto H = cispmv::ci::build_hamiltonian(lih, cispmv::ci::make_determinant_space(lih, 4, true));
  ASSERT_EQ(back.nnz(), H.nnz());
  for (std::size_t k = 0; k < H.nnz(); ++k) {
    ASSERT_EQ(back.col_idx(k), H.col_idx(k));
    ASSERT_EQ(back.values(k), H.values(k));
  }
  std::remove(mtx.c_str());
  opts.write_mtx.clear();

  opts.format = "no-such-format";
  EXPECT_THROW(cispmv::app::ci_command(opts, out), std::invalid_argument);
  opts.format = "csr";
  opts.roots = 226;  // LiH full CI has 225 determinants
  EXPECT_THROW(cispmv::app::ci_command(opts, out), std::invalid_argument);
}

TEST(CiCommand, RefusesWhatDoesNotFitAtOnce) {
  // the message of the MemoryBudgetError that ci_command throws (a test failure if it runs)
  auto refusal = [](const cispmv::app::CiCommandOptions& o, std::ostringstream& out) -> std::string {
    try {
      cispmv::app::ci_command(o, out);
      ADD_FAILURE() << "no refusal";
    } catch (const cispmv::MemoryBudgetError& e) {
      return e.what();
    }
    return {};
  };
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631gd.fcidump");  // 19 orbitals: full CI has 135M determinants
  opts.level = 10;
  opts.restrict_to_isym = false;
  opts.max_memory = "100M";
  std::ostringstream out;
  const auto start = std::chrono::steady_clock::now();
  std::string msg = refusal(opts, out);  // (full CI: the factored Hamiltonian, whose memory plan does not fit)
  EXPECT_NE(msg.find("not enough host memory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("memory plan: for 135210384 determinants"), std::string::npos) << msg;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  // as CSR: the space (3.2 GB) would fit 8 GB, its matrix (~3 TB) not by far: refused before the space is built
  opts.max_memory = "8G";
  opts.format = "csr";
  std::ostringstream early;
  msg = refusal(opts, early);
  EXPECT_NE(msg.find("estimated before building the space"), std::string::npos) << msg;
  EXPECT_NE(msg.find("TB"), std::string::npos) << msg;
  EXPECT_EQ(early.str().find("determinants: "), std::string::npos) << "the space was built: " << early.str();
  // the space fits, the matrix (1.2 GB) does not: refused after the estimate, before the build
  opts.fcidump = data_path("h2o_631g_fc.fcidump");
  opts.max_memory = "200M";
  msg = refusal(opts, out);
  EXPECT_NE(msg.find("matrix"), std::string::npos) << msg;
  EXPECT_NE(msg.find("What would fit"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--all-irreps"), std::string::npos) << msg;
  EXPECT_EQ(out.str().find("hamiltonian count pass"), std::string::npos) << "building started: " << out.str();
}

// A matrix whose CSR does not fit beside its csell, though its csell does: built as csell in blocks
// of rows (never a whole CSR), with the same energy.
TEST(CiCommand, BuildsCsellInBlocksWhenItsCsrDoesNotFit) {
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631g_fc.fcidump");  // A1 full CI: 61,441 determinants, ~300 MB of CSR
  opts.level = 8;
  opts.roots = 6;  // (up to 5 roots --format auto takes the factored Hamiltonian for full CI)
  opts.max_memory = "320M";
  std::ostringstream out;
  ASSERT_EQ(cispmv::app::ci_command(opts, out), 0) << out.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("csell is built in blocks of"), std::string::npos) << text;
  EXPECT_NE(text.find("as csell in blocks of rows"), std::string::npos) << text;
  EXPECT_EQ(text.find("hamiltonian count pass"), std::string::npos) << "a whole CSR was built: " << text;
  EXPECT_NE(text.find("-76.1199551879"), std::string::npos) << text;  // PySCF: -76.119955187921
  // with the memory for both, the usual way (the runs below check the build alone: a loose residual ends their
  // solves after a few iterations)
  opts.residual_tolerance = 1e-2;
  opts.max_memory = "8G";
  std::ostringstream whole;
  ASSERT_EQ(cispmv::app::ci_command(opts, whole), 0);
  EXPECT_EQ(whole.str().find("in blocks of"), std::string::npos) << whole.str();
  // csell asked for explicitly under the same budget; other formats are still refused
  opts.max_memory = "320M";
  opts.format = "csell";
  std::ostringstream asked;
  ASSERT_EQ(cispmv::app::ci_command(opts, asked), 0);
  EXPECT_NE(asked.str().find("in blocks of"), std::string::npos) << asked.str();
  opts.format = "sell";
  std::ostringstream refused;
  EXPECT_THROW(cispmv::app::ci_command(opts, refused), cispmv::MemoryBudgetError);
}

// A matrix that does not fit at all, though the Davidson's vectors do: --format auto takes the factored
// Hamiltonian (never assembled) and finds PySCF's energy; where the vectors do not fit either, the
// refusal before the space is built stands; --format factored refuses --write-mtx.
TEST(CiCommand, TakesTheFactoredHamiltonianWhereTheMatrixDoesNotFit) {
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631g_fc.fcidump");  // A1 full CI: 61,441 determinants, ~300 MB of CSR
  opts.level = 8;
  opts.max_memory = "100M";  // the vectors: ~30 MB
  opts.json = "-";
  std::ostringstream out;
  ASSERT_EQ(cispmv::app::ci_command(opts, out), 0) << out.str();
  std::string text = out.str();
  EXPECT_NE(text.find("\"assembled\": false"), std::string::npos) << text;
  EXPECT_NE(text.find("-76.11995518"), std::string::npos) << text;  // PySCF: -76.119955187921
  opts.json.clear();
  std::ostringstream report;
  ASSERT_EQ(cispmv::app::ci_command(opts, report), 0);
  text = report.str();
  EXPECT_NE(text.find("the factored Hamiltonian, never assembled"), std::string::npos) << text;
  EXPECT_EQ(text.find("hamiltonian count pass"), std::string::npos) << "the matrix was built: " << text;
  // not even the smallest subspace of the vectors fits: refused with the memory plan once the space's strings are
  // counted, before the operator or any vector is built
  opts.max_memory = "2M";
  std::ostringstream refused;
  try {
    cispmv::app::ci_command(opts, refused);
    ADD_FAILURE() << "not refused: " << refused.str();
  } catch (const cispmv::MemoryBudgetError& e) {
    EXPECT_NE(std::string(e.what()).find("memory plan: for 61441 determinants"), std::string::npos) << e.what();
  }
  EXPECT_EQ(refused.str().find("hamiltonian: "), std::string::npos) << refused.str();
  // asked for by name, with a file for the matrix it never builds
  opts.max_memory.clear();
  opts.format = "factored";
  opts.write_mtx = "never-written.mtx";
  std::ostringstream bad;
  EXPECT_THROW(cispmv::app::ci_command(opts, bad), std::invalid_argument);
}

TEST(CiCommand, WritesJsonAndHonoursTheRequestedReference) {
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631g_pitzer.fcidump");
  opts.level = 2;
  opts.json = "-";
  std::ostringstream out;
  ASSERT_EQ(cispmv::app::ci_command(opts, out), 0);
  const std::string text = out.str();
  ASSERT_EQ(text.find("cispmv ci:"), std::string::npos) << "text report mixed into JSON";
  ASSERT_NE(text.find("\"energies\""), std::string::npos) << text;
  EXPECT_NE(text.find("-76.11408649"), std::string::npos) << text;  // PySCF: -76.114086498352
  EXPECT_NE(text.find("\"determinants\": 679"), std::string::npos) << text;
  // an explicit reference: the same determinant as the automatic one, in the file's numbering
  opts.json.clear();
  opts.occupied_alpha = "1-3,8,10";
  opts.occupied_beta = "1-3,8,10";
  std::ostringstream out2;
  ASSERT_EQ(cispmv::app::ci_command(opts, out2), 0);
  EXPECT_NE(out2.str().find("given occupied orbitals"), std::string::npos) << out2.str();
  EXPECT_NE(out2.str().find("-76.1140864984"), std::string::npos) << out2.str();
  opts.occupied_beta.clear();
  EXPECT_THROW(cispmv::app::ci_command(opts, out2), std::invalid_argument);
  opts.occupied_alpha.clear();
  opts.max_memory = "lots";
  EXPECT_THROW(cispmv::app::ci_command(opts, out2), std::invalid_argument);
}

// PySCF's FCIDUMP as it writes it by default, ORBSYM in its own irrep ids (C2v: A1 0, A2 1, B1 2, B2 3; Molpro's
// A1 1, B1 2, B2 3, A2 4), gives the Molpro-numbered file's energy, and the report says which numbering it read.
TEST(CiCommand, ReadsOrbsymInPySCFsNumbering) {
  std::ifstream in(data_path("h2o_631g_fc.fcidump"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string molpro = "ORBSYM=1,3,1,2,1,3,3,2,1,1,3,1";
  ASSERT_NE(text.find(molpro), std::string::npos);
  text.replace(text.find(molpro), molpro.size(), "ORBSYM=0,3,0,2,0,3,3,2,0,0,3,0");
  const std::string path = ::testing::TempDir() + "cispmv_h2o_631g_fc_pyscf_orbsym.fcidump";
  std::ofstream(path) << text;
  cispmv::app::CiCommandOptions opts;
  opts.level = 8;
  std::string energies[2];
  for (int i = 0; i < 2; ++i) {
    opts.fcidump = i == 0 ? data_path("h2o_631g_fc.fcidump") : path;
    std::ostringstream out;
    ASSERT_EQ(cispmv::app::ci_command(opts, out), 0) << out.str();
    const std::string report = out.str();
    EXPECT_NE(report.find(i == 0 ? "ORBSYM in Molpro's (1..8) numbering" : "ORBSYM in PySCF's (0..7) numbering"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("determinants: 61441"), std::string::npos) << report;
    energies[i] = report.substr(report.find("-76.11995"), 16);
  }
  EXPECT_EQ(energies[0], energies[1]);
  EXPECT_EQ(energies[0].substr(0, 12), "-76.11995518");  // PySCF: -76.119955187921
  std::remove(path.c_str());
}

// The memory plan of the factored Hamiltonian's Davidson is printed before it iterates, --json carries every
// iteration; the smallest subspace (--max-subspace 2: a restart every iteration) gives the same energy; and a space
// whose smallest plan does not fit is refused at once, the plan in the message, before any vector is allocated.
TEST(CiCommand, PlansTheFactoredHamiltoniansMemory) {
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631g_fc.fcidump");
  opts.level = 8;
  opts.format = "factored";
  std::ostringstream out;
  ASSERT_EQ(cispmv::app::ci_command(opts, out), 0) << out.str();
  // the vectors live where the default execution space computes: the host in CPU builds, the device in GPU builds
  constexpr bool on_host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  const std::string plan = on_host ? "memory plan: for 61441 determinants, host: operator <= "
                                   : "memory plan: for 61441 determinants, device: operator <= ";
  EXPECT_NE(out.str().find(plan), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("the Davidson's V and AV 2 x 24"), std::string::npos) << out.str();
  opts.json = "-";
  opts.max_subspace = 2;
  std::ostringstream json;
  ASSERT_EQ(cispmv::app::ci_command(opts, json), 0) << json.str();
  EXPECT_NE(json.str().find("-76.11995518"), std::string::npos) << json.str();
  EXPECT_NE(json.str().find("\"max_subspace\": 2"), std::string::npos) << json.str();
  std::size_t entries = 0;
  for (std::size_t at = json.str().find("\"max_residual\""); at != std::string::npos;
       at = json.str().find("\"max_residual\"", at + 1))
    ++entries;
  const std::size_t iterations_at = json.str().find("\"iterations\": ");
  ASSERT_NE(iterations_at, std::string::npos);
  EXPECT_EQ(entries, std::stoul(json.str().substr(iterations_at + 14)) + 1) << "one entry per iteration and the start";
  // the all-electron 6-31G(d) full CI over every irrep (135,210,384 determinants, 1.08 GB a vector) in 2 GB
  opts = {};
  opts.fcidump = data_path("h2o_631gd.fcidump");
  opts.level = 10;
  opts.restrict_to_isym = false;
  opts.max_memory = "2G";
  std::ostringstream refused;
  const auto start = std::chrono::steady_clock::now();
  try {
    cispmv::app::ci_command(opts, refused);
    ADD_FAILURE() << "not refused: " << refused.str();
  } catch (const cispmv::MemoryBudgetError& e) {
    EXPECT_NE(std::string(e.what()).find("memory plan: "), std::string::npos) << e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0) << "refused only after building something of the space's size";
}

// --save-vectors writes the Ritz vectors of a solve, converged or stopped by --max-iterations, and --start-vectors
// continues from them to the energy of one solve; files that are not such vectors, are cut short or belong to
// another space are refused with the file named, and an unwritable --save-vectors before the solve.
TEST(CiCommand, SavesVectorsAndStartsFromThem) {
  const std::string path = ::testing::TempDir() + "cispmv_h2o_631g_fc.vectors";
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631g_fc.fcidump");
  opts.level = 8;
  opts.max_iterations = 3;
  opts.save_vectors = path;
  std::ostringstream stopped;
  ASSERT_EQ(cispmv::app::ci_command(opts, stopped), 1) << stopped.str();  // not converged in 3 iterations
  EXPECT_NE(stopped.str().find("saved 1 vector to " + path), std::string::npos) << stopped.str();
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(file.good());
  EXPECT_EQ(static_cast<long long>(file.tellg()), 16 + 16 + 8 + 61441LL * 8);
  file.close();

  opts.max_iterations = 200;
  opts.save_vectors.clear();
  opts.start_vectors = path;
  std::ostringstream continued;
  ASSERT_EQ(cispmv::app::ci_command(opts, continued), 0) << continued.str();
  EXPECT_NE(continued.str().find("-76.11995518"), std::string::npos) << continued.str();  // PySCF: -76.119955187921
  const auto iterations = [](const std::string& text) {
    const auto at = text.find("  iterations ");
    return at == std::string::npos ? -1 : std::stoi(text.substr(at + 13));
  };
  opts.start_vectors.clear();
  std::ostringstream whole;
  ASSERT_EQ(cispmv::app::ci_command(opts, whole), 0) << whole.str();
  EXPECT_LT(iterations(continued.str()), iterations(whole.str())) << continued.str() << whole.str();
  const auto energy = [](const std::string& text) { return text.substr(text.find("-76.11995"), 16); };
  EXPECT_EQ(energy(continued.str()), energy(whole.str()));

  // refused: another space's vectors (after the space is built), a cut file, a file of something else
  cispmv::app::CiCommandOptions h2 = opts;
  h2.fcidump = data_path("h2_sto3g.fcidump");
  h2.level = 2;
  h2.start_vectors = path;
  std::ostringstream out;
  const auto message = [&](const cispmv::app::CiCommandOptions& o) {
    try {
      cispmv::app::ci_command(o, out);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(h2).find("holds vectors of 61441 rows; this space has 4 determinants"), std::string::npos);
  const std::string cut = ::testing::TempDir() + "cispmv_cut.vectors";
  {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes(1000);
    in.read(bytes.data(), 1000);
    std::ofstream(cut, std::ios::binary).write(bytes.data(), 1000);
  }
  opts.start_vectors = cut;
  EXPECT_NE(message(opts).find("truncated"), std::string::npos) << message(opts);
  opts.start_vectors = data_path("h2_sto3g.fcidump");
  EXPECT_NE(message(opts).find("is not a cispmv vector file"), std::string::npos) << message(opts);
  opts.start_vectors.clear();
  opts.save_vectors = ::testing::TempDir() + "no-such-directory/x.vectors";
  EXPECT_THROW(cispmv::app::ci_command(opts, out), std::runtime_error);
  std::remove(path.c_str());
  std::remove(cut.c_str());
}

// --singlet: the A1 full CI's ground state on the packed vectors is the whole space's, to the printed 1e-10 Eh, in
// about half the rows; what it cannot do is refused before any work (another format, M_S != 0, the vectors' files).
TEST(CiCommand, SolvesTheSingletOnHalfLengthVectors) {
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631g_fc.fcidump");  // A1 full CI: 61,441 determinants
  opts.level = 8;
  const auto ground = [](const std::string& text) {  // the first root's line: "   1   eigenvalue   total   residual"
    const auto at = text.find("\n     1 ");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at + 1) - at);
  };
  const auto total = [&](const std::string& text) {
    std::istringstream line(ground(text));
    int root = 0;
    double eigenvalue = 0.0, energy = 0.0;
    line >> root >> eigenvalue >> energy;
    return energy;
  };
  std::ostringstream whole;
  ASSERT_EQ(cispmv::app::ci_command(opts, whole), 0) << whole.str();
  opts.singlet = true;
  std::ostringstream singlet;
  ASSERT_EQ(cispmv::app::ci_command(opts, singlet), 0) << singlet.str();
  const std::string text = singlet.str();
  EXPECT_NEAR(total(text), total(whole.str()), 1.5e-10) << text;
  EXPECT_NEAR(total(text), -76.119955187921, 1e-9) << text;  // PySCF's direct_spin0
  // (61,441 + the 495 determinants of two alike strings, each its own transpose) / 2
  EXPECT_NE(text.find("30968 packed rows"), std::string::npos) << text;
  EXPECT_NE(text.find("factored Hamiltonian, singlet"), std::string::npos) << text;
  std::ostringstream refused;
  opts.format = "csr";
  EXPECT_THROW(cispmv::app::ci_command(opts, refused), std::invalid_argument);
  opts.format = "auto";
  opts.save_vectors = "never-written.vec";
  EXPECT_THROW(cispmv::app::ci_command(opts, refused), std::invalid_argument);
  opts.save_vectors.clear();
  // M_S = 1 (MS2 = 2): refused once the FCIDUMP is read
  std::ifstream in(opts.fcidump);
  std::string dump((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  dump.replace(dump.find("MS2=0"), 5, "MS2=2");
  const std::string path = ::testing::TempDir() + "cispmv_singlet_ms2.fcidump";
  std::ofstream(path) << dump;
  opts.fcidump = path;
  try {
    cispmv::app::ci_command(opts, refused);
    ADD_FAILURE() << "MS2 = 2 not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--singlet needs M_S = 0"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}
