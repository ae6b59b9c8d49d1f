// The references are templates defined in reference.hpp (instantiated for whatever element types use
// them); this file keeps the library target non-empty.
#include "verify/reference.hpp"
