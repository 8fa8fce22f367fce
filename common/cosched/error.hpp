// One error vocabulary for every fallible call in cosched (STYLE habit 5).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace cosched {

enum class Errc {
  ok = 0,
  invalid_argument,  // a value out of range or of the wrong form
  parse_error,       // malformed text: SWF line, config, catalog, JSON
  io_error,          // a read/write/open that failed
  protocol_error,    // bad magic, version or framing on the socket or arena
  permission_denied, // peer uid not allowed, cgroup not writable
  not_found,         // no such job, policy, file
  unsupported,       // the machine lacks the feature (no PMU, no cpuset controller)
  timeout,
  count_  // keep last: the string table is checked against it
};

// Stable, lowercase names (used in logs and JSON); tests keep this table in sync with the enum.
std::string_view to_string(Errc e) noexcept;

struct Error {
  Errc code = Errc::ok;
  std::string message;  // names the file/line/field or the job and the value
};

// A minimal expected<T, Error>: C++20 has no std::expected.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}              // NOLINT: implicit on purpose
  Result(Error error) : v_(std::move(error)) {}          // NOLINT
  [[nodiscard]] bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  [[nodiscard]] const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result of a call that returns nothing but can fail.
class Status {
 public:
  Status() = default;
  Status(Error e) : e_(std::move(e)) {}  // NOLINT
  [[nodiscard]] bool ok() const noexcept { return e_.code == Errc::ok; }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] const Error& error() const { return e_; }

 private:
  Error e_;
};

inline Error make_error(Errc code, std::string message) { return Error{code, std::move(message)}; }

}  // namespace cosched
