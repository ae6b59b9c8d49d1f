// tandem::Error: every failure the caller can cause or handle.
#pragma once

#include <stdexcept>

#include "tandem/export.hpp"

namespace tandem {

// Every failure the caller can cause or handle. The message says what went wrong and what to do.
class TANDEM_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tandem
