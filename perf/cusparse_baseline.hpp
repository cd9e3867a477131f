#pragma once
// cuSPARSE's generic SpMV, called directly (Kokkos Kernels 3.4's cuSPARSE TPL uses enums CUDA 12
// removed). Handle, descriptors and work buffer are created once, outside any timed loop; run()
// is the only thing a benchmark times.
#if defined(KOKKOS_ENABLE_CUDA)

#include <cuda_runtime.h>
#include <cusparse.h>
#include <Kokkos_Core.hpp>

#include "cispmv/formats/csr.hpp"
#include "cispmv/formats/sliced_ell.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace cispmv::perf {

inline void check_cusparse(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuSPARSE: ") + what + ": " + cusparseGetErrorString(s));
  }
}

/// dst(i) = int(src(i)) on the device (a free function: CUDA extended lambdas may not live in
/// constructors).
template <class Src>
void narrow_offsets(const Src& src, const Kokkos::View<int*, Kokkos::CudaSpace>& dst) {
  Kokkos::parallel_for(
      "cusparse::row_ptr32", Kokkos::RangePolicy<Kokkos::Cuda>(0, src.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { dst(i) = static_cast<int>(src(i)); });
  Kokkos::fence();
}

template <class Scalar>
constexpr cudaDataType cuda_type() {
  return std::is_same_v<Scalar, double> ? CUDA_R_64F : CUDA_R_32F;
}

/// y = A*x through cusparseSpMV for a CSR (algorithm CUSPARSE_SPMV_ALG_DEFAULT, CSR_ALG1 or CSR_ALG2)
/// or Sliced ELLPACK (CUSPARSE_SPMV_SELL_ALG1) matrix that shares cispmv's device arrays.
template <class Scalar>
class CusparseSpmv {
 public:
  using Vector = Kokkos::View<Scalar*, Kokkos::CudaSpace>;

  /// CSR: cuSPARSE needs row offsets and column indices of one width, so 32-bit offsets are made
  /// (a copy of row_ptr only, outside timing) when A's offsets are wider and nnz fits.
  template <class Offset>
  CusparseSpmv(const CsrMatrix<Scalar, int, Offset, Kokkos::Cuda>& A, const Vector& x, const Vector& y,
               cusparseSpMVAlg_t alg)
      : alg_(alg), x_(x), y_(y) {
    if (A.nnz() > static_cast<std::size_t>(INT32_MAX)) {
      throw std::invalid_argument("cuSPARSE CSR baseline: nnz exceeds 32-bit offsets");
    }
    row_ptr32_ = Kokkos::View<int*, Kokkos::CudaSpace>("cusparse::row_ptr32", A.row_ptr.extent(0));
    narrow_offsets(A.row_ptr, row_ptr32_);
    init();
    check_cusparse(cusparseCreateCsr(&mat_, A.num_rows, A.num_cols, static_cast<int64_t>(A.nnz()), row_ptr32_.data(),
                                     A.col_idx.data(), A.values.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, cuda_type<Scalar>()),
                   "cusparseCreateCsr");
    prepare();
  }

  /// Sliced ELLPACK: cispmv's layout is cuSPARSE's (column-major slices, column -1 padding).
  template <class Offset>
  CusparseSpmv(const SlicedEllMatrix<Scalar, int, Offset, Kokkos::Cuda>& A, const Vector& x, const Vector& y)
      : alg_(CUSPARSE_SPMV_SELL_ALG1), x_(x), y_(y) {
    // cusparseSpMV supports SELL with 32-bit slice offsets only ("operation not supported" with
    // 64-bit ones, seen with CUDA 13.0 on an H200): narrow them, as for CSR.
    if (A.values.extent(0) > static_cast<std::size_t>(INT32_MAX)) {
      throw std::invalid_argument("cuSPARSE SELL baseline: the padded matrix exceeds 32-bit offsets");
    }
    row_ptr32_ = Kokkos::View<int*, Kokkos::CudaSpace>("cusparse::slice_ptr32", A.slice_ptr.extent(0));
    narrow_offsets(A.slice_ptr, row_ptr32_);
    init();
    check_cusparse(cusparseCreateSlicedEll(&mat_, A.num_rows, A.num_cols, static_cast<int64_t>(A.nnz()),
                                           static_cast<int64_t>(A.values.extent(0)), A.slice_height, row_ptr32_.data(),
                                           A.col_idx.data(), A.values.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                           CUSPARSE_INDEX_BASE_ZERO, cuda_type<Scalar>()),
                   "cusparseCreateSlicedEll");
    prepare();
  }

  CusparseSpmv(const CusparseSpmv&) = delete;
  CusparseSpmv& operator=(const CusparseSpmv&) = delete;
  ~CusparseSpmv() {
    if (buffer_) cudaFree(buffer_);
    if (vx_) cusparseDestroyDnVec(vx_);
    if (vy_) cusparseDestroyDnVec(vy_);
    if (mat_) cusparseDestroySpMat(mat_);
    if (handle_) cusparseDestroy(handle_);
  }

  /// y = A*x on the default CUDA stream (Kokkos' default instance uses it too).
  void run() {
    const Scalar one = 1, zero = 0;
    check_cusparse(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vx_, &zero, vy_,
                                cuda_type<Scalar>(), alg_, buffer_),
                   "cusparseSpMV");
  }

 private:
  void init() {
    check_cusparse(cusparseCreate(&handle_), "cusparseCreate");
    check_cusparse(cusparseSetStream(handle_, Kokkos::Cuda().cuda_stream()), "cusparseSetStream");
    check_cusparse(cusparseCreateDnVec(&vx_, x_.extent(0), x_.data(), cuda_type<Scalar>()), "cusparseCreateDnVec");
    check_cusparse(cusparseCreateDnVec(&vy_, y_.extent(0), y_.data(), cuda_type<Scalar>()), "cusparseCreateDnVec");
  }
  void prepare() {
    const Scalar one = 1, zero = 0;
    size_t bytes = 0;
    check_cusparse(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vx_, &zero, vy_,
                                           cuda_type<Scalar>(), alg_, &bytes),
                   "cusparseSpMV_bufferSize");
    if (bytes > 0 && cudaMalloc(&buffer_, bytes) != cudaSuccess) {
      throw std::runtime_error("cuSPARSE baseline: cannot allocate a " + std::to_string(bytes) + "-byte work buffer");
    }
    check_cusparse(cusparseSpMV_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vx_, &zero, vy_,
                                           cuda_type<Scalar>(), alg_, buffer_),
                   "cusparseSpMV_preprocess");
  }

  cusparseSpMVAlg_t alg_;
  Vector x_, y_;
  Kokkos::View<int*, Kokkos::CudaSpace> row_ptr32_;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t vx_ = nullptr, vy_ = nullptr;
  void* buffer_ = nullptr;
};

