// tandem::Error: every failure the caller can cause or handle.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "tandem/export.hpp"

namespace tandem {

// What kind of failure an Error reports (the Python module raises ValueError / TypeError subclasses of
// tandem.Error for the first two).
enum class ErrorKind : std::uint8_t {
  value,    // an argument's value or shape is not accepted (sizes, strides, names, options)
  type,     // an element type is not accepted (a kernel or call does not take it)
  failure,  // the machine or a library failed, or nothing usable is there (no GPU, a CUDA error)
};

// Every failure the caller can cause or handle. The message says what went wrong and what to do.
class TANDEM_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, ErrorKind kind = ErrorKind::failure)
      : std::runtime_error(what), kind_(kind) {}
  explicit Error(const char* what, ErrorKind kind = ErrorKind::failure) : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// An Error of kind value / type.
inline Error value_error(const std::string& what) { return Error(what, ErrorKind::value); }
inline Error type_error(const std::string& what) { return Error(what, ErrorKind::type); }

}  // namespace tandem
