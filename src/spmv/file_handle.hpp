#pragma once
// A std::FILE* that closes itself, and opening one with an error that names the file (shared by the
// Matrix Market and binary readers and writers; internal to src/lib).

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace cispmv::impl {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

inline FilePtr open_file(const std::string& path, const char* mode, const char* caller) {
  FilePtr f(std::fopen(path.c_str(), mode));
  if (!f) {
    throw std::runtime_error(std::string(caller) + ": cannot open '" + path + "': " + std::strerror(errno));
  }
  return f;
}

}  // namespace cispmv::impl
