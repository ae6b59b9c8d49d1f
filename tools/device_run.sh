#!/usr/bin/env bash
# One call on the GPU machine: build, test (full suite, the >2^31 case, compute-sanitizer on the quick
# subset), the CLI tables and the benchmarks. Logs and JSON go to $OUT (or ./out).
# Usage: tools/device_run.sh [steps...]   steps: build test large sanitize cli bench cpu_det multi python
# (default: all but cpu_det, multi and python; multi: the multi-GPU tests, MPI with a CUDA rank per GPU and
# bench_multi_gpu, for the machines with several GPUs; python: the module against the venv's pybind11,
# pytest with CuPy / PyTorch, and benchmarks/python/bench_python.py with the C++ baselines)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=$PWD/build-gpu  # the binaryDir of CMakePresets.json's gpu-machine preset
# The machine's paths, which the gpu-machine preset reads from the environment ($env{...}); set them
# beforehand to override: the host compiler (a g++ with a shared C++ runtime), the Python interpreter
# (python3 on PATH unless set; the one with CuPy / PyTorch for the python step) and NCCL's prefix (unless
# set, the pip package nvidia-nccl of that Python, else /usr).
export TANDEM_HOST_CXX=${TANDEM_HOST_CXX:-/usr/bin/g++}
export TANDEM_PYTHON=${TANDEM_PYTHON:-$(command -v python3)}
if [ -z "${TANDEM_NCCL_ROOT:-}" ]; then
  TANDEM_NCCL_ROOT=$("$TANDEM_PYTHON" -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || echo /usr)
fi
export TANDEM_NCCL_ROOT
NCCL_LIB=$TANDEM_NCCL_ROOT/lib
[ "$TANDEM_NCCL_ROOT" = /usr ] && NCCL_LIB=/usr/lib/$(uname -m)-linux-gnu  # (Debian's multiarch folder)
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu:$NCCL_LIB:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0  # no NVLink multicast (docs/SCALING.md says why)
# Some machines set CXX / CUDAHOSTCXX to a compiler whose C++ runtime is static only, which the Python
# module cannot use: the gpu-machine preset takes TANDEM_HOST_CXX instead (see CMakeLists.txt, Python).
unset CXX CC CUDAHOSTCXX
steps=${*:-build test large sanitize cli bench}
has() { [[ " $steps " == *" $1 "* ]]; }
status=0

if has build; then
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
  { cmake --preset gpu-machine ${CMAKE_EXTRA:-} && cmake --build --preset gpu-machine -j16; } > "$OUT/build.log" 2>&1 ||
    { tail -40 "$OUT/build.log"; exit 1; }
  echo "build: ok"
fi
if has test; then
  ctest --test-dir "$B" --output-on-failure > "$OUT/ctest.log" 2>&1 || status=1
  tail -15 "$OUT/ctest.log"
  grep -E "tests passed|Skipped|Failed" "$OUT/ctest.log" >> "$OUT/summary.txt"
  "$B/tests/tandem_tests" --test-suite=cuda > "$OUT/doctest_cuda.log" 2>&1
  tail -4 "$OUT/doctest_cuda.log"
fi
if has large; then
  TANDEM_TEST_LARGE=1 timeout 400 "$B/tests/tandem_tests" --test-case='*2^31*' > "$OUT/large.log" 2>&1 || status=1
  tail -4 "$OUT/large.log"
  grep -E "test cases|assertions" "$OUT/large.log" | sed "s/^/large: /" >> "$OUT/summary.txt"
fi
if has sanitize; then
  for tool in memcheck racecheck synccheck; do
    TANDEM_TEST_QUICK=1 timeout 400 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$B/tests/tandem_tests" --test-suite=cuda --test-case-exclude="*out of memory*" > "$OUT/sanitize_$tool.log" 2>&1
    echo "compute-sanitizer $tool: exit $?" | tee -a "$OUT/summary.txt"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|assertions:" "$OUT/sanitize_$tool.log" >> "$OUT/summary.txt"
    tail -3 "$OUT/sanitize_$tool.log"
  done
fi
if has cli; then
  T=$B/tools/tandem
  { $T info; $T reduce --backend cuda --kernel all --n 2^28; $T reduce --backend cuda --kernel all --n 2^28 --dtype int32;
    $T matmul --backend cuda --kernel all --size 4096; $T matmul --backend cuda --kernel all --size 4097;
    $T reduce --backend cpu --kernel all --n 2^27; $T matmul --backend cpu --kernel all --size 2048;
    $T matmul --backend cpu --kernel all --size 4096; } > "$OUT/cli.log" 2>&1 || status=1
  cat "$OUT/cli.log"
