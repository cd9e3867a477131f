// libFuzzer targets for cispmv's three readers: Matrix Market (CISPMV_FUZZ_MATRIX_MARKET), the binary
// .cispmv format (CISPMV_FUZZ_BINARY) and FCIDUMP (CISPMV_FUZZ_FCIDUMP); unit_tests/fuzz/run.sh builds
// each with clang's -fsanitize=fuzzer,address,undefined and runs it on its corpus for a bounded time.
//
// The contract under test: any input either reads into a valid matrix (CSR invariants, finite values,
// sorted rows) or fails with a cispmv::ParseError (or, for sizes, another std::exception naming the
// file); never a crash, a sanitizer report, a hang or an unbounded allocation.
#include <Kokkos_Core.hpp>

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/errors.hpp"
#include "cispmv/io.hpp"

#include <unistd.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

std::string input_path() {
  // the readers take paths: one file per fuzzing process, in memory-backed /dev/shm when there is one
  const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
#if defined(CISPMV_FUZZ_BINARY)
  const char* ext = ".cispmv";
#else
  const char* ext = ".mtx";
#endif
  return std::string(dir) + "/cispmv-fuzz-" + std::to_string(getpid()) + ext;
}

void check(const cispmv::HostCsr& A) {
  cispmv::validate(A);  // throws std::invalid_argument: a reader returned a broken matrix
  for (int r = 0; r < A.num_rows; ++r) {
    for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      if (k > A.row_ptr(r) && A.col_idx(k) <= A.col_idx(k - 1)) std::abort();  // rows sorted, no duplicates
      if (!std::isfinite(A.values(k))) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("CISPMV_MAX_MEMORY", "512M", 1);  // announced sizes beyond this must be refused, not allocated
  Kokkos::initialize();                    // run.sh sets OMP_NUM_THREADS=1
  std::atexit([] { std::remove(input_path().c_str()); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
#if defined(CISPMV_FUZZ_FCIDUMP)
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const cispmv::ci::FciDump d = cispmv::ci::parse_fcidump(in, "fuzz.fcidump");
    if (d.num_orbitals < 1 || d.num_orbitals > cispmv::ci::max_orbitals) std::abort();
    for (double v : d.two_electron) {
      if (!std::isfinite(v)) std::abort();
    }
  } catch (const cispmv::ParseError&) {
  }
#else
  static const std::string path = input_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  try {
#if defined(CISPMV_FUZZ_BINARY)
    check(cispmv::read_binary(path));
#else
    check(cispmv::read_matrix_market(path));
#endif
  } catch (const cispmv::ParseError&) {
  }
#endif
  return 0;
}
