#pragma once
/// \file cispmv.hpp
/// The SpMV library (target CiSpmv::spmv) in one include: formats, conversions, spmv and its plan,
/// the format registry, I/O, the generator and the paper's reports. The CI application's headers
/// are under cispmv/ci/ (target CiSpmv::ci), the eigensolver under cispmv/solvers/, the Kokkos
/// Kernels baseline under cispmv/baselines/ (target CiSpmv::kokkos_kernels).

#include "cispmv/boundary.hpp"
#include "cispmv/choose_format.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/errors.hpp"
#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/formats/compressed_sell_encoder.hpp"
#include "cispmv/formats/csr.hpp"
#include "cispmv/formats/ell.hpp"
#include "cispmv/formats/hybrid.hpp"
#include "cispmv/formats/sliced_ell.hpp"
#include "cispmv/generator.hpp"
#include "cispmv/host_oracle.hpp"
#include "cispmv/info.hpp"
#include "cispmv/io.hpp"
#include "cispmv/memory_model.hpp"
#include "cispmv/options.hpp"
#include "cispmv/plan.hpp"
#include "cispmv/registry.hpp"
#include "cispmv/spmv.hpp"
#include "cispmv/stats.hpp"
#include "cispmv/version.hpp"
