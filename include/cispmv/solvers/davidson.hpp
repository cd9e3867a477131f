#pragma once
/// \file solvers/davidson.hpp
/// Davidson's eigensolver for the lowest roots of a real symmetric operator: any cispmv matrix (its
/// products through an SpmvPlan made once) or any object with the operator interface of cispmv/operator.hpp.
/// The inner loop of CI (Mahmoud et al. 2018, section 2). Its options and result, the solver's state and steps
/// (impl::Davidson) and the entry point davidson(); its vector kernels are in solvers/davidson_kernels.hpp, its
/// bookkeeping on the host (the Ritz pairs' order, a restart's basis) in solvers/davidson_host.hpp.

#include <Kokkos_Core.hpp>

#include "cispmv/impl/profiling.hpp"
#include "cispmv/operator.hpp"
#include "cispmv/options.hpp"
#include "cispmv/plan.hpp"
#include "cispmv/solvers/davidson_host.hpp"
#include "cispmv/solvers/davidson_kernels.hpp"
#include "cispmv/solvers/davidson_options.hpp"
#include "cispmv/solvers/symmetric_eigen.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace cispmv::solvers {

namespace impl {

/// The state of one Davidson solve (see davidson()): the basis V, its products AV = A V, the
/// projected matrix G = V^T A V on the host, and the Ritz coefficients Y.
template <class Exec, class Operator>
class Davidson {
 public:
  using operator_memory = typename Operator::memory_space;
  /// Staged: the operator's memory is not reachable from Exec (a subspace in host memory for an operator on a GPU):
  /// the vectors live in Exec's memory and each product copies its x there and its y back.
  static constexpr bool must_stage = !Kokkos::SpaceAccessibility<Exec, operator_memory>::accessible;
  using memory_space = std::conditional_t<must_stage, typename Exec::memory_space, operator_memory>;
  using Basis = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;
  using Vec = Kokkos::View<double*, memory_space>;
  using HostVector = Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  using Result = DavidsonResult<memory_space>;

  static constexpr bool distributed = cispmv::is_distributed_operator<Operator>::value;
  /// Whether the operator's block kernel may be compiled in (its type says so, or it says at run time:
  /// OperatorRef); block_products_ says whether this solve uses it.
  static constexpr bool may_block = cispmv::may_apply_blocks<Operator>::value && !must_stage;

  Davidson(const Exec& exec, const Operator& op, const DavidsonOptions& opts)
      : exec_(exec), op_(op), opts_(opts), n_(static_cast<std::size_t>(op.num_rows())), k_(opts.num_roots) {
    if constexpr (distributed) {
      N_ = static_cast<std::size_t>(op.global_rows());
      first_ = static_cast<std::size_t>(op.first_row());
    } else {
      N_ = n_;
    }
    check_arguments();
    count_blocks();
    staged_ = must_stage || opts.stage_products;
    if constexpr (may_block) block_products_ = !staged_ && cispmv::block_apply_of(op);
    const DavidsonMemoryPlan plan = davidson_memory_plan<Exec>(n_, opts, guards_, block_products_, staged_, N_);
    if (!plan.fits) {
      throw std::invalid_argument(
          "cispmv::davidson: the smallest subspace for " + std::to_string(k_) + " roots" +
          (guards_ > 0 ? " and " + std::to_string(guards_) + " blocks' guards" : std::string()) + " (" +
          std::to_string(plan.vectors()) + " vectors of " + std::to_string(n_) + " rows, " +
          std::to_string(plan.bytes) + " bytes) exceeds the memory budget of " + std::to_string(opts.memory_budget) +
          " bytes");
    }
    max_sub_ = plan.max_subspace;
    keep_ = plan.restart_size;
    res_.max_subspace = max_sub_;
    // A restart keeps at least the pairs that must converge and leaves room for one correction per
    // pair, unless the basis may grow to span the whole space.
    const int active = k_ + guards_;  // wanted roots and the blocks' guards: the pairs that must converge
    if (static_cast<std::size_t>(max_sub_) < N_ && keep_ < active) {
      throw std::invalid_argument(
          "cispmv::davidson: max_subspace = " + std::to_string(max_sub_) + " is too small for " + std::to_string(k_) +
          " roots" + (guards_ > 0 ? " and " + std::to_string(guards_) + " blocks' guards" : std::string()) +
          " (need >= 2 * (roots + guards))");
    }
    allocate();
  }

  template <class DiagView>
  Result solve(const DiagView& diagonal) {
    Kokkos::Timer total;
    m_ = initial_guesses(diagonal);
    extend_projection(0, m_);
    std::vector<double> residual(static_cast<std::size_t>(k_ + guards_), 0.0);
    while (true) {
      ritz_pairs();
      const double worst = residual_norms(residual);
      res_.max_residual_history.push_back(worst);
      report_progress(worst, total.seconds());
      int unconverged = 0;
      for (int c = 0; c < active_; ++c) unconverged += !settled(c, residual);
      const bool done = worst < opts_.residual_tolerance && unconverged == 0;
      // A full basis spans the space: its Ritz pairs are exact, nothing to add.
      if (done || res_.iterations >= opts_.max_iterations || static_cast<std::size_t>(m_) == N_) {
        // a NaN residual (NaN in the matrix or the start) is never convergence, not even of a full basis
        res_.converged = !std::isnan(worst) && (done || static_cast<std::size_t>(m_) == N_);
        break;
      }
      const int nvec = std::min(m_, std::max(active_, keep_));
      if (m_ + unconverged > max_sub_ && m_ > nvec) restart(nvec);
      const int first = m_;
      add_corrections(residual, diagonal);
      if (m_ == first) break;  // every correction lay in the span: the solve has stagnated
      extend_projection(first, m_);
      ++res_.iterations;
    }
    finish(residual);
    res_.total_seconds = total.seconds();
    return res_;
  }

