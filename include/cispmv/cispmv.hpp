#pragma once
/// \file cispmv.hpp
/// Everything of cispmv's public API in one include.

#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/csr.hpp"
#include "cispmv/davidson.hpp"
#include "cispmv/determinants.hpp"
#include "cispmv/ell.hpp"
#include "cispmv/fcidump.hpp"
#include "cispmv/generator.hpp"
#include "cispmv/hybrid.hpp"
#include "cispmv/io.hpp"
#include "cispmv/kokkos_kernels.hpp"
#include "cispmv/reference.hpp"
#include "cispmv/sliced_ell.hpp"
#include "cispmv/spmv.hpp"
#include "cispmv/stats.hpp"
#include "cispmv/version.hpp"
