// Matrix Market and binary I/O: the paper's example read exactly, symmetric / pattern / integer
// files, duplicates, bit-exact round trips, and every malformed or corrupt input rejected with a
// message that names the file, the line and the problem.

#include <gtest/gtest.h>

#include "cispmv/io.hpp"
#include "test_utils.hpp"

#include <sys/resource.h>
#include <sys/stat.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {

using cispmv::HostCsr;
using cispmv::ParseError;

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "cispmv_test_io_" + name; }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::vector<unsigned char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

HostCsr read_text(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  write_text(path, text);
  return cispmv::read_matrix_market(path);
}

template <class View>
std::vector<typename View::non_const_value_type> to_vector(const View& v) {
  return std::vector<typename View::non_const_value_type>(v.data(), v.data() + v.extent(0));
}

HostCsr make_csr(int rows, int cols, const std::vector<std::size_t>& row_ptr, const std::vector<int>& col,
                 const std::vector<double>& val) {
  HostCsr A("test", rows, cols, val.size());
  for (std::size_t i = 0; i < row_ptr.size(); ++i) A.row_ptr(i) = row_ptr[i];
  for (std::size_t i = 0; i < val.size(); ++i) {
    A.col_idx(i) = col[i];
    A.values(i) = val[i];
  }
  return A;
}

/// Values whose decimal forms are the hard cases of a text round trip.
HostCsr tricky_matrix() {
  const std::vector<double> values = {0.1,
                                      1.0 / 3.0,
                                      -2.0 / 3.0,
                                      3.141592653589793,
                                      1e-300,
                                      std::numeric_limits<double>::denorm_min(),
                                      -std::numeric_limits<double>::max(),
                                      std::numeric_limits<double>::min(),
                                      123456789012345678.0,
                                      -0.0,
                                      5e-324 * 3,
                                      0.30000000000000004};
  return make_csr(4, 7, {0, 3, 3, 8, 12}, {0, 3, 6, 0, 1, 2, 5, 6, 1, 2, 3, 4}, values);
}

void expect_identical(const HostCsr& A, const HostCsr& B) {
  ASSERT_EQ(A.num_rows, B.num_rows);
  ASSERT_EQ(A.num_cols, B.num_cols);
  EXPECT_EQ(to_vector(A.row_ptr), to_vector(B.row_ptr));
  EXPECT_EQ(to_vector(A.col_idx), to_vector(B.col_idx));
  ASSERT_EQ(A.nnz(), B.nnz());
  for (std::size_t k = 0; k < A.nnz(); ++k) {
    // Bitwise: -0.0 must stay -0.0 and the last bit of every value must survive.
    EXPECT_EQ(std::memcmp(&A.values(k), &B.values(k), sizeof(double)), 0)
        << "entry " << k << ": " << A.values(k) << " vs " << B.values(k);
  }
}

