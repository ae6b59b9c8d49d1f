// tandem: reductions and matrix products on the CPU (oneTBB + Eigen) or a CUDA GPU, through one API.
#pragma once

#include "tandem/buffer.hpp"
#include "tandem/dtype.hpp"
#include "tandem/engine.hpp"
#include "tandem/types.hpp"
#include "tandem/version.hpp"