 private:
  /// The iteration's progress into the result's history and to DavidsonOptions::on_iteration.
  void report_progress(double worst, double seconds) {
    DavidsonProgress p;
    p.iteration = res_.iterations;
    p.eigenvalues.assign(theta_host_.data(), theta_host_.data() + std::min(k_, m_));
    p.max_residual = worst;
    p.seconds = seconds;
    p.subspace = m_;
    p.restarts = res_.restarts;
    p.num_spmv = res_.num_spmv;
    if (opts_.on_iteration) opts_.on_iteration(p);
    res_.history.push_back(std::move(p));
  }

  void check_arguments() const {
    if (N_ != static_cast<std::size_t>(op_.num_cols())) {
      throw std::invalid_argument("cispmv::davidson: the operator is " + std::to_string(N_) + " x " +
                                  std::to_string(op_.num_cols()) + ", not square");
    }
    if (k_ < 1 || static_cast<std::size_t>(k_) > N_) {
      throw std::invalid_argument("cispmv::davidson: num_roots = " + std::to_string(k_) + " for an operator of " +
                                  std::to_string(N_) + " rows");
    }
  }

  /// The blocks of DavidsonOptions::row_blocks: checked, copied to the operator's memory space, and
  /// counted over every process (a distributed solve gathers them even where no process has blocks,
  /// so that all processes take part). One block needs no guard: guards_ is 0 then.
  void count_blocks() {
    static_assert(max_blocks <= 52, "the blocks' bit mask travels between processes as a double");
    const std::vector<int>& b = opts_.row_blocks;
    if (!b.empty() && b.size() != n_) {
      throw std::invalid_argument("cispmv::davidson: row_blocks has " + std::to_string(b.size()) + " entries for " +
                                  std::to_string(n_) + " rows");
    }
    std::uint64_t present = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
      if (b[i] < 0 || b[i] >= max_blocks) {
        throw std::invalid_argument("cispmv::davidson: row_blocks[" + std::to_string(i) + "] = " +
                                    std::to_string(b[i]) + " is outside [0, " + std::to_string(max_blocks) + ")");
      }
      present |= std::uint64_t(1) << b[i];
    }
    if constexpr (distributed) {
      for (const double mask : op_.gather_from_ranks(std::vector<double>{static_cast<double>(present)}))
        present |= static_cast<std::uint64_t>(mask);
    }
    num_blocks_ = 0;
    for (std::uint64_t p = present; p != 0; p >>= 1) ++num_blocks_;  // 1 + the largest block
    int count = 0;
    for (std::uint64_t p = present; p != 0; p &= p - 1) ++count;
    guards_ = count > 1 ? count : 0;
    if (guards_ > 0) {
      blocks_ = Blocks(alloc("cispmv::davidson::row_blocks"), n_);
      const Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(b.data(),
                                                                                                      b.size());
      if (n_ > 0) Kokkos::deep_copy(exec_, blocks_, host);
      exec_.fence();
    }
  }

  /// Sums of this process's rows made global (distributed operators; nothing to do otherwise).
  void reduce(std::vector<double>& partial) const {
    if constexpr (distributed) op_.sum_over_ranks(partial.data(), static_cast<int>(partial.size()));
  }
  template <class X>
  double global_dot(const X& x, const X& y) const {
    std::vector<double> s{dot(exec_, x, y)};
    reduce(s);
    return s[0];
  }
  template <class Column>
  std::vector<double> global_multi_dot(const Basis& P, const Basis& Q, const Column& q, int count, bool q_is_vector) {
    std::vector<double> s = multi_dot(exec_, P, Q, q, count, q_is_vector, partial_, partial_host_);
    reduce(s);
    return s;
  }

  /// ||V(:, col)||^2 over every process, in multi_dot's chunks (a fixed order; on GPUs ~3x the bandwidth of a
  /// Kokkos reduction of 256 blocks: 1.1 against 3.0 ms for 451M rows on an H200).
  double column_norm2(int col) {
    const Basis c = columns(V_, col, col + 1);
    return global_multi_dot(c, c, column(V_, col), 1, false)[0];
  }

  template <class PView, class QView>
  std::vector<double> global_block_dots(const PView& P, const QView& Q, int count, int columns) {
    if constexpr (cispmv::impl::is_gpu_space_v<Exec>) {
      // one column (one root's correction): multi_dot's team per chunk and column of P streams V at ~3.3 TB/s,
      // where block_dots' 64 sums a thread leave one team an SM (H200, ncu, 6 columns of 451M rows: 31.6 ms a call
      // at 0.7 TB/s, three calls an iteration)
      if (columns == 1) return global_multi_dot(P, P, column(Q, 0), count, true);
    }
    std::vector<double> s = block_dots(exec_, P, Q, count, columns, block_partial_, block_partial_host_);
    reduce(s);
    return s;
  }

  // Every allocation is left uninitialised (each entry is written before it is read) and bound to
  // `exec`, so that nothing runs on another execution space behind the caller's back.
  auto alloc(const char* label) const {
    return Kokkos::view_alloc(exec_, std::string(label), Kokkos::WithoutInitializing);
  }