/// The message of the ParseError that `read` throws (empty, and a test failure, if none).
template <class Read>
std::string parse_error_of(const Read& read) {
  try {
    read();
  } catch (const ParseError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected cispmv::ParseError, got another exception: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected cispmv::ParseError, nothing was thrown";
  return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ------------------------------------------------------------------------------ Matrix Market

TEST(MatrixMarketIo, PaperExampleReadsAsThePapersCsrArrays) {
  const HostCsr A = cispmv::read_matrix_market(std::string(CISPMV_TEST_DATA_DIR) + "/paper_6x5.mtx");
  EXPECT_EQ(A.num_rows, 6);
  EXPECT_EQ(A.num_cols, 5);
  EXPECT_EQ(to_vector(A.values), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(to_vector(A.col_idx), (std::vector<int>{0, 2, 4, 1, 4, 2, 3, 4}));
  EXPECT_EQ(to_vector(A.row_ptr), (std::vector<std::size_t>{0, 1, 3, 5, 6, 7, 8}));
}

TEST(MatrixMarketIo, PaperMatrixAsPrintedReadsWithItsNinthEntry) {
  // Section 3.1 prints the matrix with a 3 at (row 3, column 4) that its listing omits.
  const HostCsr A = read_text("printed.mtx",
                              "%%MatrixMarket matrix coordinate real general\n6 5 9\n"
                              "1 1 1\n2 3 2\n2 5 3\n3 2 4\n3 5 5\n4 3 6\n4 5 3\n5 4 7\n6 5 8\n");
  EXPECT_EQ(to_vector(A.values), (std::vector<double>{1, 2, 3, 4, 5, 6, 3, 7, 8}));
  EXPECT_EQ(to_vector(A.col_idx), (std::vector<int>{0, 2, 4, 1, 4, 2, 4, 3, 4}));
  EXPECT_EQ(to_vector(A.row_ptr), (std::vector<std::size_t>{0, 1, 3, 5, 7, 8, 9}));
}

TEST(MatrixMarketIo, SymmetricFileMirrorsOffDiagonalEntries) {
  const HostCsr A = read_text("symmetric.mtx",
                              "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n"
                              "1 1 2.5\n2 1 -1\n3 2 4\n3 3 7\n");
  EXPECT_EQ(to_vector(A.row_ptr), (std::vector<std::size_t>{0, 2, 4, 6}));
  EXPECT_EQ(to_vector(A.col_idx), (std::vector<int>{0, 1, 0, 2, 1, 2}));
  EXPECT_EQ(to_vector(A.values), (std::vector<double>{2.5, -1, -1, 4, 4, 7}));
}

TEST(MatrixMarketIo, PatternFileGetsUnitValuesAndMayBeSymmetric) {
  const HostCsr A = read_text("pattern.mtx",
                              "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n"
                              "1 1\n3 1\n3 2\n");
  EXPECT_EQ(to_vector(A.row_ptr), (std::vector<std::size_t>{0, 2, 3, 5}));
  EXPECT_EQ(to_vector(A.col_idx), (std::vector<int>{0, 2, 2, 0, 1}));
  EXPECT_EQ(to_vector(A.values), (std::vector<double>(5, 1.0)));
}

TEST(MatrixMarketIo, IntegerFileReadsExactly) {
  const HostCsr A = read_text(
      "integer.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -7\n2 1 +9007199254740993\n");
  EXPECT_EQ(to_vector(A.values), (std::vector<double>{-7.0, 9007199254740992.0}));
}

TEST(MatrixMarketIo, DuplicatesAreSummedAndRowsSortedByColumn) {
  const HostCsr A = read_text("duplicates.mtx",
                              "%%MatrixMarket matrix coordinate real general\n2 4 6\n"
                              "1 4 1\n1 2 2\n1 4 10\n2 3 5\n1 2 0.5\n2 1 -1\n");
  EXPECT_EQ(to_vector(A.row_ptr), (std::vector<std::size_t>{0, 2, 4}));
  EXPECT_EQ(to_vector(A.col_idx), (std::vector<int>{1, 3, 0, 2}));
  EXPECT_EQ(to_vector(A.values), (std::vector<double>{2.5, 11, -1, 5}));
  EXPECT_EQ(A.nnz(), 4u);
}

TEST(MatrixMarketIo, CommentsBlankLinesCrLfAndKeywordCaseAreAccepted) {
  const HostCsr A = read_text("lenient.mtx",
                              "%%MatrixMarket Matrix Coordinate Real General\r\n% comment\r\n\r\n  \t\r\n"
                              "% another\r\n 2 2 2 \r\n\r\n1 1 1.5e0\r\n% between entries\r\n\t2  2\t-2.25\r\n");
  EXPECT_EQ(to_vector(A.values), (std::vector<double>{1.5, -2.25}));
  EXPECT_EQ(to_vector(A.col_idx), (std::vector<int>{0, 1}));
}

TEST(MatrixMarketIo, EmptyMatrixAndEmptyRowsRoundTrip) {
  const HostCsr A = read_text("empty.mtx", "%%MatrixMarket matrix coordinate real general\n4 3 0\n");
  EXPECT_EQ(A.num_rows, 4);
  EXPECT_EQ(A.nnz(), 0u);
  EXPECT_EQ(to_vector(A.row_ptr), (std::vector<std::size_t>(5, 0)));
  const std::string path = temp_path("empty_roundtrip.mtx");
  cispmv::write_matrix_market(path, A);
  expect_identical(A, cispmv::read_matrix_market(path));
}

TEST(MatrixMarketIo, WriteThenReadIsBitExact) {
  const HostCsr A = tricky_matrix();
  const std::string path = temp_path("roundtrip.mtx");
  cispmv::write_matrix_market(path, A);
  expect_identical(A, cispmv::read_matrix_market(path));
}

// Larger than the reader's and writer's 4 MiB blocks, so lines straddle block boundaries; a
// comment line longer than a block makes the reader grow its buffer.
TEST(MatrixMarketIo, FilesLargerThanTheIoBlocksRoundTripExactly) {
  const int rows = 3000, per_row = 100;
  HostCsr A("large", rows, 5000, static_cast<std::size_t>(rows) * per_row);
  std::uint64_t state = 12345;
  for (int r = 0; r < rows; ++r) {
    A.row_ptr(r + 1) = A.row_ptr(r) + per_row;
    for (int k = 0; k < per_row; ++k) {
      const std::size_t at = A.row_ptr(r) + k;
      A.col_idx(at) = k * 50 + r % 50;
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      A.values(at) = static_cast<double>(state >> 11) * 0x1.0p-53 - 0.5;
    }
  }
  const std::string path = temp_path("large.mtx");
  cispmv::write_matrix_market(path, A);
  EXPECT_GT(read_bytes(path).size(), std::size_t(8) << 20);
  expect_identical(A, cispmv::read_matrix_market(path));

  const std::string long_comment = temp_path("long_comment.mtx");
  write_text(long_comment, "%%MatrixMarket matrix coordinate real general\n%" + std::string(5 << 20, 'x') +
                               "\n2 2 1\n2 2 0.25");  // and no newline at the end
  const HostCsr B = cispmv::read_matrix_market(long_comment);
  EXPECT_EQ(to_vector(B.values), (std::vector<double>{0.25}));
  EXPECT_EQ(to_vector(B.row_ptr), (std::vector<std::size_t>{0, 0, 1}));
}

TEST(MatrixMarketIo, SymmetricWriteStoresTheLowerTriangleAndReadsBack) {
  const HostCsr A = make_csr(3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2}, {2.5, 0.1, 0.1, 4, 1.0 / 3.0, 1.0 / 3.0, 7});
  const std::string path = temp_path("symmetric_roundtrip.mtx");
  cispmv::write_matrix_market(path, A, /*symmetric=*/true);
  std::ifstream in(path);
  std::string header, comment, size;
  std::getline(in, header);
  std::getline(in, comment);
  std::getline(in, size);
  EXPECT_EQ(header, "%%MatrixMarket matrix coordinate real symmetric");
  EXPECT_EQ(size, "3 3 5");
  expect_identical(A, cispmv::read_matrix_market(path));
}

TEST(MatrixMarketIo, SymmetricWriteRejectsANonSymmetricMatrix) {
  const std::string path = temp_path("not_symmetric.mtx");
  const HostCsr values_differ = make_csr(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {1, 2, 3, 4});
  try {
    cispmv::write_matrix_market(path, values_differ, true);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "not symmetric")) << e.what();
    EXPECT_TRUE(contains(e.what(), "A(0, 1) = 2 but A(1, 0) = 3")) << e.what();
  }
  const HostCsr mirror_missing = make_csr(2, 2, {0, 2, 3}, {0, 1, 1}, {1, 2, 4});
  EXPECT_THROW(cispmv::write_matrix_market(path, mirror_missing, true), std::invalid_argument);
  const HostCsr not_square = make_csr(2, 3, {0, 1, 2}, {0, 1}, {1, 1});
  EXPECT_THROW(cispmv::write_matrix_market(path, not_square, true), std::invalid_argument);
}