/// Y = A*X through cusparseSpMM for a CSR matrix (sharing cispmv's device arrays) and dense X, Y of k
/// columns: row-major (CUSPARSE_ORDER_ROW, cispmv's LayoutRight) or column-major (CUSPARSE_ORDER_COL,
/// LayoutLeft), algorithm CUSPARSE_SPMM_ALG_DEFAULT.
template <class Scalar>
class CusparseSpmm {
 public:
  template <class Offset, class Block>
  CusparseSpmm(const CsrMatrix<Scalar, int, Offset, Kokkos::Cuda>& A, const Block& x, const Block& y) {
    static_assert(std::is_same_v<typename Block::array_layout, Kokkos::LayoutRight> ||
                      std::is_same_v<typename Block::array_layout, Kokkos::LayoutLeft>,
                  "cuSPARSE SpMM baseline: X and Y must be LayoutRight or LayoutLeft");
    if (A.nnz() > static_cast<std::size_t>(INT32_MAX)) {
      throw std::invalid_argument("cuSPARSE SpMM baseline: nnz exceeds 32-bit offsets");
    }
    constexpr bool rows = std::is_same_v<typename Block::array_layout, Kokkos::LayoutRight>;
    const cusparseOrder_t order = rows ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
    const int64_t k = static_cast<int64_t>(x.extent(1));
    row_ptr32_ = Kokkos::View<int*, Kokkos::CudaSpace>("cusparse::row_ptr32", A.row_ptr.extent(0));
    narrow_offsets(A.row_ptr, row_ptr32_);
    check_cusparse(cusparseCreate(&handle_), "cusparseCreate");
    check_cusparse(cusparseSetStream(handle_, Kokkos::Cuda().cuda_stream()), "cusparseSetStream");
    check_cusparse(cusparseCreateCsr(&mat_, A.num_rows, A.num_cols, static_cast<int64_t>(A.nnz()), row_ptr32_.data(),
                                     A.col_idx.data(), A.values.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, cuda_type<Scalar>()),
                   "cusparseCreateCsr");
    check_cusparse(cusparseCreateDnMat(&mx_, A.num_cols, k, rows ? k : A.num_cols, const_cast<Scalar*>(x.data()),
                                       cuda_type<Scalar>(), order),
                   "cusparseCreateDnMat");
    check_cusparse(
        cusparseCreateDnMat(&my_, A.num_rows, k, rows ? k : A.num_rows, y.data(), cuda_type<Scalar>(), order),
        "cusparseCreateDnMat");
    const Scalar one = 1, zero = 0;
    size_t bytes = 0;
    check_cusparse(
        cusparseSpMM_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_,
                                mx_, &zero, my_, cuda_type<Scalar>(), CUSPARSE_SPMM_ALG_DEFAULT, &bytes),
        "cusparseSpMM_bufferSize");
    if (bytes > 0 && cudaMalloc(&buffer_, bytes) != cudaSuccess) {
      throw std::runtime_error("cuSPARSE SpMM baseline: cannot allocate a " + std::to_string(bytes) +
                               "-byte work buffer");
    }
  }
  CusparseSpmm(const CusparseSpmm&) = delete;
  CusparseSpmm& operator=(const CusparseSpmm&) = delete;
  ~CusparseSpmm() {
    if (buffer_) cudaFree(buffer_);
    if (mx_) cusparseDestroyDnMat(mx_);
    if (my_) cusparseDestroyDnMat(my_);
    if (mat_) cusparseDestroySpMat(mat_);
    if (handle_) cusparseDestroy(handle_);
  }

  /// Y = A*X on the default CUDA stream.
  void run() {
    const Scalar one = 1, zero = 0;
    check_cusparse(cusparseSpMM(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_,
                                mx_, &zero, my_, cuda_type<Scalar>(), CUSPARSE_SPMM_ALG_DEFAULT, buffer_),
                   "cusparseSpMM");
  }

 private:
  Kokkos::View<int*, Kokkos::CudaSpace> row_ptr32_;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnMatDescr_t mx_ = nullptr, my_ = nullptr;
  void* buffer_ = nullptr;
};

}  // namespace cispmv::perf

#endif
