// Compressed Sliced ELLPACK (formats/compressed_sell.hpp, its encoder and value table): CI-like matrices in four
// bytes an entry, the rest and jump slots, lanes per row, rows sorted in windows, row blocks, the value table's
// orders, values inline, and what the encoder refuses.
#include "test_utils.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace {

using cispmv::test::few_valued;
using cispmv::test::random_irregular;

template <class View>
std::vector<double> flat(const View& v) {
  std::vector<double> out;
  if constexpr (View::rank == 1) {
    for (std::size_t i = 0; i < v.extent(0); ++i) out.push_back(static_cast<double>(v(i)));
  } else {
    for (std::size_t i = 0; i < v.extent(0); ++i)
      for (std::size_t j = 0; j < v.extent(1); ++j) out.push_back(static_cast<double>(v(i, j)));
  }
  return out;
}
using V = std::vector<double>;

}  // namespace

namespace {

using namespace cispmv;

/// B is A exactly: the same rows, columns and values.
void expect_same_csr(const HostCsr& B, const HostCsr& A) {
  ASSERT_EQ(B.nnz(), A.nnz());
  for (int r = 0; r <= A.num_rows; ++r) ASSERT_EQ(B.row_ptr(r), A.row_ptr(r));
  for (std::size_t k = 0; k < A.nnz(); ++k) {
    ASSERT_EQ(B.col_idx(k), A.col_idx(k)) << "entry " << k;
    ASSERT_EQ(B.values(k), A.values(k)) << "entry " << k;
  }
}

TEST(CompressedSell, CiLikeMatrixStoresNearlyEveryEntryInFourBytes) {
  const HostCsr A = few_valued(640, 5000, 120, 300, 51);
  const auto C = to_compressed_sell(A);
  EXPECT_EQ(C.rest_nnz(), 0u);
  EXPECT_EQ(C.compressed_nnz, A.nnz());
  EXPECT_LE(C.value_table.extent(0), 300u);
  // 2 + 2 bytes per entry, padding, 16 bytes per row, the table: well under 0.4x CSR's 12 bytes
  EXPECT_LT(static_cast<double>(allocated_bytes(C)), 0.4 * static_cast<double>(allocated_bytes(A)));
}

TEST(CompressedSell, RareValuesAndWideGapsGoToTheRestAndRoundTripExactly) {
  // many distinct values with a 4-entry table, and rows whose columns jump by more than 65,535
  CooMatrix<double, int> coo;
  coo.num_rows = 70;
  coo.num_cols = 200000;
  for (int r = 0; r < 70; ++r) {
    for (int c : {r, r + 10, 70000 + r, 150000 + 3 * r}) {
      coo.row_idx.push_back(r);
      coo.col_idx.push_back(c);
      coo.values.push_back(c % 7 == 0 ? 1.0 + r : 2.5);  // 2.5 is frequent, the others are not
    }
  }
  const HostCsr A = from_coo(coo);
  const auto C = to_compressed_sell(A, 32, 4, 0.0);  // a table however little it covers
  EXPECT_TRUE(C.uses_table);
  EXPECT_GT(C.rest_nnz(), 0u);
  EXPECT_EQ(C.compressed_nnz + C.rest_nnz(), A.nnz());
  expect_same_csr(to_csr(C), A);
  for (int lanes : {2, 4, 32}) {  // the same entries dealt to lanes: jumps and R per lane and row
    SCOPED_TRACE(std::to_string(lanes) + " lanes per row");
    const auto CL = to_compressed_sell(A, 32, 4, 0.0, std::size_t(1) << 22, ValueTableOrder::automatic, lanes);
    EXPECT_EQ(CL.compressed_nnz, C.compressed_nnz);
    EXPECT_EQ(CL.rest_nnz(), C.rest_nnz());
    expect_same_csr(to_csr(CL), A);
  }
}

// Lanes per row (row_lanes): lane j of row r is layout row r * L + j and holds the row's entries j,
// j + L, ...; the matrix round-trips exactly for every L, and a wrong L is refused with its value.
TEST(CompressedSell, LanesPerRowDealTheRowsEntries) {
  const HostCsr A = few_valued(150, 3000, 70, 40, 17);
  for (int lanes : {1, 2, 4, 8, 16, 32}) {
    SCOPED_TRACE(std::to_string(lanes) + " lanes per row");
    const auto C = to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, lanes);
    ASSERT_EQ(C.row_lanes, lanes);
    ASSERT_EQ(C.num_lanes(), A.num_rows * lanes);
    ASSERT_EQ(C.row_length.extent(0), static_cast<std::size_t>(A.num_rows) * lanes);
    EXPECT_EQ(C.num_slices(), (A.num_rows * lanes + 31) / 32);
    EXPECT_EQ(C.rest_nnz(), 0u);
    for (int r = 0; r < A.num_rows; ++r) {
      const auto length = static_cast<int>(A.row_ptr(r + 1) - A.row_ptr(r));
      for (int j = 0; j < lanes; ++j) {
        const int lane = r * lanes + j;
        ASSERT_EQ(C.row_length(lane), length > j ? (length - j + lanes - 1) / lanes : 0)
            << "row " << r << " lane " << j;
        if (length > j) {
          ASSERT_EQ(C.first_col(lane), A.col_idx(A.row_ptr(r) + static_cast<std::size_t>(j)));
          ASSERT_EQ(C.value_table(C.value_index(C.lane_start(lane))),
                    A.values(A.row_ptr(r) + static_cast<std::size_t>(j)));
        }
      }
    }
    expect_same_csr(to_csr(C), A);
  }
  for (int bad : {0, 3, 64, -2}) {
    try {
      (void)to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, bad);
      ADD_FAILURE() << bad << " lanes per row were accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("row_lanes"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)to_compressed_sell(A, 16, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, 32),
               std::invalid_argument);  // more lanes than a slice's rows
}

