// Keys of repeating state, for cosched-sim's fast-forward of steady rotations (Policy::rotation_key,
// docs/simulator.md "Steady rotations"): values' bytes appended as they are, so that two keys are equal
// exactly when every value is (no rounding: a key that matches by accident would skip what differs).
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace cosched::policy {

// Appends to a key through a small buffer: one string append per 256 bytes, not one per value (a key is
// built at every quantum tick of a time-sharing run).
class KeyWriter {
 public:
  explicit KeyWriter(std::string& key) : key_(key) {}
  ~KeyWriter() { flush(); }
  KeyWriter(const KeyWriter&) = delete;
  KeyWriter& operator=(const KeyWriter&) = delete;

  template <class T>
  KeyWriter& operator<<(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (used_ + sizeof(T) > sizeof(buffer_)) flush();
    std::memcpy(buffer_ + used_, &value, sizeof(T));
    used_ += sizeof(T);
    return *this;
  }
  // Text, ended by a NUL so that two strings in a row cannot shift into each other.
  KeyWriter& text(std::string_view s) {
    if (used_ + s.size() + 1 > sizeof(buffer_)) flush();
    if (s.size() + 1 > sizeof(buffer_)) {
      key_.append(s);
      key_.push_back('\0');
      return *this;
    }
    std::memcpy(buffer_ + used_, s.data(), s.size());
    used_ += s.size();
    buffer_[used_++] = '\0';
    return *this;
  }
  void flush() {
    key_.append(buffer_, used_);
    used_ = 0;
  }

 private:
  std::string& key_;
  char buffer_[256];
  std::size_t used_ = 0;
};

}  // namespace cosched::policy
