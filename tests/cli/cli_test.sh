#!/usr/bin/env bash
# The tandem CLI's behaviour: exit statuses (0 ok, 1 failed or cannot run, 2 usage), backends named by
# --backend or TANDEM_BACKEND that cannot run, unknown kernels naming the backend that has them, hints in
# CLI terms, TANDEM_DEVICE ignored by the CPU, the kernels table (every backend's, with or without its
# device; without the CUDA module). Usage: cli_test.sh path/to/tandem
set -u
tandem=${1:?usage: cli_test.sh path/to/tandem}
unset TANDEM_BACKEND TANDEM_DEVICE TANDEM_DEVICES
failures=0
out=$(mktemp) err=$(mktemp) nomod=$(mktemp -d)
trap 'rm -f "$out" "$err"; rm -rf "$nomod"' EXIT
# run EXPECTED_STATUS ARGS...: runs tandem (environment from the caller's `env` prefix via run_env).
run() {
  local expected=$1
  shift
  "$@" >"$out" 2>"$err"
  local status=$?
  if [ "$status" -ne "$expected" ]; then
    echo "FAIL: '$*' exited $status, expected $expected"
    sed 's/^/  stdout: /' "$out" | head -5
    sed 's/^/  stderr: /' "$err" | head -5
    failures=$((failures + 1))
    return 1
  fi
  echo "ok: '$*' exited $status"
}
# expect FILE PATTERN WHAT: FILE (out or err) matches the extended regex PATTERN.
expect() {
  local file=$out
  [ "$1" = err ] && file=$err
  if ! grep -Eq -e "$2" "$file"; then
    echo "FAIL: $3: no match for '$2' in $1"
    sed 's/^/  | /' "$file" | head -5
    failures=$((failures + 1))
  fi
}
reject() {
  local file=$out
  [ "$1" = err ] && file=$err
  if grep -Eq -e "$2" "$file"; then
    echo "FAIL: $3: '$2' found in $1"
    failures=$((failures + 1))
  fi
}

gpu=0 cuda_built=0 cuda_table=0
"$tandem" info 2>/dev/null | grep -Eq '^  cuda +compiled in, usable' && gpu=1
"$tandem" info 2>/dev/null | grep -Eq '^  cuda +compiled in' && cuda_built=1
# The CUDA module loads here (its table can be read; no GPU is needed): `tandem kernels --backend cuda` works.
"$tandem" kernels --backend cuda >/dev/null 2>&1 && cuda_table=1
[ "$cuda_built" -eq 1 ] && [ "$cuda_table" -eq 0 ] && echo "note: the CUDA module does not load here"

# Usage errors: exit 2.
run 2 "$tandem" && expect err 'usage: tandem <command>' "no arguments prints the usage on stderr"
run 2 "$tandem" no_such_command && expect err "unknown command 'no_such_command'" "unknown command"
run 2 "$tandem" reduce --no-such-option
run 2 "$tandem" reduce --backend cpu --kernel no_such_kernel --n 100 && expect err "unknown reduce kernel 'no_such_kernel'" "unknown kernel"
run 2 env TANDEM_BACKEND=no_such_backend "$tandem" kernels && expect err "TANDEM_BACKEND='no_such_backend'" "bad TANDEM_BACKEND"
run 2 env TANDEM_BACKEND=no_such_backend "$tandem" info && expect out "TANDEM_BACKEND='no_such_backend'" "info reports a bad TANDEM_BACKEND"
run 0 "$tandem" info && reject out '\(null\)' "info names what compute units count"
run 0 "$tandem" --help && expect out '^exit status:' "--help documents the exit statuses"
run 2 "$tandem" reduce --backend cpu --n 2^70 && expect err "more than the largest count" "a count past 2^64"
run 2 "$tandem" reduce --backend cpu --n 1e30 && expect err "more than the largest count" "a count past 2^64, 1eN"
run 2 "$tandem" reduce --backend cpu --n 1.5e0 && expect err "is not a count" "not a whole number"

# A CUDA kernel on the CPU: a usage error that names CUDA and the option to use (where the CUDA table can
# be read: a GPU is not needed); without it, a usage error that says the CUDA kernels are not known here.
if [ "$cuda_table" -eq 1 ]; then
  run 2 "$tandem" reduce --kernel warp_shuffle --backend cpu --n 100 &&
    expect err 'warp_shuffle.*CUDA' "the message names the backend that has the kernel" &&
    expect err '--backend cuda' "the message says how to run it"
  run 2 "$tandem" matmul --kernel cublas --backend cpu --size 8 && expect err 'cublas.*CUDA' "matmul kernel of CUDA"
else
  run 2 "$tandem" reduce --kernel warp_shuffle --backend cpu --n 100 &&
    expect err "unknown reduce kernel 'warp_shuffle'" "an unknown kernel" &&
    expect err 'why the cuda kernels cannot be read here' "the message says the CUDA table is missing"
fi