// Rows sorted longest first inside windows (sort_window, row_order): a permutation of each window,
// longest first with ties in matrix order, layout row p holding matrix row row_order(p)'s entries;
// the matrix round-trips exactly, no window takes more slots than none, and a bad window is refused.
TEST(CompressedSell, RowsSortedInWindows) {
  const HostCsr A = few_valued(333, 4000, 45, 500, 23, 45);  // 0-90 entries per row
  for (int lanes : {1, 4}) {
    const auto unsorted =
        to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, lanes);
    EXPECT_EQ(unsorted.row_order.extent(0), 0u);
    for (int window : {0, 1, 32 / lanes, 64, 4096}) {  // one slice, several, the whole matrix
      SCOPED_TRACE(std::to_string(lanes) + " lanes, windows of " + std::to_string(window));
      const auto C =
          to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, lanes, window);
      expect_same_csr(to_csr(C), A);
      EXPECT_LE(C.col_delta.extent(0), unsorted.col_delta.extent(0));
      if (window <= 1) {
        EXPECT_EQ(C.row_order.extent(0), 0u);
        continue;
      }
      ASSERT_EQ(C.row_order.extent(0), static_cast<std::size_t>(A.num_rows));
      std::vector<int> seen(static_cast<std::size_t>(A.num_rows), 0);
      auto width = [&](int r) {  // the longest lane of matrix row r
        const int length = static_cast<int>(A.row_ptr(r + 1) - A.row_ptr(r));
        return (length + lanes - 1) / lanes;
      };
      for (int p = 0; p < A.num_rows; ++p) {
        const int r = C.row_order(p);
        ASSERT_EQ(r / window, p / window) << "layout row " << p << " holds row " << r << " of another window";
        ++seen[static_cast<std::size_t>(r)];
        if (p % window > 0) {  // longest first, ties in matrix order
          const int q = C.row_order(p - 1);
          ASSERT_TRUE(width(q) > width(r) || (width(q) == width(r) && q < r)) << "layout rows " << p - 1 << ", " << p;
        }
        const int length = static_cast<int>(A.row_ptr(r + 1) - A.row_ptr(r));
        for (int j = 0; j < lanes && j < length; ++j) {
          ASSERT_EQ(C.first_col(p * lanes + j), A.col_idx(A.row_ptr(r) + static_cast<std::size_t>(j)));
          ASSERT_EQ(C.row_length(p * lanes + j), (length - j + lanes - 1) / lanes);
        }
      }
      for (int r = 0; r < A.num_rows; ++r) {
        ASSERT_EQ(seen[static_cast<std::size_t>(r)], 1) << "row " << r;
      }
      if (window > 32 / lanes) {
        EXPECT_LT(C.col_delta.extent(0), unsorted.col_delta.extent(0));  // less padding
      } else {
        EXPECT_EQ(C.col_delta.extent(0), unsorted.col_delta.extent(0));  // a slice's rows among themselves
      }
    }
  }
  // -1: the automatic window, chosen once the encoder knows whether its values go inline (wider then)
  for (double min_coverage : {0.5, 2.0}) {  // a table; values inline (no table covers 200 %)
    for (int lanes : {1, 4}) {
      const auto automatic =
          to_compressed_sell(A, 32, 65536, min_coverage, std::size_t(1) << 22, ValueTableOrder::automatic, lanes, -1);
      EXPECT_EQ(automatic.uses_table, min_coverage < 1);
      const int window = impl::automatic_sort_window(32, lanes, !automatic.uses_table);
      EXPECT_EQ(window, automatic.uses_table ? 64 : 1024);
      const auto expected = to_compressed_sell(A, 32, 65536, min_coverage, std::size_t(1) << 22,
                                               ValueTableOrder::automatic, lanes, window);
      ASSERT_EQ(automatic.row_order.extent(0), expected.row_order.extent(0));
      for (std::size_t p = 0; p < expected.row_order.extent(0); ++p)
        ASSERT_EQ(automatic.row_order(p), expected.row_order(p)) << "layout row " << p;
      expect_same_csr(to_csr(automatic), A);
    }
  }
  for (int bad : {-2, 4097, 48, 7}) {  // out of range, or not whole slices of 32 rows
    try {
      (void)to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, 1, bad);
      ADD_FAILURE() << "a window of " << bad << " rows was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("sort_window"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
  }
}

