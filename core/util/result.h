// Result<T>: a value or an error that names where the input went wrong.
// The core reports bad programs and bad shapes as values, never by crashing.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace drtriton {

struct Error {
  std::string message;
  int line = 0;  // 1-based line of the program text; 0 when not tied to a line.

  std::string ToString() const {
    return line > 0 ? "line " + std::to_string(line) + ": " + message : message;
  }
};

template <class T>
class Result {
 public:
  Result(T value) : data_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : data_(std::move(error)) {}      // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    assert(ok() && "value() on an error Result");
    return std::get<T>(data_);
  }
  T& value() & {
    assert(ok() && "value() on an error Result");
    return std::get<T>(data_);
  }
  T&& value() && {
    assert(ok() && "value() on an error Result");
    return std::get<T>(std::move(data_));
  }
  const Error& error() const {
    assert(!ok() && "error() on an ok Result");
    return std::get<Error>(data_);
  }

 private:
  std::variant<T, Error> data_;
};

inline Error MakeError(std::string message, int line = 0) { return Error{std::move(message), line}; }

}  // namespace drtriton
