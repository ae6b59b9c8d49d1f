#!/usr/bin/env bash
# The installed package where CUDA is absent (registered as CTest tests by tests/modules/CMakeLists.txt):
#   without_cuda.sh BUILD SOURCE WORK PYTHON install            install BUILD into WORK/full and a copy without
#                                                              the modules into WORK/no_module; check readelf;
#                                                              build examples/'s app against WORK/full
#   without_cuda.sh BUILD SOURCE WORK PYTHON no_module          run everything against WORK/no_module
#   without_cuda.sh BUILD SOURCE WORK PYTHON no_cuda_libraries  run against WORK/full with every folder that holds
#                                                              a CUDA library hidden (a mount namespace; exit 77,
#                                                              skipped, where none can be made)
# "Everything": the examples/ app (auto runs on the CPU; TANDEM_BACKEND=cuda fails with the documented error),
# `tandem info`, the common suite and a sample of the CPU suite, and a sample of the Python tests against the
# installed module.
set -euo pipefail
build=$1 source=$2 work=$3 python=$4 mode=$5
fail() {
  echo "without_cuda ($mode): $*"
  exit 1
}
cuda_lib='lib(cudart|cublas|cublasLt|nccl)\.so'  # the CUDA libraries the modules need
holds_cuda_library() { ls "$1" 2>/dev/null | grep -qE "^$cuda_lib"; }
libdir_of() { dirname "$(find "$1" -name 'libtandem.so.*' -type f | head -1)"; }
cuda_library_dirs() {  # every folder the loader may take a CUDA library from
  {
    ldconfig -p | grep -E "$cuda_lib" | awk '{print $NF}' | xargs -r -n1 dirname
    tr ':' '\n' <<<"${LD_LIBRARY_PATH:-}"
    readelf -d "$1"/libtandem_cuda.so | sed -n 's/.*R.*PATH.*\[\(.*\)\]/\1/p' | tr ':' '\n'
  } | while read -r d; do
    [ -n "$d" ] && [ -d "$d" ] && holds_cuda_library "$d" && realpath "$d"
  done | sort -u
}

run_checks() {  # $1: the install; $2: what the CUDA backend's reason must contain
  local prefix=$1 why=$2 lib out
  lib=$(libdir_of "$prefix")
  # This install's libtandem goes first (the example's and the tests' RUNPATH name other copies); folders
  # holding CUDA libraries are left out.
  local keep="$lib"
  while read -r d; do
    [ -n "$d" ] && ! holds_cuda_library "$d" && keep="$keep:$d"
  done < <(tr ':' '\n' <<<"${LD_LIBRARY_PATH:-}")
  export LD_LIBRARY_PATH=$keep
  unset TANDEM_BACKEND TANDEM_MODULE_PATH TANDEM_DEVICE TANDEM_DEVICES

  out=$("$work/examples/example_app" 2>&1) || fail "example_app failed: $out"
  echo "$out" | tail -2
  out=$("$prefix/bin/tandem" info 2>&1) || fail "tandem info failed: $out"
  grep -q "auto picks: cpu" <<<"$out" || fail "auto does not pick the CPU: $out"
  # Why CUDA is not usable: the driver's answer where no driver reports a GPU (the module is then not even
  # loaded), else the module's reason.
  says_why() { grep -q "NVIDIA driver" <<<"$1" || grep -qF "$why" <<<"$1"; }
  says_why "$out" || fail "tandem info says neither the driver's reason nor '$why': $out"
  if out=$(TANDEM_BACKEND=cuda "$work/examples/example_app" 2>&1); then fail "TANDEM_BACKEND=cuda ran: $out"; fi
  grep -q "the CUDA backend is not available" <<<"$out" && grep -qF "$why" <<<"$out" ||
    fail "TANDEM_BACKEND=cuda does not give the documented error: $out"
  echo "TANDEM_BACKEND=cuda: ${out:0:300}..."
  # A sample of the CPU suite and of the Python tests (both run in full against the build tree): reductions,
  # per-row forms, products, kernel tables and errors through the installed library.
  "$build/tests/tandem_tests" --test-suite=common | tail -3
  "$build/tests/tandem_tests" --test-suite=cpu \
    --test-case='*reduce: every kernel*,*per row/col: every op*,*matmul forms float and double*,*kernel lists*,*every invalid input*' |
    tail -3
  local site
  site=$(ls -d "$prefix"/lib*/python3*/*-packages 2>/dev/null | head -1 || true)
  if [ -n "$site" ] && [ -n "$python" ]; then
    out=$(PYTHONPATH=$site "$python" -c "import tandem; print(tandem.info())") || fail "import tandem failed: $out"
    says_why "$out" || fail "tandem.info() says neither the driver's reason nor '$why': $out"
    PYTHONPATH=$site "$python" -m pytest -q -p no:cacheprovider "$source/tests/python/test_numpy.py" \
      "$source/tests/python/test_kernel_info.py" "$source/tests/python/test_conventions_errors.py" | tail -2
  fi
  echo "without_cuda ($mode): ok"
}

case $mode in
install)
  rm -rf "$work"
  mkdir -p "$work"
  cmake --install "$build" --prefix "$work/full" >/dev/null
  cp -a "$work/full" "$work/no_module"
  rm -f "$(libdir_of "$work/no_module")"/libtandem_{cuda,nccl}.so
  for f in "$(libdir_of "$work/full")"/libtandem.so.* "$work"/full/lib*/python3*/*-packages/tandem*.so; do
    [ -e "$f" ] || continue
    if readelf -d "$f" | grep NEEDED | grep -E 'lib(cu|nccl|nvrtc|nvJit)'; then fail "$f links a CUDA library"; fi
    echo "readelf -d $(basename "$f"): no CUDA library among $(readelf -d "$f" | grep -c NEEDED) NEEDED entries"
  done
  cmake -S "$source/examples" -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/full" >"$work/examples.log" 2>&1 || { cat "$work/examples.log"; exit 1; }
  cmake --build "$work/examples" --target example_app >>"$work/examples.log" 2>&1 || { cat "$work/examples.log"; exit 1; }
  echo "without_cuda (install): ok"
  ;;
no_module)
  run_checks "$work/no_module" "libtandem_cuda.so (not found)"
  ;;
no_cuda_libraries)
  dirs=$(cuda_library_dirs "$(libdir_of "$work/full")")
  [ -n "$dirs" ] || fail "found no folder holding a CUDA library (the module would load: nothing to hide)"
  for d in $dirs; do
    case $d in /lib | /lib64 | /usr/lib | /usr/lib64 | /usr/lib/*-linux-gnu)
      echo "CUDA libraries live in the system folder $d, which cannot be hidden: skipped"
      exit 77 ;;
    esac
  done
  if ! unshare -m true 2>/dev/null && ! unshare -rm true 2>/dev/null; then
    echo "no mount namespace can be made here (unshare -m): skipped"
    exit 77
  fi
  flag=-m
  unshare -m true 2>/dev/null || flag=-rm
  # In a namespace of its own: an empty tmpfs over each folder, then the checks.
  exec unshare $flag bash -c 'for d in '"$(echo $dirs)"'; do mount -t tmpfs tmpfs "$d"; done; echo "hidden: '"$(echo $dirs)"'"
                               exec "$0" "$@" inside' "$0" "$build" "$source" "$work" "$python"
  ;;
inside)
  run_checks "$work/full" "(the loader says: lib"
  ;;
*) fail "unknown mode" ;;
esac
