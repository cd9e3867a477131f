// SpmvPlan's products of the hybrid formats (32- and 16-bit reference columns) on the default execution space,
// instantiated once here (declared extern in cispmv/impl/plan_instances.hpp).
#include "cispmv/impl/plan_instances.hpp"

namespace cispmv {
CISPMV_PLAN_INSTANCES(, Hybrid)
CISPMV_PLAN_INSTANCES(, Hybrid16)
}  // namespace cispmv