  void allocate() {
    const int ncols = std::max(k_ + guards_, keep_);
    V_ = Basis(alloc("cispmv::davidson::V"), n_, max_sub_);
    AV_ = Basis(alloc("cispmv::davidson::AV"), n_, max_sub_);
    R_ = Basis(alloc("cispmv::davidson::R"), n_, k_ + guards_);  // residuals (the eigenvectors at the end)
    if (ncols > in_place_columns) W_ = Basis(alloc("cispmv::davidson::W"), n_, ncols);  // a large restart's scratch
    Y_ = Basis(alloc("cispmv::davidson::Y"), max_sub_, ncols);  // Ritz coefficients, copied from the host
    theta_ = Vec(alloc("cispmv::davidson::theta"), ncols);
    h_ = Vec(alloc("cispmv::davidson::h"), max_sub_);  // Gram-Schmidt coefficients
    const std::size_t chunks = std::max<std::size_t>(1, (n_ + dot_chunk_rows - 1) / dot_chunk_rows);
    partial_ = Partial(alloc("cispmv::davidson::partial_dots"), static_cast<std::size_t>(max_sub_), chunks);
    partial_host_ = Kokkos::create_mirror_view(partial_);
    const std::size_t block_chunks = std::max<std::size_t>(1, (n_ + block_dot_chunk_rows - 1) / block_dot_chunk_rows);
    block_partial_ = Partial(alloc("cispmv::davidson::block_dots"), block_chunks,
                             static_cast<std::size_t>(max_sub_) * block_dot_columns);
    block_partial_host_ = Kokkos::create_mirror_view(block_partial_);
    H_ = Small(alloc("cispmv::davidson::H"), max_sub_, block_dot_columns);  // block Gram-Schmidt coefficients
    H_host_ = Kokkos::create_mirror_view(H_);
    h_host_ = Kokkos::create_mirror_view(h_);
    if (staged_) {  // the products' x and y in the operator's memory
      x_op_ = OperatorVec(Kokkos::view_alloc("cispmv::davidson::x", Kokkos::WithoutInitializing), n_);
      y_op_ = OperatorVec(Kokkos::view_alloc("cispmv::davidson::y", Kokkos::WithoutInitializing), n_);
    }
    if (block_products_) {                                              // row-major blocks of the products (see apply)
      const int start = std::max(k_, opts_.num_guesses) + 2 * guards_;  // unit and random vectors per block
      const int width = std::min(std::max(k_ + guards_, start), 16);
      if (width > 1) {  // room for the widest block; each block is laid out at its own row stride (apply)
        const int stride = cispmv::impl::block_buffer_stride<Exec>(width);
        X_ = Block(alloc("cispmv::davidson::X"), n_, stride);
        Y_block_ = Block(alloc("cispmv::davidson::AX"), n_, stride);
      }
    }
    Y_host_ = Kokkos::create_mirror_view(Y_);
    theta_host_ = Kokkos::create_mirror_view(theta_);
    G_.assign(static_cast<std::size_t>(max_sub_) * max_sub_, 0.0);
    col_block_.assign(static_cast<std::size_t>(max_sub_), -1);
  }

  double& g(int i, int j) { return G_[static_cast<std::size_t>(i) * max_sub_ + j]; }
  static auto column(const Basis& B, int j) { return Kokkos::subview(B, Kokkos::ALL(), j); }
  /// Columns [begin, end) of B.
  static Basis columns(const Basis& B, int begin, int end) {
    return Kokkos::subview(B, Kokkos::ALL(), Kokkos::make_pair(begin, end));
  }

  /// AV(:, first:m) = A V(:, first:m): one product per column, or (operators with a block apply) one
  /// per block of columns, which reads the matrix once for all of them. The block goes through
  /// row-major copies (the layout whose gathers touch one or two cache lines per entry), made outside
  /// the timed products, with rows impl::block_buffer_stride apart (on GPUs the width the launch
  /// compiles, which the formats' pair kernels want, whatever the block's width); num_spmv counts
  /// matrix reads.
  void apply(int first, int m) {
    if (!block_products_) {
      for (const std::vector<int>& group : disjoint_groups(first, m, col_block_, guards_ > 0)) apply_packed(group);
      return;
    }
    if constexpr (may_block) {
      const int room = static_cast<int>(X_.extent(1));
      for (int begin = first; begin < m;) {
        const int width = std::max(1, std::min(m - begin, room));
        if (width == 1) {
          timed([&] { op_.apply(1.0, column(V_, begin), 0.0, column(AV_, begin)); });
        } else {  // an odd block runs with one more column, zeroed, so that the lane shape can load
                  // X in pairs (the extra column costs that shape nothing; its products are dropped)
          const int even = std::min(width + width % 2, room);
          const int stride = std::min(cispmv::impl::block_buffer_stride<Exec>(even), room);
          const Block X(X_.data(), n_, stride), Y(Y_block_.data(), n_, stride);  // views of the buffers
          const auto cols = Kokkos::make_pair(begin, begin + width);
          const auto x = Kokkos::subview(X, Kokkos::ALL(), Kokkos::make_pair(0, width));
          const auto y = Kokkos::subview(Y, Kokkos::ALL(), Kokkos::make_pair(0, width));
          if (even > width) Kokkos::deep_copy(exec_, Kokkos::subview(X, Kokkos::ALL(), width), 0.0);
          Kokkos::deep_copy(exec_, x, Kokkos::subview(V_, Kokkos::ALL(), cols));
          timed([&] {
            op_.apply(1.0, Kokkos::subview(X, Kokkos::ALL(), Kokkos::make_pair(0, even)), 0.0,
                      Kokkos::subview(Y, Kokkos::ALL(), Kokkos::make_pair(0, even)));
          });
          Kokkos::deep_copy(exec_, Kokkos::subview(AV_, Kokkos::ALL(), cols), y);
        }
        begin += width;
      }
    }
  }