// Every malformed input: the message names the file, the 1-based line and what was expected.
struct MalformedCase {
  const char* name;
  const char* text;
  std::size_t line;
  const char* expected;
};

class MatrixMarketMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MatrixMarketMalformed, ThrowsWithFileLineAndWhatWasExpected) {
  const MalformedCase& c = GetParam();
  const std::string path = temp_path(std::string("malformed_") + c.name + ".mtx");
  write_text(path, c.text);
  try {
    cispmv::read_matrix_market(path);
    ADD_FAILURE() << c.name << ": nothing was thrown";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), c.line) << what;
    EXPECT_TRUE(contains(what, path + ":" + std::to_string(c.line) + ": ")) << what;
    EXPECT_TRUE(contains(what, c.expected)) << what << "\n  should contain: " << c.expected;
  }
}

#define MM_HEADER "%%MatrixMarket matrix coordinate real general\n"

INSTANTIATE_TEST_SUITE_P(
    EveryCase, MatrixMarketMalformed,
    ::testing::Values(
        MalformedCase{"empty_file", "", 1, "empty file"},
        MalformedCase{"no_banner", "%MatrixMarket matrix coordinate real general\n1 1 0\n", 1, "expected the header"},
        MalformedCase{"array", "%%MatrixMarket matrix array real general\n2 2\n", 1, "unsupported format 'array'"},
        MalformedCase{"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 0\n", 1,
                      "unsupported field 'complex'"},
        MalformedCase{"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 1,
                      "unsupported symmetry 'hermitian'"},
        MalformedCase{"skew", "%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", 1,
                      "unsupported symmetry 'skew-symmetric'"},
        MalformedCase{"unknown_field", "%%MatrixMarket matrix coordinate real2 general\n1 1 0\n", 1,
                      "unknown field 'real2'"},
        MalformedCase{"incomplete_header", "%%MatrixMarket matrix coordinate\n1 1 0\n", 1, "incomplete header"},
        MalformedCase{"vector_object", "%%MatrixMarket vector coordinate real general\n1 1 0\n", 1,
                      "unsupported object 'vector'"},
        MalformedCase{"missing_size_line", MM_HEADER "% only comments\n\n", 4, "missing size line"},
        MalformedCase{"negative_rows", MM_HEADER "-3 3 0\n", 2, "negative number of rows -3"},
        MalformedCase{"non_numeric_size", MM_HEADER "3 x 0\n", 2, "expected the number of columns"},
        MalformedCase{"two_size_numbers", MM_HEADER "3 3\n", 2, "size line has 2 numbers, expected 3"},
        MalformedCase{"size_trailing", MM_HEADER "3 3 0 7\n", 2, "unexpected text '7' after the size line"},
        MalformedCase{"rows_beyond_int", MM_HEADER "2147483648 2 0\n", 2, "exceeds the limit 2147483647"},
        MalformedCase{"cols_beyond_int", MM_HEADER "2 99999999999 0\n", 2, "exceeds the limit 2147483647"},
        MalformedCase{"entries_beyond_file", MM_HEADER "3 3 1000000\n1 1 1\n", 2, "truncated file?"},
        MalformedCase{"symmetric_not_square", "%%MatrixMarket matrix coordinate real symmetric\n3 2 0\n", 2,
                      "must be square"},
        MalformedCase{"too_few_entries", MM_HEADER "3 3 3\n1 1 1\n2 2 2\n", 5, "ends after 2 of the 3 entries"},
        MalformedCase{"too_many_entries", MM_HEADER "3 3 2\n1 1 1\n2 2 2\n% c\n3 3 3\n", 6,
                      "more entries than the 2 announced on line 2"},
        MalformedCase{"row_out_of_range", MM_HEADER "6 5 1\n7 1 1.0\n", 3,
                      "row index 7 is outside the allowed range [1, 6]"},
        MalformedCase{"col_zero", MM_HEADER "6 5 1\n1 0 1.0\n", 3,
                      "column index 0 is outside the allowed range [1, 5]"},
        MalformedCase{"index_huge", MM_HEADER "6 5 1\n1 99999999999999999999 1.0\n", 3, "is outside the allowed range"},
        MalformedCase{"index_not_integer", MM_HEADER "6 5 1\n1.5 1 1.0\n", 3, "expected a row index"},
        MalformedCase{"missing_column", MM_HEADER "6 5 1\n1\n", 3, "expected a column index"},
        MalformedCase{"missing_value", MM_HEADER "6 5 1\n1 1\n", 3, "expected a real value after the column index"},
        MalformedCase{"nan_value", MM_HEADER "6 5 1\n1 1 nan\n", 3, "not finite"},
        MalformedCase{"inf_value", MM_HEADER "6 5 1\n1 1 -Inf\n", 3, "not finite"},
        MalformedCase{"overflow_value", MM_HEADER "6 5 1\n1 1 1e400\n", 3, "out of the range of double"},
        MalformedCase{"text_value", MM_HEADER "6 5 1\n1 1 abc\n", 3, "expected a real value, found 'abc'"},
        MalformedCase{"half_number", MM_HEADER "6 5 1\n1 1 1.5e\n", 3, "expected a real value, found '1.5e'"},
        MalformedCase{"hex_value", MM_HEADER "6 5 1\n1 1 0x1p3\n", 3, "expected a real value"},
        MalformedCase{"two_signs", MM_HEADER "6 5 1\n1 1 +-1.5\n", 3, "expected a real value, found '+-1.5'"},
        MalformedCase{"two_plus_signs", MM_HEADER "6 5 1\n1 1 ++1.5\n", 3, "expected a real value, found '++1.5'"},
        MalformedCase{"trailing_garbage", MM_HEADER "6 5 2\n1 1 1.0\n2 2 2.0 x\n", 4,
                      "unexpected text 'x' after the entry"},
        MalformedCase{"integer_with_fraction", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3,
                      "expected an integer value, found '1.5'"},
        MalformedCase{"pattern_with_value", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1.5\n", 3,
                      "a pattern file has no values"}),
    [](const ::testing::TestParamInfo<MalformedCase>& param_info) { return std::string(param_info.param.name); });

