#pragma once
// A std::FILE* that closes itself, and opening one with an error that names the file (shared by the
// Matrix Market and binary readers and writers; internal to src/lib).

#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
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

/// A file written in full or not at all: the data goes to a temporary file in the same folder
/// (`.<name>.XXXXXX`), which commit() renames over `path` once it is complete and closed. A write that
/// fails half way (disk full, file-size limit), an exception or a kill before commit() leaves the old
/// `path` as it was; the destructor removes the temporary file. A `path` that exists and is not a
/// regular file (a FIFO, /dev/stdout) is written directly, as rename cannot replace it.
class OutputFile {
 public:
  OutputFile(const std::string& path, const char* caller) : path_(path), caller_(caller) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      file_ = open_file(path, "wb", caller);
      return;
    }
    const std::size_t slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string pattern = dir + "." + name + ".XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) {
      throw std::runtime_error(std::string(caller) + ": cannot create a file in the folder of '" + path +
                               "': " + std::strerror(errno));
    }
    ::fchmod(fd, 0644);
    temp_ = pattern;
    file_.reset(::fdopen(fd, "wb"));
    if (!file_) {
      ::close(fd);
      std::remove(temp_.c_str());
      throw std::runtime_error(std::string(caller) + ": cannot open '" + temp_ + "': " + std::strerror(errno));
    }
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() {
    if (!temp_.empty()) {
      file_.reset();
      std::remove(temp_.c_str());
    }
  }
  std::FILE* get() const { return file_.get(); }
  /// Closes the file and puts it in place of `path`; throws naming the file if either fails.
  void commit() {
    if (std::fclose(file_.release()) != 0) {
      throw std::runtime_error(std::string(caller_) + ": cannot finish writing '" + path_ +
                               "': " + std::strerror(errno));
    }
    if (!temp_.empty()) {
      if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
        throw std::runtime_error(std::string(caller_) + ": cannot put the written file in place of '" + path_ +
                                 "': " + std::strerror(errno));
      }
      temp_.clear();
    }
  }

 private:
  std::string path_, temp_;
  const char* caller_;
  FilePtr file_;
};

}  // namespace cispmv::impl
