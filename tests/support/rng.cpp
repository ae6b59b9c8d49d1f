// The generator is header-only (rng.hpp); this file keeps the library target non-empty.
#include "tests/support/rng.hpp"