// A write that fails half way (here: the file-size limit) leaves the old file as it was, and no
// temporary file behind; both writers go through the same temporary-then-rename path.
TEST(MatrixIoWrite, AFailedWriteLeavesTheOldFileIntact) {
  const std::string mtx = temp_path("keep.mtx"), bin = temp_path("keep.cispmv");
  const HostCsr small = cispmv::test::random_irregular<double>(20, 20, 4, 3);
  cispmv::write_matrix_market(mtx, small);
  cispmv::write_binary(bin, small);
  auto slurp = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string old_mtx = slurp(mtx), old_bin = slurp(bin);
  const HostCsr big = cispmv::test::random_irregular<double>(20000, 20000, 7, 40);  // ~10 MB of text
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG
  rlimit small_limit = saved;
  small_limit.rlim_cur = 1 << 20;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small_limit), 0);
  EXPECT_THROW(cispmv::write_matrix_market(mtx, big), std::runtime_error);
  EXPECT_THROW(cispmv::write_binary(bin, big), std::runtime_error);
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(slurp(mtx), old_mtx);
  EXPECT_EQ(slurp(bin), old_bin);
  for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir())) {
    EXPECT_EQ(entry.path().filename().string().find(".cispmv_test_io_keep"), std::string::npos)
        << "temporary file left behind: " << entry.path();
  }
  // a complete write replaces the file; a path that is no regular file is written in place
  cispmv::write_matrix_market(mtx, big);
  EXPECT_EQ(cispmv::read_matrix_market(mtx).nnz(), big.nnz());
  EXPECT_NO_THROW(cispmv::write_matrix_market("/dev/null", small));
}