fi
if has bench; then
  timeout ${BENCH_TIMEOUT:-420} "$B/benchmarks/bench_cuda" --benchmark_out="$OUT/bench_cuda.json" --benchmark_out_format=json \
    ${BENCH_FILTER:+--benchmark_filter="$BENCH_FILTER"} > "$OUT/bench_cuda.txt" 2>&1 || status=1
  tail -60 "$OUT/bench_cuda.txt"
  timeout 150 "$B/benchmarks/bench_cpu" --benchmark_filter="${BENCH_CPU_FILTER:-(float/n:134217728|/float/2048|overhead)}" \
    --benchmark_out="$OUT/bench_cpu.json" --benchmark_out_format=json > "$OUT/bench_cpu.txt" 2>&1 || status=1
  tail -25 "$OUT/bench_cpu.txt"
fi
if has cpu_det; then
  T=$B/tools/tandem
  { $T reduce --backend cpu --kernel all --n 2^27; $T matmul --backend cpu --kernel all --size 2048; } > "$OUT/cli_cpu.log" 2>&1 || status=1
  cat "$OUT/cli_cpu.log"
fi
if has multi; then
  gpus=$(nvidia-smi -L | wc -l)
  "$B/tests/tandem_tests" --test-case='*several devices*,*every GPU*,device lists*' > "$OUT/multi_tests.log" 2>&1 || status=1
  tail -4 "$OUT/multi_tests.log"; grep -E "test cases|assertions" "$OUT/multi_tests.log" | sed "s/^/multi: /" >> "$OUT/summary.txt"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TANDEM_BACKEND=cuda timeout 300 \
    mpirun -np "$gpus" --oversubscribe "$B/tests/tandem_mpi_tests" > "$OUT/mpi_cuda.log" 2>&1 || status=1
  tail -4 "$OUT/mpi_cuda.log"; grep -E "test cases|assertions" "$OUT/mpi_cuda.log" | sed "s/^/mpi cuda x$gpus: /" >> "$OUT/summary.txt"
  timeout ${BENCH_TIMEOUT:-420} "$B/benchmarks/bench_multi_gpu" ${BENCH_FILTER:+--benchmark_filter="$BENCH_FILTER"} \
    --benchmark_out="$OUT/bench_multi_gpu.json" --benchmark_out_format=json > "$OUT/bench_multi_gpu.txt" 2>&1 || status=1
  cat "$OUT/bench_multi_gpu.txt"
  for np in $gpus 2 1; do  # MPI ranks, one GPU each: docs/SCALING.md's MPI and all-reduce tables
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TANDEM_BACKEND=cuda timeout 200 \
      mpirun -np $np --oversubscribe -x NCCL_NVLS_ENABLE -x TANDEM_BACKEND "$B/benchmarks/bench_mpi" \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out="$OUT/mpi_cuda_np$np.json" --benchmark_out_format=json > "$OUT/mpi_cuda_np$np.txt" 2>&1 || status=1
    grep median "$OUT/mpi_cuda_np$np.txt"
  done
fi
if has python; then
  PY=$TANDEM_PYTHON
  { cmake --preset gpu-machine -Dpybind11_DIR="$($PY -m pybind11 --cmakedir)" &&
      cmake --build "$B" -j16; } > "$OUT/python_build.log" 2>&1 ||
    { tail -30 "$OUT/python_build.log"; exit 1; }
  grep -m1 "Python module" "$OUT/python_build.log"
  PYTHONPATH=$B/python timeout 240 $PY -X faulthandler -m pytest -q -p no:cacheprovider --tb=short -rfs tests/python \
    > "$OUT/pytest.log" 2>&1 || status=1
  tail -25 "$OUT/pytest.log"; tail -1 "$OUT/pytest.log" | sed "s/^/pytest: /" >> "$OUT/summary.txt"
  PYTHONPATH=$B/python timeout ${BENCH_PY_TIMEOUT:-300} $PY benchmarks/python/bench_python.py --json "$OUT/bench_python.json" \
    > "$OUT/bench_python.txt" 2>&1 || status=1
  cat "$OUT/bench_python.txt"
fi
echo "==== summary"; cat "$OUT/summary.txt" 2>/dev/null
exit $status
