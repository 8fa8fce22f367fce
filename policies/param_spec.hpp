// A policy's tunables, declared once (issue 49): one table per policy (its static param_table()) gives
// params() (name, current value, accepted values, meaning: status, cosched-ctl, --help, docs/usage.md) and
// set_param() (parse, range check, the constraints between parameters, param_util's one error format).
// A default is the member's initial value, where the comment citing its source stays; the table reads it
// (registry.hpp lists fresh policies), so a default is written once and the listings cannot disagree.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "param_util.hpp"
#include "policy.hpp"

namespace cosched::policy {

template <class P>
struct ParamSpec {
  std::string name;
  std::string accepts;  // what set_param takes, in words: "[0, 10]", "0 or 1", "fitness, list or random"
  std::string meaning;  // one line
  std::function<std::string(const P&)> show;
  std::function<Status(P&, std::string_view text)> set;  // parses, checks, stores; on error `P` is unchanged
  std::function<bool(const P&)> present = {};            // empty: always (some exist in one mode of a class)
};

template <class P>
using ParamTable = std::vector<ParamSpec<P>>;

// Where a parameter lives: read and write its value (in the parameter's unit, e.g. ms for a member in s).
template <class P, class T>
struct Field {
  std::function<T(const P&)> get;
  std::function<void(P&, T)> set;
};

// A Field on a member reached by `ref`, a generic lambda `[](auto& p) -> auto& { return p.member_; }`.
template <class P, class T, class Ref>
Field<P, T> member(Ref ref) {
  return {[ref](const P& p) { return static_cast<T>(ref(p)); },
          [ref](P& p, T v) { ref(p) = static_cast<std::remove_cvref_t<decltype(ref(p))>>(v); }};
}

// A check of a parsed value against the policy's other parameters, before it is stored (`text` as given).
template <class P, class T>
using ParamCheck = std::function<Status(const P&, T, std::string_view text)>;

// How a number of each kind is parsed, shown and its range written (ranged_param below).
namespace param_kind {
inline Status parse(const std::string& name, std::string_view text, double lo, double hi, double& v) {
  return parse_double_param(name, text, lo, hi, v);
}
inline Status parse(const std::string& name, std::string_view text, long lo, long hi, long& v) {
  return parse_int_param(name, text, lo, hi, v);
}
inline std::string show(double v) { return format_param(v); }
inline std::string show(long v) { return std::to_string(v); }
inline std::string range(double lo, double hi) { return "[" + format_param(lo) + ", " + format_param(hi) + "]"; }
inline std::string range(long lo, long hi) {
  return lo == 0 && hi == 1 ? "0 or 1" : "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}
}  // namespace param_kind

// A number in [lo, hi] (T: double or long), checked against the other parameters by `check` if given.
template <class P, class T>
ParamSpec<P> ranged_param(std::string name, T lo, T hi, std::string meaning, Field<P, T> f, ParamCheck<P, T> check) {
  std::string accepts = param_kind::range(lo, hi);
  auto set = [name, lo, hi, f, check](P& p, std::string_view text) -> Status {
    T v{};
    if (auto st = param_kind::parse(name, text, lo, hi, v); !st) return st;
    if (check) {
      if (auto st = check(p, v, text); !st) return st;
    }
    f.set(p, v);
    return {};
  };
  return {std::move(name), std::move(accepts), std::move(meaning),
          [get = f.get](const P& p) { return param_kind::show(get(p)); }, std::move(set)};
}

template <class P>
ParamSpec<P> real_param(std::string name, double lo, double hi, std::string meaning, Field<P, double> f,
                        ParamCheck<P, double> check = {}) {
  return ranged_param<P, double>(std::move(name), lo, hi, std::move(meaning), std::move(f), std::move(check));
}

template <class P>
ParamSpec<P> int_param(std::string name, long lo, long hi, std::string meaning, Field<P, long> f,
                       ParamCheck<P, long> check = {}) {
  return ranged_param<P, long>(std::move(name), lo, hi, std::move(meaning), std::move(f), std::move(check));
}

// A 0/1 switch (a bool member or an int one): shown and parsed as 0 or 1.
template <class P>
ParamSpec<P> flag_param(std::string name, std::string meaning, Field<P, long> f) {
  return int_param<P>(std::move(name), 0, 1, std::move(meaning), std::move(f));
}

// One of named values; a bad one is refused as "bad NAME 'text': a, b or c".
template <class P, class E>
ParamSpec<P> choice_param(std::string name, std::vector<std::pair<std::string, E>> values, std::string meaning,
                          Field<P, E> f) {
  std::string accepts;
  for (std::size_t i = 0; i < values.size(); ++i) {
    accepts += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i].first;
  }
  auto show = [values, get = f.get](const P& p) {
    for (const auto& [text, v] : values) {
      if (v == get(p)) return text;
    }
    return std::string("?");
  };
  auto set = [name, values, accepts, set = f.set](P& p, std::string_view text) -> Status {
    for (const auto& [t, v] : values) {
      if (t == text) {
        set(p, v);
        return {};
      }
    }
    return make_error(Errc::invalid_argument, "bad " + name + " '" + std::string(text) + "': " + accepts);
  };
  return {std::move(name), accepts, std::move(meaning), std::move(show), std::move(set)};
}

// Only in the modes of a class where `present` holds.
template <class P>
ParamSpec<P> only_if(ParamSpec<P> spec, std::function<bool(const P&)> present) {
  spec.present = std::move(present);
  return spec;
}

// The Policy overrides every tabled policy shares: P derives from TabledPolicy<P> and defines
// `static const ParamTable<P>& param_table()` (a member, so its lambdas reach P's private members).
template <class P>
class TabledPolicy : public Policy {
 public:
  [[nodiscard]] std::vector<Param> params() const final {
    std::vector<Param> out;
    const P& self = static_cast<const P&>(*this);
    for (const auto& s : P::param_table()) {
      if (!s.present || s.present(self)) out.push_back({s.name, s.show(self), s.meaning, s.accepts});
    }
    return out;
  }
  Status set_param(std::string_view name, std::string_view value) final {
    P& self = static_cast<P&>(*this);
    for (const auto& s : P::param_table()) {
      if (s.name == name && (!s.present || s.present(self))) return s.set(self, value);
    }
    return Policy::set_param(name, value);
  }
};

}  // namespace cosched::policy