// A matrix that exists only as row blocks (a CI Hamiltonian whose CSR would not fit): the same
// matrix, exactly, whatever the blocks; one block is to_compressed_sell itself.
TEST(CompressedSell, RowBlocksEncodeTheSameMatrix) {
  const HostCsr A =
      few_valued(333, 4000, 40, 500, 91, 30);  // 500 values, a table of 64: some in the rest; 10-70 per row
  auto rows = [&](int first, int end) {
    HostCsr B("block", end - first, A.num_cols, A.row_ptr(static_cast<std::size_t>(end)) - A.row_ptr(first));
    for (int r = first; r <= end; ++r) B.row_ptr(static_cast<std::size_t>(r - first)) = A.row_ptr(r) - A.row_ptr(first);
    for (std::size_t k = 0; k < B.nnz(); ++k) {
      B.col_idx(k) = A.col_idx(A.row_ptr(first) + k);
      B.values(k) = A.values(A.row_ptr(first) + k);
    }
    return B;
  };
  for (const int block : {1, 7, 32, 100, 333, 1000}) {
    for (const auto order : {ValueTableOrder::frequency, ValueTableOrder::first_use}) {
      const int lanes = block == 7 || block == 333 ? 4 : 1;     // lanes per row, blocked and whole
      const int window = block == 7 || block == 1000 ? 64 : 1;  // rows sorted across blocks, and in one
      SCOPED_TRACE("blocks of " + std::to_string(block) + " rows, " + std::to_string(lanes) + " lanes, windows of " +
                   std::to_string(window));
      int calls = 0;
      const auto C = to_compressed_sell_by_blocks<double, int, std::size_t, HostExecSpace>(
          A.num_rows, A.num_cols, block,
          [&](int first, int end) {
            ++calls;
            return rows(first, end);
          },
          32, 64, 0.0, std::size_t(1) << 22, order, lanes, window);
      const int blocks = (A.num_rows + block - 1) / block;
      EXPECT_EQ(calls, 2 * blocks + (blocks > 1 ? std::min(blocks, 8) : 1));  // count, fill, samples
      EXPECT_EQ(C.nnz(), A.nnz());
      EXPECT_EQ(C.value_table.extent(0), 64u);
      EXPECT_GT(C.rest_nnz(), 0u);
      expect_same_csr(to_csr(C), A);
      if (block >= A.num_rows) {  // one block: to_compressed_sell's encoding, slot for slot
        const auto W = to_compressed_sell(A, 32, 64, 0.0, std::size_t(1) << 22, order, lanes, window);
        ASSERT_EQ(W.col_delta.extent(0), C.col_delta.extent(0));
        ASSERT_EQ(W.row_order.extent(0), C.row_order.extent(0));
        for (std::size_t p = 0; p < W.row_order.extent(0); ++p) ASSERT_EQ(W.row_order(p), C.row_order(p));
        for (std::size_t e = 0; e < W.col_delta.extent(0); ++e) {
          ASSERT_EQ(W.col_delta(e), C.col_delta(e));
          ASSERT_EQ(W.value_index(e), C.value_index(e));
        }
        for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(W.value_table(i), C.value_table(i));
      }
    }
  }
  // blocks of the wrong shape, rows out of order (named by their row in the whole matrix), and a
  // block that changes between the passes are refused
  EXPECT_THROW((to_compressed_sell_by_blocks<double, int, std::size_t, HostExecSpace>(
                   A.num_rows, A.num_cols, 50, [&](int first, int end) { return rows(first, end + (end < 333)); })),
               std::invalid_argument);
  try {
    to_compressed_sell_by_blocks<double, int, std::size_t, HostExecSpace>(A.num_rows, A.num_cols, 50,
                                                                          [&](int first, int end) {
                                                                            HostCsr B = rows(first, end);
                                                                            if (first == 150)
                                                                              std::swap(B.col_idx(0), B.col_idx(1));
                                                                            return B;
                                                                          });
    ADD_FAILURE() << "unsorted rows were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 150 "), std::string::npos) << e.what();
  }
  int visits = 0;
  EXPECT_THROW((to_compressed_sell_by_blocks<double, int, std::size_t, HostExecSpace>(
                   A.num_rows, A.num_cols, 400,
                   [&](int first, int end) {
                     HostCsr B = rows(first, end);
                     if (++visits == 3) {  // the fill pass: one entry fewer than the count pass saw
                       const std::size_t fewer = B.nnz() - 1;
                       B.row_ptr(static_cast<std::size_t>(B.num_rows)) = fewer;
                       B.col_idx = Kokkos::subview(B.col_idx, std::make_pair(std::size_t{0}, fewer));
                       B.values = Kokkos::subview(B.values, std::make_pair(std::size_t{0}, fewer));
                     }
                     return B;
                   })),
               std::invalid_argument);
}

