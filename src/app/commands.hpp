#pragma once
// The subcommands of the `cispmv` program: their option structs and entry points. Everything the
// program prints is written here, in src/app, never in the libraries.

#include "cispmv/formats/csr.hpp"

#if defined(CISPMV_HAVE_MPI)
#include <mpi.h>
#endif

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::app {

/// Bounds of the options that size work or memory: past them a run would hang or exhaust memory
/// (a 2^31-row team, 2^31 repetitions, a 2^31-row slice), so they are refused up front.
inline constexpr int max_repetitions = 100000;
inline constexpr int max_rows_per_team = 1024;
inline constexpr int max_slice_height = 1024;

/// BOUNDARY (the hybrid format's reference width) must lie in [0, columns]: `run` and `stats`
/// check it the same way. Throws std::invalid_argument.
inline void check_boundary(int boundary, const HostCsr& A) {
  if (boundary < 0 || boundary > A.num_cols) {
    throw std::invalid_argument("BOUNDARY = " + std::to_string(boundary) + " is outside [0, " +
                                std::to_string(A.num_cols) + "] (the number of columns)");
  }
}

/// `cispmv run [matrix]`: every format and kernel on one matrix, with the paper's reports.
struct RunOptions {
  std::string matrix = "paper32k-1";  ///< a .mtx / .cispmv file or a suite name
  std::vector<std::string> formats;   ///< registry names; empty: all
  std::vector<std::string> kernels;   ///< "scalar", "vector"; empty: both
  int boundary = -1;                  ///< -1: automatic (choose_boundary)
  int rows_per_team = 0;              ///< 0: the launch-parameter default
  int slice_height = 32;
  int repetitions = 20;
  bool baseline = true;  ///< time Kokkos Kernels spmv too (when this build has it)
  bool single_precision = false;
  std::string json;  ///< file for machine-readable output ("-" = stdout)
};

/// `cispmv ci FCIDUMP --level N [--roots k] [--format F] [--write-mtx out.mtx]`.
struct CiCommandOptions {
  std::string fcidump;                 ///< path of the FCIDUMP file
  int level = 2;                       ///< maximum excitation level (2 = CISD; >= NELEC = full CI)
  int roots = 1;                       ///< number of lowest eigenvalues
  std::string format = "auto";         ///< registry name of the format the Davidson products run on, or auto
  std::string write_mtx;               ///< if not empty, write the matrix there (Matrix Market, symmetric)
  bool restrict_to_isym = true;        ///< keep only determinants of irrep ISYM (no-op when ORBSYM is all 1)
  double residual_tolerance = 1e-6;    ///< Davidson convergence: residual 2-norm of every root
  int max_iterations = 200;            ///< Davidson iterations
  double drop_tolerance = 1e-14;       ///< off-diagonal |H_ij| below this are not stored
  std::string occupied_alpha;          ///< reference: occupied alpha orbitals, 1-based list ("1-4,6"); with beta
  std::string occupied_beta;           ///< reference: occupied beta orbitals
  std::string docc;                    ///< reference: doubly occupied orbitals per irrep ("3,0,1,1")
  std::string socc;                    ///< reference: singly occupied orbitals per irrep
  std::string max_memory;              ///< budget on top of the machine's ("8G"); empty: what is available
  std::string json;                    ///< write the results as JSON there ('-' = stdout, then no text report)
  bool progress = true;                ///< progress lines for the long stages and the iterations of long solves
  int max_subspace = 0;                ///< Davidson basis size that triggers a restart (0: automatic)
  std::string subspace = "auto";       ///< where the Davidson's vectors live: auto, device or host
  std::string orbsym = "auto";         ///< the FCIDUMP's ORBSYM numbering: auto, molpro or pyscf
  std::string start_vectors;           ///< start the Davidson from this file's vectors (ci_vectors.hpp)
  std::string save_vectors;            ///< write the Ritz vectors there after the solve (converged or not)
  std::string exchange = "allgather";  ///< under mpirun: how the products exchange x (allgather or halo)
  bool overlap = true;       ///< under mpirun: blocks cut by columns, the own part multiplied during the exchange
  int staging_pieces = 0;    ///< under mpirun, host staging: pieces of x's exchange (0: automatic)
  bool distributed = false;  ///< under mpirun: the distributed code path also on one rank (scaling baselines)
  int spmv_repetitions = 0;  ///< under mpirun: products timed after the solve (the distributed SpMV benchmark)
  bool singlet = false;      ///< only states symmetric under the exchange of alpha and beta (ci::SingletHamiltonian)
};

/// A .mtx / .cispmv file, or a suite matrix generated on the fly; `description` says which.
HostCsr load_matrix(const std::string& name_or_path, std::string& description);

/// `cispmv run`; returns the process exit code (1 if any kernel's check failed).
int run_command(const RunOptions& options, std::ostream& out);

/// `cispmv ci`: reads the FCIDUMP, builds the space and the Hamiltonian, prints the determinant
/// count, nonzeros, structure statistics, the energies (eigenvalue + core energy, 10 decimals) of each
/// root and the timings to `out`; returns 0 on success, 1 when Davidson did not converge. Throws
/// std::runtime_error / std::invalid_argument on bad input (main prints it).
int ci_command(const CiCommandOptions& options, std::ostream& out);

#if defined(CISPMV_HAVE_MPI)
/// The number of MPI processes of this run: 1 when MPI was not initialised (not under mpirun).
int mpi_world_size();
/// True when MPI was initialised (cispmv was started by an MPI launcher) and not yet finalised.
bool mpi_running();
/// `cispmv ci` on the ranks of `comm` (ci_command calls it under mpirun with more than one rank):
/// the Hamiltonian in row blocks balanced by nonzeros, one per rank and device, a distributed
/// Davidson, and per-rank memory and time split (local SpMV, exchange of x), printed by rank 0.
int ci_distributed(const CiCommandOptions& options, std::ostream& out, MPI_Comm comm);
#endif

/// `cispmv stats MATRIX [--boundary B]`: the paper's statistics of a matrix (Tables 3-5).
int stats_command(const std::string& matrix, int boundary, std::ostream& out);

/// `cispmv generate NAME -o FILE` or `cispmv generate --list`.
int generate_command(const std::string& name, const std::string& output, bool list, std::ostream& out);

/// `cispmv convert IN OUT`: between .mtx and .cispmv files (IN may be a suite name).
int convert_command(const std::string& input, const std::string& output, std::ostream& out);

}  // namespace cispmv::app