# A backend the user names that cannot run here: non-zero, with the reason, in CLI terms.
if [ "$gpu" -eq 0 ]; then
  run 1 env TANDEM_BACKEND=cuda "$tandem" check --quick && expect err 'CUDA' "check names why CUDA cannot run" &&
    reject out 'passed' "check must not run other backends in place of the named one"
  run 1 "$tandem" check --quick --backend cuda
  run 1 env TANDEM_BACKEND=cuda "$tandem" reduce --n 100 &&
    expect err '--backend cpu' "hints in CLI terms" && reject err 'Backend::|EngineOptions::' "no C++ names in hints"
else
  echo "skip: a GPU is usable here: the checks of a named CUDA backend that cannot run"
fi

# kernels: every backend's table is fixed information, listed whether or not the backend can run here.
if [ "$cuda_table" -eq 1 ]; then
  header='^kernels: cuda \(' usable=true
  if [ "$gpu" -eq 0 ]; then header='^kernels: cuda, listed without a usable CUDA GPU .*: compiled in, not usable: ' usable=false; fi
  run 0 "$tandem" kernels --backend cuda && expect out "$header" "the CUDA table's header says whether it can run" &&
    expect out '^reduce +auto ' "the CUDA reduce table, auto first" && expect out '^matmul +auto ' "the matmul table" &&
    expect out '^reduce +[a-z_0-9]+ ' "and its stages"
  run 0 env TANDEM_BACKEND=cuda "$tandem" kernels && expect out "$header" "TANDEM_BACKEND=cuda lists the CUDA table"
  run 0 "$tandem" kernels && expect out '^kernels: cpu \(' "all: the CPU's table" &&
    expect out "$header" "all: the CUDA table" && reject out 'not listed' "all: every table is listed"
  run 0 "$tandem" kernels --json && expect out '"backend":"cuda","usable":'"$usable"',"kind":"reduce","name":"auto"' \
    "--json: the CUDA table, usable here or not" &&
    expect out '"backend":"cpu","usable":true,"kind":"reduce","name":"auto"' "--json: the CPU's table"
  [ "$gpu" -eq 0 ] && expect err 'cuda, listed without a usable CUDA GPU' "--json: stderr says CUDA cannot run here"
fi
run 0 "$tandem" kernels --backend cpu --json && expect out '^  \{"backend":"cpu","usable":true,' "--json: usable"

# Without the CUDA module (a copy of libtandem alone in a folder: the module is looked for beside it), the
# CUDA table cannot be read: an error where it is named, a "not listed" line for all; where the build
# has no CUDA, the same.
libtandem=$(ldd "$tandem" | sed -n 's/^\s*libtandem\.so[^ ]* => \(\S*\).*/\1/p' | head -1)
if [ -n "$libtandem" ] && cp "$libtandem" "$nomod/$(basename "$libtandem")"; then
  why='libtandem_cuda.so.*not found'
  [ "$cuda_built" -eq 1 ] || why='not compiled into this build'
  run 1 env LD_LIBRARY_PATH="$nomod" "$tandem" kernels --backend cuda &&
    expect err '^tandem: kernels: cuda not listed: ' "a named CUDA backend without its table: an error" &&
    expect err "$why" "the reason is given"
  run 0 env LD_LIBRARY_PATH="$nomod" "$tandem" kernels && expect out '^kernels: cpu \(' "all: the CPU's table" &&
    expect out "^kernels: cuda not listed: .*$why" "all: CUDA not listed, and why"
  run 0 env LD_LIBRARY_PATH="$nomod" "$tandem" kernels --json && expect err "^kernels: cuda not listed: .*$why" \
    "--json: CUDA not listed, on stderr"
else
  echo "FAIL: libtandem not found in 'ldd $tandem'"
  failures=$((failures + 1))
fi

# TANDEM_DEVICE is for CUDA engines; the CPU ignores it.
run 0 env TANDEM_DEVICE=abc "$tandem" reduce --backend cpu --n 1000 --op sum --repeat 1
run 0 env TANDEM_DEVICE=abc "$tandem" kernels --backend cpu

# kernels: a "no" in the deterministic column says why.
run 0 "$tandem" kernels --backend cpu &&
  expect out '^reduce +tbb_fixed_split .*no \(run-to-run, not the canonical order\)' "tbb_fixed_split's reason"

# reduce --op all: every line of the table has the same width (argmin / argmax included).
if run 0 "$tandem" reduce --backend cpu --n 1000 --op all --repeat 1; then
  widths=$(sed -n '/^kernel /,/^time:/p' "$out" | sed '$d' | sed 's/µ/u/g' | awk '{ print length($0) }' | sort -u | wc -l)
  if [ "$widths" -ne 1 ]; then
    echo "FAIL: reduce's table lines differ in width"
    sed -n '/^kernel /,/^time:/p' "$out"
    failures=$((failures + 1))
  fi
fi

# --stride 0: one element read n times (a broadcast), every kernel and op judged against its reference
# (exit 1 on any failed row); the byte types and a 16-bit type too.
for dtype in float double int64 bfloat16 uint8 bool; do
  run 0 "$tandem" reduce --backend cpu --kernel all --op all --n 100003 --stride 0 --dtype "$dtype" --repeat 1 &&
    expect out "stride 0," "--stride 0 ($dtype) is shown" && reject out "FAIL" "--stride 0 ($dtype): every row passes"
done

echo "cli_test: $failures failed"
[ "$failures" -eq 0 ]
