// SpmvPlan's products of Compressed Sliced ELLPACK on the default execution space, instantiated once here
// (declared extern in cispmv/impl/plan_instances.hpp).
#include "cispmv/impl/plan_instances.hpp"

namespace cispmv {
CISPMV_PLAN_INSTANCES(, Csell)
}  // namespace cispmv
