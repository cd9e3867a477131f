#pragma once
/// \file ci.hpp
/// The CI application library (target CiSpmv::ci, namespace cispmv::ci) in one include: FCIDUMP
/// integrals, determinant spaces, Slater-Condon rules, the Hamiltonian (assembled, or factored and never assembled) and
/// its structure, and the Davidson eigensolver that diagonalises it.

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/factored.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/ci/rdm.hpp"
#include "cispmv/ci/reference.hpp"
#include "cispmv/ci/singlet.hpp"
#include "cispmv/ci/slater_condon.hpp"
#include "cispmv/ci/string_addressing.hpp"
#include "cispmv/ci/structure.hpp"
#include "cispmv/solvers/davidson.hpp"
