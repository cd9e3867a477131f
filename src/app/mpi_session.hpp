#pragma once
// MPI for the `cispmv` program, when it is launched by mpirun / mpiexec / srun (CISPMV_HAVE_MPI):
// initialised before Kokkos and finalised after it, with one GPU per rank chosen by the rank's
// index on its node. A plain `cispmv ...` never touches MPI.
#include <mpi.h>

#include "commands.hpp"

#include <Kokkos_Core.hpp>
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <cstdlib>
#include <string>
#include <vector>

namespace cispmv::app {

class MpiSession {
 public:
  /// Initialises MPI if a launcher started this process; then, on a GPU build, appends
  /// --kokkos-device-id=(node-local rank mod GPUs) to the arguments unless they choose a device.
  MpiSession(int& argc, char**& argv) {
    if (!launched_by_mpi()) return;
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    initialised_ = true;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_free(&node);
#if defined(KOKKOS_ENABLE_CUDA)
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) return;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a.rfind("--kokkos-device-id", 0) == 0 || a.rfind("--kokkos-num-devices", 0) == 0 ||
          a.rfind("--kokkos-ndevices", 0) == 0 || a.rfind("--kokkos-map-device-id-by", 0) == 0)
        return;
    }
    device_arg_ = "--kokkos-device-id=" + std::to_string(local_rank_ % devices);
    args_.assign(argv, argv + argc);
    args_.push_back(device_arg_.data());
    args_.push_back(nullptr);
    argc += 1;
    argv = args_.data();
#endif
  }
  ~MpiSession() {
    if (initialised_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  /// An error on one rank must not leave the others waiting in a collective: abort them all.
  void abort_if_distributed(int code) const {
    if (initialised_ && mpi_world_size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
  }

 private:
  static bool launched_by_mpi() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
      if (std::getenv(v) != nullptr) return true;
    }
    return false;
  }
  bool initialised_ = false;
  int local_rank_ = 0;
  std::string device_arg_;
  std::vector<char*> args_;
};

}  // namespace cispmv::app
