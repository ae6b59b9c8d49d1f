// The generator is header-only (rng.hpp); this file keeps the library target non-empty.
#include "verify/rng.hpp"