// The value table in order of first use (row by row; the CPUs' default) or most frequent first (the
// GPUs'); the entries, the rest and the product are the same either way.
TEST(CompressedSell, ValueTableOrderIsFirstUseOrFrequency) {
  const HostCsr A = few_valued(300, 4000, 40, 200, 77);
  // 64 of 200 values: some go to the rest
  const auto first = to_compressed_sell(A, 32, 64, 0.0, std::size_t(1) << 22, ValueTableOrder::first_use);
  const auto frequent = to_compressed_sell(A, 32, 64, 0.0, std::size_t(1) << 22, ValueTableOrder::frequency);
  ASSERT_EQ(first.value_table.extent(0), 64u);
  ASSERT_EQ(frequent.value_table.extent(0), 64u);
  // the same 64 values (the most frequent), in different orders
  std::map<double, std::size_t> count;
  for (std::size_t k = 0; k < A.nnz(); ++k) ++count[A.values(k)];
  std::set<double> in_table;
  for (std::size_t i = 0; i < 64; ++i) {
    in_table.insert(frequent.value_table(i));
    if (i > 0) {
      EXPECT_GE(count[frequent.value_table(i - 1)], count[frequent.value_table(i)]) << "position " << i;
    }
  }
  std::vector<double> expected_order;  // the table's values as the rows first use them
  for (std::size_t k = 0; k < A.nnz(); ++k) {
    const double v = A.values(k);
    if (in_table.count(v) && std::find(expected_order.begin(), expected_order.end(), v) == expected_order.end())
      expected_order.push_back(v);
  }
  ASSERT_EQ(expected_order.size(), 64u);
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(first.value_table(i), expected_order[i]) << "position " << i;
  EXPECT_NE(expected_order, std::vector<double>(frequent.value_table.data(), frequent.value_table.data() + 64));
  // automatic, on the host: first use
  const auto automatic = to_compressed_sell(A, 32, 64, 0.0);
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(automatic.value_table(i), first.value_table(i));
  // the same layout and rest; each entry's index points at its own value in either table
  EXPECT_EQ(first.compressed_nnz, frequent.compressed_nnz);
  EXPECT_EQ(first.rest_nnz(), frequent.rest_nnz());
  for (std::size_t e = 0; e < first.col_delta.extent(0); ++e) ASSERT_EQ(first.col_delta(e), frequent.col_delta(e));
  for (int r = 0; r < A.num_rows; ++r) {  // the entries' slots (padding and jump slots hold index 0)
    const std::size_t s0 = first.slice_ptr(r / 32) + static_cast<std::size_t>(r % 32);
    for (int k = 0; k < first.row_length(r); ++k) {
      const std::size_t e = s0 + 32 * static_cast<std::size_t>(k);
      if (first.col_delta(e) == first.jump_delta) continue;
      ASSERT_EQ(first.value_table(first.value_index(e)), frequent.value_table(frequent.value_index(e))) << "slot " << e;
    }
  }
  for (const auto* C : {&first, &frequent}) {
    const auto B = to_csr(*C);
    ASSERT_EQ(B.nnz(), A.nnz());
    for (std::size_t k = 0; k < A.nnz(); ++k) {
      ASSERT_EQ(B.col_idx(k), A.col_idx(k)) << "entry " << k;
      ASSERT_EQ(B.values(k), A.values(k)) << "entry " << k;
    }
  }
}

