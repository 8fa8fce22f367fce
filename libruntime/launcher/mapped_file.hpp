// A read-only mapping of a whole regular file: how cosched-run reads the program's ELF file and the
// libraries it loads before it execs a job. Mapped, not read: a job's start-up pays for the pages of the
// headers it looks at, not for the whole file (python3.11 is 6.8 MB: reading it cost ~15 ms per launch).
#pragma once

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace cosched::launcher {

// Unmapped when it goes out of scope. open() returns why it failed, empty on success.
class MappedFile {
 public:
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile() = default;
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  // O_NONBLOCK: a FIFO must not block the open (it is then refused as not a regular file).
  std::string open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return std::strerror(errno);
    struct stat st {};
    std::string why;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      why = "not a regular file";
    } else if (st.st_size == 0) {
      why = "empty file";
    } else {
      void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        why = std::strerror(errno);
      } else {
        data_ = p;
        size_ = static_cast<std::size_t>(st.st_size);
      }
    }
    ::close(fd);
    return why;
  }
  template <typename T>
  bool read(std::uint64_t off, T& out) const {
    if (off > size_ || size_ - off < sizeof(T)) return false;
    std::memcpy(&out, static_cast<const char*>(data_) + off, sizeof(T));
    return true;
  }
  // The NUL-terminated string at `off`, or false when it runs off the file.
  bool string_at(std::uint64_t off, std::string& out) const {
    if (off >= size_) return false;
    const char* s = static_cast<const char*>(data_) + off;
    const void* end = std::memchr(s, '\0', size_ - off);
    if (end == nullptr) return false;
    out.assign(s, static_cast<const char*>(end));
    return true;
  }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// The file offset of virtual address `vaddr`, through the PT_LOAD segments; false when none holds it.
inline bool elf_vaddr_to_offset(const MappedFile& m, const Elf64_Ehdr& eh, std::uint64_t vaddr, std::uint64_t& off) {
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!m.read(eh.e_phoff + static_cast<std::uint64_t>(i) * eh.e_phentsize, ph)) return false;
    if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
      off = vaddr - ph.p_vaddr + ph.p_offset;
      return true;
    }
  }
  return false;
}

}  // namespace cosched::launcher
