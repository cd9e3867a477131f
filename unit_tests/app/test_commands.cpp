// `cispmv run`, `stats` and `ci`: options that cannot work are refused before any work, and errors name the input.
#include <gtest/gtest.h>

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

// Options that would hang, exhaust memory or time nothing are refused before any work (issue 13).
TEST(Commands, RunAndStatsRefuseOptionsThatCannotWork) {
  auto refused = [](cispmv::app::RunOptions o, const std::string& expect) {
    o.matrix = data_path("paper_6x5.mtx");
    std::ostringstream out;
    try {
      cispmv::app::run_command(o, out);
      ADD_FAILURE() << "accepted, expected: " << expect;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
    EXPECT_EQ(out.str(), "") << "work was done before the refusal";
  };
  cispmv::app::RunOptions o;
  o.formats = {"ell"};
  o.kernels = {"vector"};
  refused(o, "format 'ell' has none of the kernels asked for (it has: scalar)");
  o = {};
  o.repetitions = 2147483647;
  refused(o, "--repetitions must be in 1..100000");
  o = {};
  o.rows_per_team = 2147483647;
  refused(o, "--rows-per-team must be in 1..1024");
  o = {};
  o.slice_height = 2147483647;
  refused(o, "--slice-height must be in 1..1024");
  o = {};
  o.json = "/nonexistent-folder/out.json";
  refused(o, "cannot write the --json file");
  o = {};
  o.boundary = 2147483647;
  refused(o, "BOUNDARY = 2147483647 is outside [0, 5]");
  std::ostringstream out;
  EXPECT_THROW(cispmv::app::stats_command(data_path("paper_6x5.mtx"), 2147483647, out), std::invalid_argument);
  // one dense row among 200,000: ELLPACK would take 480 GB; it is skipped with the reason, CSR still runs
  {
    cispmv::CooMatrix<double, int> coo;
    coo.num_rows = coo.num_cols = 200000;
    for (int c = 0; c < 200000; ++c) {
      coo.row_idx.push_back(0);
      coo.col_idx.push_back(c);
      coo.values.push_back(1.0);
    }
    for (int r = 1; r < 200000; ++r) {
      coo.row_idx.push_back(r);
      coo.col_idx.push_back(r);
      coo.values.push_back(2.0);
    }
    const std::string path = ::testing::TempDir() + "cispmv_dense_row.cispmv";
    cispmv::write_matrix(path, cispmv::from_coo(coo));
    cispmv::app::RunOptions dense;
    dense.matrix = path;
    dense.formats = {"csr", "ell"};
    dense.repetitions = 1;
    dense.baseline = false;
    std::ostringstream report;
    EXPECT_EQ(cispmv::app::run_command(dense, report), 0);
    EXPECT_NE(report.str().find("skipped: ell: needs ~480 GB"), std::string::npos) << report.str();
    EXPECT_NE(report.str().find("all kernels PASS (1 format(s) skipped)"), std::string::npos) << report.str();
  }
  {  // a format that cannot hold the matrix (hybrid16: a reference-region column beyond 16 bits) is
     // skipped with the converter's reason; the others still run
    cispmv::CooMatrix<double, int> coo;
    coo.num_rows = 4;
    coo.num_cols = 70000;
    for (int r = 0; r < 4; ++r) {
      coo.row_idx.insert(coo.row_idx.end(), {r, r});
      coo.col_idx.insert(coo.col_idx.end(), {r, 69990 + r});
      coo.values.insert(coo.values.end(), {1.0, 2.0});
    }
    const std::string path = ::testing::TempDir() + "cispmv_wide.cispmv";
    cispmv::write_matrix(path, cispmv::from_coo(coo));
    cispmv::app::RunOptions wide;
    wide.matrix = path;
    wide.formats = {"csr", "hybrid16"};
    wide.boundary = 2;
    wide.repetitions = 1;
    wide.baseline = false;
    std::ostringstream report;
    EXPECT_EQ(cispmv::app::run_command(wide, report), 0);
    EXPECT_NE(report.str().find("skipped: hybrid16: "), std::string::npos) << report.str();
    EXPECT_NE(report.str().find("16-bit"), std::string::npos) << report.str();
  }
  // --json -: the JSON alone on stdout, no text report mixed into it
  cispmv::app::RunOptions quiet;
  quiet.matrix = data_path("paper_6x5.mtx");
  quiet.formats = {"csr"};
  quiet.repetitions = 2;
  quiet.json = "-";
  std::ostringstream text;
  testing::internal::CaptureStdout();
  EXPECT_EQ(cispmv::app::run_command(quiet, text), 0);
  const std::string json = testing::internal::GetCapturedStdout();
  EXPECT_EQ(text.str(), "");
  EXPECT_EQ(json.front(), '{') << json.substr(0, 100);
}

// `cispmv ci` names the FCIDUMP in the errors its libraries raise, says why a space is empty, warns
// of a missing core energy; `cispmv run` refuses vectors that cannot fit and --float beyond float range.
TEST(Commands, NameTheInputAndRefuseWhatCannotWork) {
  std::ifstream in(data_path("h2_sto3g.fcidump"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  };
  auto write = [](const std::string& name, const std::string& content) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path) << content;
    return path;
  };
  cispmv::app::CiCommandOptions opts;
  opts.level = 2;
  opts.fcidump = write("cispmv_isym2.fcidump", replace(text, "ISYM=1", "ISYM=2"));  // ORBSYM is all A1
  std::ostringstream out;
  try {
    cispmv::app::ci_command(opts, out);
    ADD_FAILURE() << "an impossible ISYM was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(opts.fcidump + ": ", 0), 0u) << e.what();
  }
  // no core-energy line: a warning, and the run goes on
  std::string no_core;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("  0  0  0  0") == std::string::npos) no_core += line + "\n";
  }
  opts.fcidump = write("cispmv_no_core.fcidump", no_core);
  std::ostringstream warned;
  EXPECT_EQ(cispmv::app::ci_command(opts, warned), 0);
  EXPECT_NE(warned.str().find("warning: " + opts.fcidump + " has no core-energy line"), std::string::npos)
      << warned.str();
  // cispmv run: 2^31 - 1 columns in a 60-byte file; a value beyond float's range with --float
  cispmv::app::RunOptions run;
  run.matrix = write("cispmv_wide.mtx", "%%MatrixMarket matrix coordinate real general\n1 2147483647 1\n1 1 1.0\n");
  ::setenv("CISPMV_MAX_MEMORY", "4G", 1);
  try {
    cispmv::app::run_command(run, out);
    ADD_FAILURE() << "2^31 columns accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the vectors x and y alone need"), std::string::npos) << e.what();
  }
  ::unsetenv("CISPMV_MAX_MEMORY");
  run.matrix =
      write("cispmv_big_value.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1e300\n2 2 1\n");
  run.single_precision = true;
  try {
    cispmv::app::run_command(run, out);
    ADD_FAILURE() << "1e300 accepted in float";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("beyond the range of float"), std::string::npos) << e.what();
  }
}

// A valid file of one row and 2^31 - 1 columns (78 bytes of Matrix Market; its binary copy 112): `cispmv stats`
// reports it without a table of its columns.
TEST(Commands, StatsOfAMatrixOfTwoBillionColumnsRunsAtOnce) {
  const std::string mtx = ::testing::TempDir() + "cispmv_wide.mtx", bin = ::testing::TempDir() + "cispmv_wide.cispmv";
  std::ofstream(mtx) << "%%MatrixMarket matrix coordinate real general\n1 2147483647 2\n1 5 1.0\n1 2000000000 2.0\n";
  std::ostringstream out;
  ASSERT_EQ(cispmv::app::convert_command(mtx, bin, out), 0);
  for (const std::string& file : {mtx, bin}) {
    std::ostringstream stats;
    ASSERT_EQ(cispmv::app::stats_command(file, -1, stats), 0) << file;
    EXPECT_NE(stats.str().find("rows 1 cols 2147483647 nnz 2"), std::string::npos) << stats.str();
  }
  std::remove(mtx.c_str());
  std::remove(bin.c_str());
}