// The co-occurrence order (ValueTableOrder::cooccurrence): values that the same half-warp steps read
// share a 128-byte line of the table, whatever their frequency order; the product is unchanged.
TEST(CompressedSell, CooccurrenceOrderPutsValuesReadTogetherInOneLine) {
  // 64 rows of 48 entries; entry k of row r has value (group k % 3, member r % 16): at every slot the
  // 16 lanes of a half-warp read the 16 values of one group, and no group meets another. All 48
  // values are equally frequent, so frequency order (ties by bits) interleaves the groups.
  CooMatrix<double, int> coo;
  coo.num_rows = 64;
  coo.num_cols = 48;
  auto value = [](int group, int member) { return 1.0 + member + 0.25 * group; };
  for (int r = 0; r < 64; ++r)
    for (int k = 0; k < 48; ++k) {
      coo.row_idx.push_back(r);
      coo.col_idx.push_back(k);
      coo.values.push_back(value(k % 3, r % 16));
    }
  const HostCsr A = from_coo(coo);
  const auto frequent = to_compressed_sell(A, 32, 65536, 0.0, std::size_t(1) << 22, ValueTableOrder::frequency);
  const auto grouped = to_compressed_sell(A, 32, 65536, 0.0, std::size_t(1) << 22, ValueTableOrder::cooccurrence);
  ASSERT_EQ(grouped.value_table.extent(0), 48u);
  auto lines_of_group = [&](const auto& C, int group) {
    std::set<std::size_t> lines;
    for (int member = 0; member < 16; ++member)
      for (std::size_t i = 0; i < C.value_table.extent(0); ++i)
        if (C.value_table(i) == value(group, member)) lines.insert(i / 16);
    return lines;
  };
  for (int group = 0; group < 3; ++group) {
    EXPECT_EQ(lines_of_group(grouped, group).size(), 1u) << "group " << group;
    EXPECT_GT(lines_of_group(frequent, group).size(), 1u) << "group " << group;  // what the order changed
  }
  // the same values, the same layout; every slot's index points at its own value
  std::vector<double> a(frequent.value_table.data(), frequent.value_table.data() + 48);
  std::vector<double> b(grouped.value_table.data(), grouped.value_table.data() + 48);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  for (std::size_t e = 0; e < frequent.col_delta.extent(0); ++e) {
    ASSERT_EQ(grouped.col_delta(e), frequent.col_delta(e));
    ASSERT_EQ(grouped.value_table(grouped.value_index(e)), frequent.value_table(frequent.value_index(e)))
        << "slot " << e;
  }
  const auto B = to_csr(grouped);
  ASSERT_EQ(B.nnz(), A.nnz());
  for (std::size_t k = 0; k < A.nnz(); ++k) {
    ASSERT_EQ(B.col_idx(k), A.col_idx(k)) << "entry " << k;
    ASSERT_EQ(B.values(k), A.values(k)) << "entry " << k;
  }
  // fewer than 32 values: left in frequency order
  const auto small = to_compressed_sell(A, 32, 16, 0.0, std::size_t(1) << 22, ValueTableOrder::cooccurrence);
  const auto small_frequent = to_compressed_sell(A, 32, 16, 0.0, std::size_t(1) << 22, ValueTableOrder::frequency);
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(small.value_table(i), small_frequent.value_table(i));
}