TEST(MatrixMarketIo, MissingFileThrowsRuntimeErrorNamingIt) {
  const std::string path = temp_path("does_not_exist.mtx");
  std::remove(path.c_str());
  try {
    cispmv::read_matrix_market(path);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
  }
}

// ------------------------------------------------------------------------------ binary

TEST(BinaryIo, Xxhash64MatchesTheReferenceImplementation) {
  // Values of the reference libxxhash 0.8.1, XXH64(data, size, seed).
  EXPECT_EQ(cispmv::xxhash64("", 0), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(cispmv::xxhash64("a", 1), 0xD24EC4F1A98C6E5BULL);
  EXPECT_EQ(cispmv::xxhash64("abc", 3), 0x44BC2CF5AD770999ULL);
  const std::string sentence = "cispmv: Mahmoud, Hoffmann, Reza 2018";
  EXPECT_EQ(cispmv::xxhash64(sentence.data(), sentence.size()), 0x2AE664D5BDF13160ULL);
  std::vector<unsigned char> bytes;
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<unsigned char>(i));
  }
  bytes.insert(bytes.end(), {'x', 'y', 'z'});
  EXPECT_EQ(cispmv::xxhash64(bytes.data(), bytes.size()), 0xE921A1B45BD779F8ULL);
  EXPECT_EQ(cispmv::xxhash64(bytes.data(), 100, 12345), 0x028BA1AE2DE4DE27ULL);
}

TEST(BinaryIo, WriteThenReadIsBitExact) {
  const HostCsr A = tricky_matrix();
  const std::string path = temp_path("roundtrip.cispmv");
  cispmv::write_binary(path, A);
  expect_identical(A, cispmv::read_binary(path));
}

