// How the GUI hands back work that can fail: a Result<T> holds the value, or the one sentence
// that says why there is none (shown to the user as it is), and whether the failure was a
// cancellation (which the user asked for, so nothing is shown).
//
// The analyzer reports errors by throwing (tracedb::ReadError, analyzer::Cancelled,
// std::invalid_argument for a bad pattern). The GUI catches them where its work starts (a
// worker thread, a check before work) and goes on with a Result: what crosses threads in a
// QFuture, and what the window decides to show, is always this one type.
#pragma once

#include <QString>
#include <type_traits>
#include <utility>
#include <variant>

namespace c3::gui {

// Why a Result holds no value.
struct Failure {
  QString message;  // one sentence for the user
  bool cancelled = false;
};
inline Failure failed(QString message) {
  return {std::move(message), false};
}
inline Failure cancelled(QString message) {
  return {std::move(message), true};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  // Result<void> holds nothing when it succeeds.
  using Value = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

  Result() requires std::is_void_v<T> : v_(std::monostate{}) {}
  Result(Value value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Failure failure) : v_(std::move(failure)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // The value (only when ok()).
  Value& operator*() { return std::get<0>(v_); }
  const Value& operator*() const { return std::get<0>(v_); }
  Value* operator->() { return &std::get<0>(v_); }
  const Value* operator->() const { return &std::get<0>(v_); }

  // Why there is no value (only when !ok()).
  const Failure& why() const { return std::get<1>(v_); }
  // The message of why(), empty when ok() (so that it can be passed along unconditionally).
  QString error() const { return ok() ? QString() : std::get<1>(v_).message; }

 private:
  std::variant<Value, Failure> v_;
};

}  // namespace c3::gui