// A gap wider than 16 bits is bridged by jump slots, not sent to the rest.
TEST(CompressedSell, WideGapsAreBridgedByJumpSlots) {
  CooMatrix<double, int> coo;
  coo.num_rows = 2;
  coo.num_cols = 2000000;
  coo.row_idx = {0, 0, 0, 1};
  coo.col_idx = {3, 200000, 1999999, 7};
  coo.values = {1.5, 1.5, 1.5, 1.5};
  const HostCsr A = from_coo(coo);
  const auto C = to_compressed_sell(A);
  // 3 -> 200,000 takes 3 jump slots, 200,000 -> 1,999,999 takes 27: nothing goes to the rest
  EXPECT_EQ(C.rest_nnz(), 0u);
  EXPECT_EQ(C.compressed_nnz, 4u);
  EXPECT_EQ(C.row_length(0), 1 + 3 + 1 + 27 + 1);
  EXPECT_EQ(C.row_length(1), 1);
  const auto B = to_csr(C);
  for (std::size_t k = 0; k < A.nnz(); ++k) ASSERT_EQ(B.col_idx(k), A.col_idx(k)) << "entry " << k;
  // the kernels walk the jumps (host: the slice shape) to the same product as the oracle
  Kokkos::View<double*, Kokkos::HostSpace> x("x", 2000000), y("y", 2), expected("expected", 2);
  for (int c = 0; c < 2000000; ++c) x(c) = 1.0 + c % 7;
  host_oracle_spmv(1.0, A, x, 0.0, expected);
  spmv(Kokkos::DefaultHostExecutionSpace(), 1.0, C, x, 0.0, y);
  Kokkos::fence();
  EXPECT_EQ(y(0), expected(0));
  EXPECT_EQ(y(1), expected(1));
}

// Unsorted rows are refused with a message, before any parallel pass (an exception thrown inside a
// host parallel region would end the process).
TEST(CompressedSell, UnsortedRowsAreRefusedNotFatal) {
  HostCsr A("unsorted", 3, 4, 4);
  const int cols[] = {0, 3, 2, 1};
  for (int k = 0; k < 4; ++k) {
    A.col_idx(k) = cols[k];
    A.values(k) = 1.0;
  }
  A.row_ptr(1) = 1;
  A.row_ptr(2) = 3;
  A.row_ptr(3) = 4;
  try {
    (void)to_compressed_sell(A);
    FAIL() << "accepted an unsorted row";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 is not sorted"), std::string::npos) << e.what();
  }
}

// Random values (every one distinct): no table, values inline, nothing in the rest.
TEST(CompressedSell, RandomValuesAreStoredInlineWithoutATable) {
  const auto A = random_irregular<double>(300, 2000, 71, 200);
  const auto C = to_compressed_sell(A, 32, 16);
  EXPECT_FALSE(C.uses_table);
  EXPECT_EQ(C.rest_nnz(), 0u);
  EXPECT_EQ(C.inline_values.extent(0), C.col_delta.extent(0));
  const auto B = to_csr(C);
  for (std::size_t k = 0; k < A.nnz(); ++k) ASSERT_EQ(B.values(k), A.values(k)) << "entry " << k;
}

TEST(CompressedSell, ValueTableKeepsSignedZerosApartAndRefusesBadArguments) {
  CooMatrix<double, int> coo;
  coo.num_rows = 1;
  coo.num_cols = 3;
  coo.row_idx = {0, 0, 0};
  coo.col_idx = {0, 1, 2};
  coo.values = {0.0, -0.0, 1.0};
  const auto C = to_compressed_sell(from_coo(coo));
  const auto B = to_csr(C);
  EXPECT_FALSE(std::signbit(B.values(0)));
  EXPECT_TRUE(std::signbit(B.values(1)));
  EXPECT_THROW(to_compressed_sell(from_coo(coo), 0), std::invalid_argument);
  EXPECT_THROW(to_compressed_sell(from_coo(coo), 32, 0), std::invalid_argument);
  EXPECT_THROW(to_compressed_sell(from_coo(coo), 32, 65537), std::invalid_argument);
}

}  // namespace