  /// AV(:, j) = A V(:, j) for each column j of `group`, in one product: the columns lie in distinct blocks, which the
  /// operator never couples, so their sum (kept in the group's first column) is multiplied once and each column's
  /// product is its block's rows of the result, exactly (the other blocks add exact zeros there). Staged: through
  /// the operator's memory.
  void apply_packed(const std::vector<int>& group) {
    const int j0 = group.front();
    for (std::size_t i = 1; i < group.size(); ++i) add_column(exec_, V_, group[i], j0);
    if (staged_) {  // (copies outside the timed products)
      Kokkos::deep_copy(x_op_, column(V_, j0));
      timed([&] { op_.apply(1.0, x_op_, 0.0, y_op_); });
      Kokkos::deep_copy(column(AV_, j0), y_op_);
    } else if constexpr (!must_stage) {
      timed([&] { op_.apply(1.0, column(V_, j0), 0.0, column(AV_, j0)); });
    }
    if (group.size() == 1) return;
    for (std::size_t i = 1; i < group.size(); ++i) {
      keep_block(exec_, AV_, j0, group[i], blocks_, col_block_[static_cast<std::size_t>(group[i])]);
    }
    keep_block(exec_, AV_, j0, j0, blocks_, col_block_[static_cast<std::size_t>(j0)]);
    keep_block(exec_, V_, j0, j0, blocks_, col_block_[static_cast<std::size_t>(j0)]);
    exec_.fence();
  }

  /// One product, fenced before and after, its time and count added to the result.
  template <class Product>
  void timed(const Product& product) {
    exec_.fence();
    Kokkos::fence();  // (staged: the copy to the operator's memory)
    Kokkos::Timer t;
    product();
    exec_.fence();
    if (staged_) Kokkos::fence();
    res_.spmv_seconds += t.seconds();
    ++res_.num_spmv;
  }

