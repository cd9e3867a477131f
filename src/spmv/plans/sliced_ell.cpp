// SpmvPlan's products of Sliced ELLPACK and Sliced ELLPACK-R on the default execution space, instantiated once here
// (declared extern in cispmv/impl/plan_instances.hpp).
#include "cispmv/impl/plan_instances.hpp"

namespace cispmv {
CISPMV_PLAN_INSTANCES(, Sell)
CISPMV_PLAN_INSTANCES(, SellR)
}  // namespace cispmv