TEST(BinaryIo, FileFollowsTheDocumentedLayout) {
  const HostCsr A = tricky_matrix();  // 4 x 7, 12 nonzeros
  const std::string path = temp_path("layout.cispmv");
  cispmv::write_binary(path, A);
  const auto bytes = read_bytes(path);
  ASSERT_EQ(bytes.size(), 80u + 5 * 8 + 12 * 4 + 12 * 8);  // 12 int32 = 48 bytes: no padding
  EXPECT_EQ(std::memcmp(bytes.data(),
                        "\x89"
                        "CISPMV\n",
                        8),
            0);
  auto u32 = [&](std::size_t at) {
    std::uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  auto i64 = [&](std::size_t at) {
    std::int64_t v;
    std::memcpy(&v, bytes.data() + at, 8);
    return v;
  };
  EXPECT_EQ(u32(8), 1u);
  EXPECT_EQ(u32(12), 0x01020304u);
  EXPECT_EQ(bytes[16], 8);
  EXPECT_EQ(bytes[17], 4);
  EXPECT_EQ(bytes[18], 8);
  EXPECT_EQ(i64(24), 4);
  EXPECT_EQ(i64(32), 7);
  EXPECT_EQ(i64(40), 12);
  EXPECT_EQ(static_cast<std::uint64_t>(i64(56)), cispmv::xxhash64(A.col_idx.data(), 48));
  EXPECT_EQ(static_cast<std::uint64_t>(i64(72)), cispmv::xxhash64(bytes.data(), 72));

  const HostCsr odd = make_csr(1, 3, {0, 3}, {0, 1, 2}, {1, 2, 3});  // 12 bytes of col_idx: 4 of padding
  cispmv::write_binary(path, odd);
  EXPECT_EQ(read_bytes(path).size(), 80u + 2 * 8 + 3 * 4 + 4 + 3 * 8);
  expect_identical(odd, cispmv::read_binary(path));
}

TEST(BinaryIo, TruncatedFileThrowsNamingTheFile) {
  const std::string good = temp_path("truncate_source.cispmv");
  cispmv::write_binary(good, tricky_matrix());
  const auto bytes = read_bytes(good);
  for (const std::size_t keep :
       {std::size_t(0), std::size_t(5), std::size_t(79), std::size_t(80), std::size_t(100), bytes.size() - 1}) {
    const std::string path = temp_path("truncated.cispmv");
    write_bytes(path, std::vector<unsigned char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
    const std::string what = parse_error_of([&] { cispmv::read_binary(path); });
    EXPECT_TRUE(contains(what, path + ": ")) << what;
    EXPECT_TRUE(contains(what, "truncated file")) << "kept " << keep << " bytes: " << what;
  }
}

TEST(BinaryIo, FlippedByteIsCaughtByTheChecksums) {
  const std::string good = temp_path("flip_source.cispmv");
  cispmv::write_binary(good, tricky_matrix());
  const auto bytes = read_bytes(good);
  const struct {
    std::size_t at;
    const char* expected;
  } cases[] = {{26, "corrupt header: checksum mismatch"},      // rows
               {44, "corrupt header: checksum mismatch"},      // nnz
               {80 + 8, "checksum mismatch in row_ptr"},       // row_ptr(1)
               {80 + 40 + 5, "checksum mismatch in col_idx"},  // col_idx(1)
               {bytes.size() - 3, "checksum mismatch in values"}};
  for (const auto& c : cases) {
    auto flipped = bytes;
    flipped[c.at] ^= 0x10;
    const std::string path = temp_path("flipped.cispmv");
    write_bytes(path, flipped);
    const std::string what = parse_error_of([&] { cispmv::read_binary(path); });
    EXPECT_TRUE(contains(what, path + ": ")) << what;
    EXPECT_TRUE(contains(what, c.expected)) << "byte " << c.at << ": " << what;
  }
}

TEST(BinaryIo, BadMagicUnknownVersionAndTrailingDataAreRejected) {
  const std::string mtx = std::string(CISPMV_TEST_DATA_DIR) + "/paper_6x5.mtx";
  EXPECT_TRUE(contains(parse_error_of([&] { cispmv::read_binary(mtx); }), "bad magic"));

  const std::string good = temp_path("header_source.cispmv");
  cispmv::write_binary(good, tricky_matrix());
  const auto bytes = read_bytes(good);
  const std::string path = temp_path("header_case.cispmv");

  auto version = bytes;
  version[8] = 2;
  write_bytes(path, version);
  EXPECT_TRUE(contains(parse_error_of([&] { cispmv::read_binary(path); }), "unsupported format version 2"));

  auto swapped = bytes;
  std::swap(swapped[12], swapped[15]);
  std::swap(swapped[13], swapped[14]);
  write_bytes(path, swapped);
  EXPECT_TRUE(contains(parse_error_of([&] { cispmv::read_binary(path); }), "opposite byte order"));

  auto longer = bytes;
  longer.push_back(0);
  write_bytes(path, longer);
  EXPECT_TRUE(contains(parse_error_of([&] { cispmv::read_binary(path); }), "unexpected data after the matrix"));
}

// A header that is consistent (checksum recomputed) but announces a huge matrix must be rejected
// by comparing with the file length, before anything is allocated.
TEST(BinaryIo, HugeSizesInAValidHeaderAreRejectedBeforeAllocating) {
  const std::string good = temp_path("huge_source.cispmv");
  cispmv::write_binary(good, tricky_matrix());
  auto bytes = read_bytes(good);
  const std::int64_t nnz = std::int64_t(1) << 60;
  std::memcpy(bytes.data() + 40, &nnz, 8);
  const std::uint64_t sum = cispmv::xxhash64(bytes.data(), 72);
  std::memcpy(bytes.data() + 72, &sum, 8);
  const std::string path = temp_path("huge.cispmv");
  write_bytes(path, bytes);
  const std::string what = parse_error_of([&] { cispmv::read_binary(path); });
  EXPECT_TRUE(contains(what, "truncated file: the header announces 4 x 7 with 1152921504606846976 nonzeros")) << what;
}

TEST(BinaryIo, ConsistentChecksumsOfAnInvalidCsrStillFailValidation) {
  const HostCsr A = tricky_matrix();
  const std::string good = temp_path("invalid_source.cispmv");
  cispmv::write_binary(good, A);
  auto bytes = read_bytes(good);
  const int bad_column = 7;  // == num_cols
  std::memcpy(bytes.data() + 80 + 40, &bad_column, 4);
  const std::uint64_t col_sum = cispmv::xxhash64(bytes.data() + 80 + 40, 48);
  std::memcpy(bytes.data() + 56, &col_sum, 8);
  const std::uint64_t header_sum = cispmv::xxhash64(bytes.data(), 72);
  std::memcpy(bytes.data() + 72, &header_sum, 8);
  const std::string path = temp_path("invalid.cispmv");
  write_bytes(path, bytes);
  const std::string what = parse_error_of([&] { cispmv::read_binary(path); });
  EXPECT_TRUE(contains(what, "invalid CSR structure")) << what;
  EXPECT_TRUE(contains(what, "column index 7")) << what;
}

// Garbage behind valid checksums (issue 13): what the format promises (sorted rows without
// duplicates, finite values, a non-decreasing row_ptr, zero reserved bytes) is checked, not assumed.
TEST(BinaryIo, GarbageWithConsistentChecksumsIsRejected) {
  const std::string good = temp_path("garbage_source.cispmv");
  cispmv::write_binary(good, tricky_matrix());  // 4 x 7, 12 nonzeros: row_ptr at 80, col_idx at 120, values at 168
  const auto bytes = read_bytes(good);
  auto resum = [](std::vector<unsigned char> b) {
    const std::size_t at[3][3] = {{80, 40, 48}, {120, 48, 56}, {168, 96, 64}};  // offset, bytes, checksum slot
    for (const auto& a : at) {
      const std::uint64_t sum = cispmv::xxhash64(b.data() + a[0], a[1]);
      std::memcpy(b.data() + a[2], &sum, 8);
    }
    const std::uint64_t header_sum = cispmv::xxhash64(b.data(), 72);
    std::memcpy(b.data() + 72, &header_sum, 8);
    return b;
  };
  auto put_int = [](std::vector<unsigned char>& b, std::size_t at, int v) { std::memcpy(b.data() + at, &v, 4); };
  struct Case {
    std::string name;
    std::vector<unsigned char> bytes;
    std::string expected;
  };
  std::vector<Case> cases;
  auto unsorted = bytes;
  put_int(unsorted, 120, 3);  // row 0: columns 3, 3, 6
  cases.push_back({"duplicate", unsorted, "row 0 is not sorted by column without duplicates"});
  auto swapped = bytes;
  put_int(swapped, 120 + 4 * 3, 2);  // row 2: columns 2, 1, 2, 5, 6
  put_int(swapped, 120 + 4 * 4, 1);
  cases.push_back({"unsorted", swapped, "row 2 is not sorted"});
  auto nan = bytes;
  const double not_a_number = std::numeric_limits<double>::quiet_NaN();
  std::memcpy(nan.data() + 168 + 8 * 2, &not_a_number, 8);
  cases.push_back({"nan", nan, "is not finite"});
  auto infinite = bytes;
  const double inf = -std::numeric_limits<double>::infinity();
  std::memcpy(infinite.data() + 168 + 8 * 7, &inf, 8);
  cases.push_back({"inf", infinite, "is not finite"});
  auto decreasing = bytes;
  const std::size_t nine = 9;
  std::memcpy(decreasing.data() + 80 + 8 * 2, &nine, 8);  // row_ptr 0 3 9 8 12
  cases.push_back({"decreasing_row_ptr", decreasing, "invalid CSR structure"});
  auto reserved = bytes;
  reserved[20] = 1;
  cases.push_back({"reserved", reserved, "reserved byte 20 is not zero"});
  const std::string path = temp_path("garbage.cispmv");
  for (const auto& c : cases) {
    write_bytes(path, resum(c.bytes));
    const std::string what = parse_error_of([&] { cispmv::read_binary(path); });
    EXPECT_TRUE(contains(what, c.expected)) << c.name << ": " << what;
  }
}

// Sizes announced by a tiny file are checked against the memory there is before anything is
// allocated; endless or binary input, directories and streams are handled (issue 13).
TEST(MatrixIoHostile, HugeAnnouncementsEndlessInputDirectoriesAndStreams) {
  ::setenv("CISPMV_MAX_MEMORY", "2G", 1);  // the budget every reader checks against
  const std::string huge = temp_path("huge_rows.mtx");
  write_text(huge, "%%MatrixMarket matrix coordinate real general\n2147483647 2147483647 1\n1 1 1.0\n");
  std::string what = parse_error_of([&] { cispmv::read_matrix(huge); });
  EXPECT_TRUE(contains(what, huge + ":2: the size line announces 2147483647 x 2147483647 with 1 entries")) << what;
  EXPECT_TRUE(contains(what, "of memory are available")) << what;
  write_text(huge, "%%MatrixMarket matrix coordinate real general\n1000000000 5 1\n1 1 1.0\n");
  EXPECT_TRUE(contains(parse_error_of([&] { cispmv::read_matrix(huge); }), "reading it needs about 16.0 GB"));
  ::unsetenv("CISPMV_MAX_MEMORY");
  // /dev/zero: refused on its first bytes, not after reading gigabytes
  what = parse_error_of([&] { cispmv::read_matrix("/dev/zero"); });
  EXPECT_TRUE(contains(what, "/dev/zero: a stream that starts with neither")) << what;
  // a directory
  try {
    cispmv::read_matrix(::testing::TempDir());
    ADD_FAILURE() << "read a directory";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "is a directory")) << e.what();
  }
  // a FIFO with a writer: read once, completely (it was opened three times, losing the data)
  const std::string fifo = temp_path("matrix.fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const HostCsr A = tricky_matrix();
  const std::string source = temp_path("fifo_source.mtx");
  cispmv::write_matrix_market(source, A);
  const std::string text = [&] {
    std::ifstream in(source, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << text;
  });
  const HostCsr B = cispmv::read_matrix(fifo);
  writer.join();
  expect_identical(A, B);
  std::remove(fifo.c_str());
}

// ------------------------------------------------------------------------------ dispatch

TEST(MatrixIoDispatch, ReadMatrixChoosesTheFormatByContentThenExtension) {
  const HostCsr A = tricky_matrix();
  const std::string bin = temp_path("dispatch.cispmv");
  const std::string mtx = temp_path("dispatch.mtx");
  cispmv::write_matrix(bin, A);
  cispmv::write_matrix(mtx, A);
  expect_identical(A, cispmv::read_matrix(bin));
  expect_identical(A, cispmv::read_matrix(mtx));
  EXPECT_EQ(read_bytes(bin)[0], 0x89);
  EXPECT_EQ(read_bytes(mtx)[0], '%');

  // Content wins over a misleading or missing extension.
  const std::string bin_as_txt = temp_path("dispatch_binary.txt");
  const std::string mtx_as_dat = temp_path("dispatch_text.dat");
  write_bytes(bin_as_txt, read_bytes(bin));
  write_bytes(mtx_as_dat, read_bytes(mtx));
  expect_identical(A, cispmv::read_matrix(bin_as_txt));
  expect_identical(A, cispmv::read_matrix(mtx_as_dat));

  const std::string garbage = temp_path("garbage.dat");
  write_text(garbage, "hello\n");
  EXPECT_TRUE(contains(parse_error_of([&] { cispmv::read_matrix(garbage); }), "unknown file format"));
  const std::string garbage_mtx = temp_path("garbage.mtx");
  write_text(garbage_mtx, "hello\n");
  EXPECT_TRUE(contains(parse_error_of([&] { cispmv::read_matrix(garbage_mtx); }), ":1: expected the header"));
  EXPECT_THROW(cispmv::write_matrix(temp_path("unknown.ext"), A), std::invalid_argument);
}

}  // namespace