  /// Start vectors: unit vectors on the smallest diagonal entries (ties by row, for determinism), with
  /// blocks (DavidsonOptions::row_blocks) each block's smallest too, and, with random_start, dense
  /// pseudo-random vectors orthogonalised against them: one, or one per block on that block's rows.
  /// Unit vectors alone span only the blocks of the matrix their rows belong to (a CI Hamiltonian's
  /// irreducible representations): a root of another block is never found, and the solve still
  /// converges, to the wrong roots. The random vector reaches every block; the blocks' guesses and
  /// guards (ritz_pairs) make sure each block's lowest roots are found. Distributed: each process
  /// offers its smallest ones, all processes pick the same from all offers.
  template <class DiagView>
  int initial_guesses(const DiagView& diagonal) {
    const int given = std::max(0, opts_.start_count);  // (placed after the unit vectors: given_starts)
    const int guesses = std::max(0, std::min(max_sub_ - given, std::max(k_, opts_.num_guesses) - given));
    const std::size_t wanted = std::min<std::size_t>(n_, static_cast<std::size_t>(guesses));
    std::vector<Offer> offers;
    if constexpr (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename DiagView::memory_space>::accessible) {
      if (guards_ == 0) {  // the smallest entries found on the device (without blocks: their rows are all it needs)
        for (const auto& [value, i] : smallest_candidates(exec_, diagonal, wanted))
          offers.emplace_back(value, first_ + i, -1);
        std::sort(offers.begin(), offers.end());
        if (offers.size() > wanted) offers.resize(wanted);
      }
    }
    if (offers.size() < wanted || (guards_ > 0 && offers.empty())) {
      const auto d_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), diagonal);
      offers = start_offers(d_host, n_, first_, wanted, guards_ > 0 ? opts_.row_blocks.data() : nullptr, num_blocks_);
    }
    if constexpr (distributed) {  // every process offers guesses + guards triples, padded with +inf
      const std::size_t slots = static_cast<std::size_t>(guesses + guards_);
      std::vector<double> flat(3 * slots, std::numeric_limits<double>::infinity());
      for (std::size_t i = 0; i < offers.size(); ++i) {
        flat[3 * i] = std::get<0>(offers[i]);
        flat[3 * i + 1] = static_cast<double>(std::get<1>(offers[i]));  // exact below 2^53 rows
        flat[3 * i + 2] = static_cast<double>(std::get<2>(offers[i]));
      }
      const std::vector<double> all = op_.gather_from_ranks(flat);
      offers.clear();
      for (std::size_t i = 0; i + 2 < all.size(); i += 3) {
        if (std::isfinite(all[i + 1]))
          offers.emplace_back(all[i], static_cast<std::size_t>(all[i + 1]), static_cast<int>(all[i + 2]));
      }
    }
    std::sort(offers.begin(), offers.end());
    // the smallest overall, then the smallest of every block that has none among them
    std::vector<Offer> picks(
        offers.begin(), offers.begin() + std::min<std::ptrdiff_t>(guesses, static_cast<std::ptrdiff_t>(offers.size())));
    for (int b = 0; b < (guards_ > 0 ? num_blocks_ : 0); ++b) {
      const auto in = [b](const Offer& o) { return std::get<2>(o) == b; };
      if (std::none_of(picks.begin(), picks.end(), in)) {
        const auto o = std::find_if(offers.begin(), offers.end(), in);
        if (o != offers.end() && static_cast<int>(picks.size()) < max_sub_) picks.push_back(*o);
      }
    }
    const int units = static_cast<int>(picks.size());
    Kokkos::View<std::size_t*, memory_space> rows(alloc("cispmv::davidson::guess_rows"), units);
    auto rows_host = Kokkos::create_mirror_view(rows);
    std::vector<bool> seeded(static_cast<std::size_t>(std::max(1, num_blocks_)), false);
    for (int c = 0; c < units; ++c) {
      rows_host(c) = std::get<1>(picks[static_cast<std::size_t>(c)]);
      col_block_[static_cast<std::size_t>(c)] = std::get<2>(picks[static_cast<std::size_t>(c)]);
      if (guards_ > 0) seeded[static_cast<std::size_t>(col_block_[static_cast<std::size_t>(c)])] = true;
    }
    Kokkos::deep_copy(exec_, rows, rows_host);
    start_columns(exec_, V_, rows, units, first_);
    exec_.fence();
    int m = given_starts(units);
    if (opts_.random_start) {
      // one random vector, or one per block that holds a guess
      for (int b = guards_ > 0 ? 0 : -1; b < (guards_ > 0 ? num_blocks_ : 0); ++b) {
        if (m >= max_sub_ || static_cast<std::size_t>(m) >= N_) break;
        if (b >= 0 && !seeded[static_cast<std::size_t>(b)]) continue;
        random_column(exec_, V_, m, first_, blocks_, b);
        if (orthonormalise(m)) col_block_[static_cast<std::size_t>(m++)] = b;
      }
    }
    return m;
  }

  /// DavidsonOptions' start vectors as V's columns from m on, each orthonormalised against those before it (dropped
  /// where dependent; col_block_ -1): the number of columns then, refused below the roots.
  int given_starts(int m) {
    if (opts_.start_count > 0 && !opts_.start_fill) throw std::invalid_argument("cispmv::davidson: no start_fill");
    std::vector<double> host(opts_.start_count > 0 ? n_ : 0);
    for (int c = 0; c < opts_.start_count && m < max_sub_; ++c) {
      opts_.start_fill(c, host.data());
      Kokkos::deep_copy(exec_, column(V_, m), HostVector(host.data(), n_));
      exec_.fence();
      if (orthonormalise(m)) col_block_[static_cast<std::size_t>(m++)] = -1;
    }
    if (m < k_) {
      throw std::invalid_argument("cispmv::davidson: the start vectors span " + std::to_string(m) + " directions for " +
                                  std::to_string(k_) + " roots");
    }
    return m;
  }

  /// Orthonormalises column m of V against columns 0..m-1 (project_column); false when it is linearly
  /// dependent on them.
  bool orthonormalise(int m) {
    auto t = column(V_, m);
    const double norm0 = std::sqrt(global_dot(t, t));
    if (!(norm0 > 0.0) || !std::isfinite(norm0)) return false;
    project_column(m, 0);
    const double norm = std::sqrt(global_dot(t, t));
    if (!(norm > opts_.linear_dependence * norm0)) return false;
    scale(exec_, 1.0 / norm, t);
    return true;
  }

  /// Column col of V minus its projection on columns [from, col), by classical Gram-Schmidt applied
  /// twice (CGS2: "twice is enough" keeps it as orthogonal as modified Gram-Schmidt, Giraud et al.
  /// 2005). Each pass is two kernels, h = V^T t (one reduction of col - from values) and t -= V h,
  /// where modified Gram-Schmidt needs col - from dependent reductions.
  void project_column(int col, int from) {
    if (col <= from) return;
    auto t = column(V_, col);
    const Basis P = columns(V_, from, col);
    for (int pass = 0; pass < 2; ++pass) {
      const std::vector<double> h = global_multi_dot(P, P, t, col - from, true);
      for (int j = 0; j < col - from; ++j) h_host_(j) = h[static_cast<std::size_t>(j)];
      Kokkos::deep_copy(exec_, h_, h_host_);
      subtract_projection(exec_, P, h_, col - from, t);
      exec_.fence();  // h_host_ is rewritten by the next pass
    }
  }

  /// Orthonormalises columns [m, m + count) of V, an iteration's corrections (blocks[c]: the block of
  /// correction c), against columns 0..m-1 and each other; returns how many were kept, moved down to
  /// [m, m + kept) in order, col_block_ set. Block CGS2 against the basis first: H = V^T T and T -= V H
  /// for up to block_dot_columns corrections at once, twice, so that V is read four times per
  /// iteration instead of four times per correction. Then each correction by CGS2 against the kept
  /// ones before it (project_column); one that loses more than half its norm there (cancellation: what
  /// is left of its error along V grows relative to it) is projected against the whole basis once
  /// more. A correction is dropped as linearly dependent when its norm falls below
  /// linear_dependence times its norm before any projection, or when that norm is 0 or not finite.
  int orthonormalise_block(int m, int count, const std::vector<int>& blocks) {
    if (count == 0) return 0;
    const std::vector<double> norm2 =
        global_multi_dot(columns(V_, m, m + count), columns(V_, m, m + count), column(V_, m), count, false);
    if (m > 0) {
      const Basis P = columns(V_, 0, m);
      for (int pass = 0; pass < 2; ++pass) {
        for (int c0 = 0; c0 < count; c0 += block_dot_columns) {
          const int pc = std::min(block_dot_columns, count - c0);
          const Basis T = columns(V_, m + c0, m + c0 + pc);
          const std::vector<double> h = global_block_dots(P, T, m, pc);
          for (int j = 0; j < m; ++j) {
            for (int c = 0; c < pc; ++c) H_host_(j, c) = h[static_cast<std::size_t>(j) * pc + c];
          }
          Kokkos::deep_copy(exec_, H_, H_host_);
          subtract_block_projection(exec_, P, H_, m, pc, T);
          exec_.fence();  // H_host_ is rewritten by the next block
        }
      }
    }
    int kept = 0;
    for (int c = 0; c < count; ++c) {
      const double norm0 = std::sqrt(norm2[static_cast<std::size_t>(c)]);
      if (!(norm0 > 0.0) || !std::isfinite(norm0)) continue;
      const int col = m + kept;
      if (col != m + c) Kokkos::deep_copy(exec_, column(V_, col), column(V_, m + c));
      auto t = column(V_, col);
      const double before = std::sqrt(column_norm2(col));
      project_column(col, m);
      double norm = std::sqrt(column_norm2(col));
      if (kept > 0 && norm < 0.5 * before) {
        project_column(col, 0);
        norm = std::sqrt(column_norm2(col));
      }
      if (!(norm > opts_.linear_dependence * norm0)) continue;
      scale(exec_, 1.0 / norm, t);
      col_block_[static_cast<std::size_t>(col)] = blocks[static_cast<std::size_t>(c)];
      ++kept;
    }
    exec_.fence();
    return kept;
  }

  /// Adds A V(:, j) and the new row/column of G for the columns [first, m).
  void extend_projection(int first, int m) {
    apply(first, m);
    const Basis P = columns(V_, 0, m);
    for (int c0 = first; c0 < m; c0 += block_dot_columns) {  // V read once per block_dot_columns new columns
      const int pc = std::min(block_dot_columns, m - c0);
      const std::vector<double> d = global_block_dots(P, columns(AV_, c0, c0 + pc), m, pc);
      for (int c = 0; c < pc; ++c) {
        const int j = c0 + c;
        for (int i = 0; i <= j; ++i) g(i, j) = g(j, i) = d[static_cast<std::size_t>(i) * pc + c];
      }
    }
  }

  /// Eigenpairs of the projected matrix Gm (m_ x m_, row-major), ascending. With blocks, G couples no
  /// two of them (each basis vector lies in one block and the operator maps a block into itself, so the
  /// dots between blocks are sums of exact zeros), and blockwise_eigen solves each block's part alone
  /// (all-electron H2O, 10 roots, 4 irreps: m up to 112, blocks of ~28); a G that does couple two
  /// blocks is solved whole.
  SymmetricEigen projected_eigen(std::vector<double> Gm) const {
    if (guards_ == 0) return jacobi_eigen(std::move(Gm), m_);
    return blockwise_eigen(std::move(Gm), m_, std::vector<int>(col_block_.begin(), col_block_.begin() + m_));
  }

  /// Ritz pairs of the projected problem; the coefficients and values of those a restart would keep go
  /// to Y and theta, in order_: first the active ones (the num_roots lowest, then, with blocks, each
  /// block's guard: its lowest pair that is not among them), then the lowest others.
  void ritz_pairs() {
    save_previous();
    std::vector<double> Gm(static_cast<std::size_t>(m_) * m_);
    for (int i = 0; i < m_; ++i) {
      for (int j = 0; j < m_; ++j) Gm[static_cast<std::size_t>(i) * m_ + j] = g(i, j);
    }
    Kokkos::Timer timer;
    SymmetricEigen eig = projected_eigen(std::move(Gm));
    res_.projected_seconds += timer.seconds();
    const RitzOrder r = ritz_order(eig, m_, k_, col_block_, num_blocks_, guards_ > 0, keep_);
    order_ = r.pairs;
    order_block_ = r.blocks;
    active_ = r.active;
    for (std::size_t c = 0; c < order_.size(); ++c) {
      const int i = order_[c];
      theta_host_(c) = eig.values[static_cast<std::size_t>(i)];
      for (int j = 0; j < m_; ++j) Y_host_(j, c) = eig.vectors[static_cast<std::size_t>(i) * m_ + j];
    }
    y_rows_ = m_;
    Kokkos::deep_copy(exec_, Y_, Y_host_);
    Kokkos::deep_copy(exec_, theta_, theta_host_);
    exec_.fence();  // the host mirrors are rewritten later in this iteration
  }

  /// Whether active pair c needs no more corrections: its residual is below the tolerance, or it is a
  /// block's guard whose Ritz value minus its residual norm lies above the last root's Ritz value (an
  /// eigenvalue lies within the residual norm of a Ritz value: that block's next one is above the
  /// wanted roots, and converging it further would change nothing).
  bool settled(int c, const std::vector<double>& residual) const {
    const double r = residual[static_cast<std::size_t>(c)];
    if (r < opts_.residual_tolerance) return true;
    return c >= k_ && theta_host_(c) - r > theta_host_(k_ - 1);
  }

  /// Residuals r_c = (AV - theta_c V) y_c of the active pairs (the wanted roots and the blocks' guards)
  /// into R; their norms into `residual`; returns the largest of the roots'. A NaN residual is the
  /// largest (never "converged").
  double residual_norms(std::vector<double>& residual) {
    combine(exec_, AV_, V_, Y_, theta_, m_, active_, R_, true);
    const std::vector<double> r2 = global_multi_dot(R_, R_, column(R_, 0), active_, false);
    double worst = 0.0;
    bool not_a_number = false;
    for (int c = 0; c < active_; ++c) {
      residual[c] = std::sqrt(r2[c]);
      not_a_number = not_a_number || std::isnan(residual[c]);
      if (c < k_) worst = std::max(worst, residual[c]);
    }
    return not_a_number ? std::numeric_limits<double>::quiet_NaN() : worst;
  }

  /// The active pairs' Ritz coefficients of this iteration (Y's first active_ columns, y_rows_ long) as the previous
  /// ones of the next: the basis only grows until then, so they stay coefficients of its first y_rows_ columns.
  void save_previous() {
    prev_rows_ = opts_.keep_previous ? y_rows_ : 0;
    prev_cols_ = prev_rows_ > 0 ? active_ : 0;
    prev_.resize(static_cast<std::size_t>(prev_rows_) * prev_cols_);
    prev_block_.assign(order_block_.begin(), order_block_.begin() + prev_cols_);
    for (int c = 0; c < prev_cols_; ++c) {
      for (int j = 0; j < prev_rows_; ++j) prev_[static_cast<std::size_t>(c) * prev_rows_ + j] = Y_host_(j, c);
    }
  }

  /// The restart's coefficients Q (m_ x at most nvec, into Y_host_) and their blocks (restart_basis): the active
  /// pairs' Ritz vectors, then (keep_previous) their Ritz vectors of the iteration before, then more Ritz vectors.
  std::vector<RestartCandidate> restart_coefficients(int nvec) {
    std::vector<RestartCandidate> offers;
    const auto ritz = [&](int c) {
      RestartCandidate r{std::vector<double>(static_cast<std::size_t>(m_)), order_block_[static_cast<std::size_t>(c)]};
      for (int j = 0; j < m_; ++j) r.coefficients[j] = Y_host_(j, c);
      return r;
    };
    for (int c = 0; c < active_; ++c) offers.push_back(ritz(c));
    for (int c = 0; c < prev_cols_; ++c) {
      const auto first = prev_.begin() + static_cast<std::ptrdiff_t>(c) * prev_rows_;
      RestartCandidate r{std::vector<double>(first, first + prev_rows_), prev_block_[static_cast<std::size_t>(c)]};
      r.coefficients.resize(static_cast<std::size_t>(m_), 0.0);
      offers.push_back(std::move(r));
    }
    const int ritz_count = std::min(m_, std::max(active_, keep_));  // the columns ritz_pairs filled
    for (int c = active_; c < ritz_count; ++c) offers.push_back(ritz(c));
    std::vector<RestartCandidate> Q = restart_basis(std::move(offers), nvec);
    for (std::size_t c = 0; c < Q.size(); ++c) {
      for (int j = 0; j < m_; ++j) Y_host_(j, c) = Q[c].coefficients[j];
      col_block_[c] = Q[c].block;
    }
    return Q;
  }

  /// V <- V Q, AV <- AV Q (Q: restart_coefficients), G <- Q^T G Q: no extra product with A. In place where Q has at
  /// most in_place_columns columns, else through the scratch W.
  void restart(int nvec) {
    const std::vector<RestartCandidate> Q = restart_coefficients(nvec);
    const int kept = static_cast<int>(Q.size());
    Kokkos::deep_copy(exec_, Y_, Y_host_);
    for (const Basis& B : {V_, AV_}) {
      if (kept <= in_place_columns) {
        combine_in_place(exec_, B, Y_, m_, kept);
      } else {
        const auto first = Kokkos::make_pair(0, kept);
        combine(exec_, B, B, Y_, theta_, m_, kept, W_, false);
        Kokkos::deep_copy(exec_, Kokkos::subview(B, Kokkos::ALL(), first), Kokkos::subview(W_, Kokkos::ALL(), first));
      }
    }
    restart_projection(G_, static_cast<std::size_t>(max_sub_), Q);
    // the active pairs' Ritz vectors are now the basis' first columns: the previous ones of the next iteration
    for (int c = 0; c < kept; ++c) {
      for (int j = 0; j < kept; ++j) Y_host_(j, c) = j == c ? 1.0 : 0.0;
    }
    Kokkos::deep_copy(exec_, Y_, Y_host_);
    exec_.fence();
    m_ = kept;
    y_rows_ = kept;
    ++res_.restarts;
  }

  /// Preconditioned corrections t = (D - theta)^-1 r for the unconverged active pairs (each in its
  /// pair's block), appended to V and orthonormalised together (orthonormalise_block).
  template <class DiagView>
  void add_corrections(const std::vector<double>& residual, const DiagView& diagonal) {
    std::vector<int> blocks;
    for (int c = 0; c < active_; ++c) {
      if (settled(c, residual)) continue;
      const int col = m_ + static_cast<int>(blocks.size());
      if (col == max_sub_) break;  // only when max_sub == n < 2 * num_roots: no room for more
      const int block = order_block_[static_cast<std::size_t>(c)];
      precondition(exec_, diagonal, theta_host_(c), opts_.denominator_guard, column(R_, c), column(V_, col), blocks_,
                   block);
      blocks.push_back(block);
    }
    m_ += orthonormalise_block(m_, static_cast<int>(blocks.size()), blocks);
  }

  /// Ritz vectors of the wanted roots and the final figures.
  void finish(const std::vector<double>& residual) {
    res_.eigenvalues.assign(theta_host_.data(), theta_host_.data() + k_);
    res_.residual_norms.assign(residual.begin(), residual.begin() + k_);
    res_.guards = 0;
    for (int c = k_; c < active_; ++c) res_.guards += settled(c, residual);
    res_.subspace_size = m_;
    res_.eigenvectors = columns(R_, 0, k_);  // (the residuals' columns: no vectors allocated at the end)
    combine(exec_, V_, V_, Y_, theta_, m_, k_, res_.eigenvectors, false);
    exec_.fence();
  }

  Exec exec_;
  const Operator& op_;
  DavidsonOptions opts_;
  std::size_t n_;          ///< rows of the vectors here (this process's, for a distributed operator)
  std::size_t N_ = 0;      ///< rows of the operator
  std::size_t first_ = 0;  ///< global index of row 0 here
  int k_;
  int max_sub_ = 0;
  int keep_ = 0;
  int m_ = 0;                    ///< basis size
  int y_rows_ = 0;               ///< rows of Y_host_'s Ritz coefficients: the basis size when they were formed
  std::vector<double> prev_;     ///< the active pairs' Ritz coefficients of the iteration before, column-major
  int prev_rows_ = 0;            ///< their rows (a prefix of the basis)
  int prev_cols_ = 0;            ///< their count
  std::vector<int> prev_block_;  ///< their blocks
  static constexpr int max_blocks = 32;
  int num_blocks_ = 0;            ///< 1 + the largest of DavidsonOptions::row_blocks over all processes
  int guards_ = 0;                ///< the blocks that hold rows, when there are several, else 0
  int active_ = 0;                ///< pairs that must converge: the roots, then the guards (order_)
  std::vector<int> order_;        ///< Ritz pairs in Y's column order (see ritz_pairs)
  std::vector<int> order_block_;  ///< their blocks (-1: no blocks)
  std::vector<int> col_block_;    ///< the block of each basis vector (-1: no blocks, or a random start)
  using Blocks = Kokkos::View<int*, memory_space>;
  Blocks blocks_;  ///< DavidsonOptions::row_blocks on the device (empty without guards)
  Basis V_, AV_, R_, W_, Y_;
  using Block = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>;
  Block X_, Y_block_;  ///< row-major copies of the columns one block product takes and gives
  using OperatorVec = Kokkos::View<double*, operator_memory>;
  OperatorVec x_op_, y_op_;      ///< staged: a product's x and y in the operator's memory
  bool staged_ = must_stage;     ///< the products' x and y copied (must_stage, or DavidsonOptions::stage_products)
  bool block_products_ = false;  ///< an iteration's new vectors multiplied together (may_block, not staged)
  Vec theta_;
  typename Basis::HostMirror Y_host_;
  typename Vec::HostMirror theta_host_;
  Vec h_;
  typename Vec::HostMirror h_host_;
  using Partial = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>;
  Partial partial_;  ///< multi_dot's per-chunk sums (max_sub x chunks)
  typename Partial::HostMirror partial_host_;
  Partial block_partial_;  ///< block_dots' per-chunk sums (chunks x max_sub * block_dot_columns)
  typename Partial::HostMirror block_partial_host_;
  using Small = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;
  Small H_;  ///< block Gram-Schmidt coefficients (max_sub x block_dot_columns)
  typename Small::HostMirror H_host_;
  std::vector<double> G_;  ///< V^T A V, row-major on the host
  Result res_;
};

}  // namespace impl

