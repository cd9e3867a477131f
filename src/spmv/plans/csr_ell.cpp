// SpmvPlan's products of CSR, ELLPACK and ELLPACK-R on the default execution space, instantiated once here
// (declared extern in cispmv/impl/plan_instances.hpp).
#include "cispmv/impl/plan_instances.hpp"

namespace cispmv {
CISPMV_PLAN_INSTANCES(, Csr)
CISPMV_PLAN_INSTANCES(, Ell)
CISPMV_PLAN_INSTANCES(, EllR)
}  // namespace cispmv
