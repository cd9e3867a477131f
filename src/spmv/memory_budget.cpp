// Host memory available to the process, and byte sizes as people write them.
#include "cispmv/memory_budget.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace cispmv {

std::size_t parse_bytes(const std::string& text, const std::string& what) {
  auto bad = [&]() -> std::size_t {
    throw std::invalid_argument(what + " '" + text.substr(0, 40) +
                                "' is not a size (expected e.g. 8G, 512M, 1.5T or a number of bytes)");
  };
  if (text.empty() || text.size() > 32) return bad();
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    return bad();
  }
  std::string unit = text.substr(pos);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  double scale = 1;
  if (unit == "k" || unit == "K")
    scale = 1024.0;
  else if (unit == "M" || unit == "m")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "t")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty())
    return bad();
  const double bytes = v * scale;
  if (!std::isfinite(bytes) || bytes <= 0 || bytes > 1e18) return bad();
  return static_cast<std::size_t>(bytes);
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1000 && u < 5) {
    bytes /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes < 10 ? "%.2f %s" : bytes < 100 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

std::size_t host_available_bytes() {
  std::size_t available = 0;
  {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::size_t kb = 0;
    std::string unit;
    while (meminfo >> key >> kb >> unit) {
      if (key == "MemAvailable:") {
        available = kb * 1024;
        break;
      }
    }
  }
  if (available == 0) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) available = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
  }
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream f(path);
    std::string v;
    if (f >> v && !v.empty() && std::isdigit(static_cast<unsigned char>(v[0]))) {
      const double limit = std::stod(v);
      if (limit > 0 && limit < 1e18) available = std::min(available, static_cast<std::size_t>(limit));
    }
  }
  available = std::min(available, memory_cap());
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit r{};
    if (getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
      available = std::min(available, static_cast<std::size_t>(r.rlim_cur));
    }
  }
  return available;
}

std::size_t memory_cap() {
  if (const char* cap = std::getenv("CISPMV_MAX_MEMORY"); cap != nullptr && *cap != '\0') {
    return parse_bytes(cap, "CISPMV_MAX_MEMORY");
  }
  return std::numeric_limits<std::size_t>::max();
}

}  // namespace cispmv