/// Lowest `opts.num_roots` eigenpairs of the symmetric operator `op` by Davidson's method with the diagonal
/// preconditioner t = (D - theta)^-1 r.
///
/// `op` is either a cispmv matrix in any format (then its products run through one SpmvPlan made with `opts.spmv`), or
/// an operator (cispmv/operator.hpp: an SpmvPlan, ci::FactoredHamiltonian, ...). `diagonal` holds A's diagonal in a
/// memory space `exec` can access.
///
/// Where `exec` cannot reach the operator's memory (the host's execution space for an operator on a GPU), the solver's
/// vectors live in the memory of `exec` and each product copies its x to the operator's memory and its y back: a
/// subspace larger than the GPU holds, at the price of two copies a product and vector operations at the host's speed.
/// DavidsonOptions::memory_budget bounds the solver's vectors (davidson_memory_plan).
///
/// A distributed operator (mpi::DistributedSpmvPlan: num_rows() this process's rows, global_rows(), first_row(),
/// sum_over_ranks(), gather_from_ranks()) is solved the same way by every process of its communicator together:
/// vectors, diagonal and eigenvectors are cut like the rows, every reduction is summed over the processes, and each
/// process solves the same small G, so all of them take the same steps and return the same eigenvalues.
///
/// The basis V and the products AV = A V are LayoutLeft Views of num_rows x max_subspace in the operator's memory space
/// (staged: in that of `exec`); every operation runs on `exec`, only the projected matrix G = V^T A V lives on the
/// host, where jacobi_eigen solves it (per block with DavidsonOptions::row_blocks: blockwise_eigen). Start: unit
/// vectors on the smallest diagonal entries. Each iteration: Ritz pairs of G, residuals, stop if all wanted residuals
/// are below the tolerance, else one preconditioned correction per unconverged root, all of them orthogonalised against
/// V together by block classical Gram-Schmidt applied twice, then against each other (orthonormalise_block), discarded
/// when (nearly) linearly dependent, normalised and appended. The new vectors of an iteration (one per unconverged
/// root: a block Davidson) are multiplied together: with an SpmvPlan of CSR, the hybrid format or csell the matrix is
/// read once for up to 16 of them (SpmvPlan::apply on rank-2 Views), otherwise once per vector. When the basis would
/// exceed max_subspace it restarts from restart_size vectors: the wanted roots' (and guards') Ritz vectors, their Ritz
/// vectors of the iteration before (DavidsonOptions::keep_previous), then the next Ritz vectors, formed in place (AV is
/// combined the same way: no extra product). Like any Krylov-type method it cannot leave an invariant subspace that
/// holds all its start vectors (a block of the matrix they do not couple to, e.g. another symmetry): a dense random
/// start vector beside the unit ones is there for that (DavidsonOptions::random_start; more unit guesses:
/// DavidsonOptions::num_guesses). A NaN in the residuals stops the solve as not converged. Throws std::invalid_argument
/// on a non-square operator, a diagonal of the wrong size or impossible options.
template <class Exec, class Operator, class DiagView>
auto davidson(const Exec& exec, const Operator& op, const DiagView& diagonal, const DavidsonOptions& opts = {}) {
  if constexpr (cispmv::impl::is_cispmv_format<Operator>::value) {
    const SpmvPlan<Exec, Operator> plan(exec, op, opts.spmv);
    return davidson(exec, plan, diagonal, opts);
  } else {
    static_assert(Kokkos::SpaceAccessibility<Exec, typename DiagView::memory_space>::accessible,
                  "cispmv::davidson: the diagonal is not accessible from this execution space");
    static_assert(std::is_same_v<typename Operator::value_type, double>, "cispmv::davidson: double operators only");
    if (diagonal.extent(0) != static_cast<std::size_t>(op.num_rows())) {
      throw std::invalid_argument("cispmv::davidson: the diagonal has " + std::to_string(diagonal.extent(0)) +
                                  " entries for " + std::to_string(op.num_rows()) + " rows");
    }
    const cispmv::impl::ProfilingRegion region("cispmv::davidson");
    impl::Davidson<Exec, Operator> solver(exec, op, opts);
    return solver.solve(diagonal);
  }
}

}  // namespace cispmv::solvers
