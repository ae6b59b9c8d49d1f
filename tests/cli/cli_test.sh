#!/usr/bin/env bash
# The tandem CLI's behaviour: exit statuses (0 ok, 1 failed or cannot run, 2 usage), backends named by
# --backend or TANDEM_BACKEND that cannot run, unknown kernels naming the backend that has them, hints in
# CLI terms, TANDEM_DEVICE ignored by the CPU, the kernels table. Usage: cli_test.sh path/to/tandem
set -u
tandem=${1:?usage: cli_test.sh path/to/tandem}
unset TANDEM_BACKEND TANDEM_DEVICE TANDEM_DEVICES
failures=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

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

gpu=0
"$tandem" info 2>/dev/null | grep -Eq '^  cuda +compiled in, usable' && gpu=1

# Usage errors: exit 2.
run 2 "$tandem" && expect err 'usage: tandem <command>' "no arguments prints the usage on stderr"
run 2 "$tandem" no_such_command && expect err "unknown command 'no_such_command'" "unknown command"
run 2 "$tandem" reduce --no-such-option
run 2 "$tandem" reduce --backend cpu --kernel no_such_kernel --n 100 && expect err "unknown reduce kernel 'no_such_kernel'" "unknown kernel"
run 2 env TANDEM_BACKEND=no_such_backend "$tandem" kernels && expect err "TANDEM_BACKEND='no_such_backend'" "bad TANDEM_BACKEND"
run 0 "$tandem" --help && expect out '^exit status:' "--help documents the exit statuses"

# A CUDA kernel on the CPU: a usage error that names CUDA and the option to use.
run 2 "$tandem" reduce --kernel warp_shuffle --backend cpu --n 100 &&
  expect err 'warp_shuffle.*CUDA' "the message names the backend that has the kernel" &&
  expect err '--backend cuda' "the message says how to run it"
run 2 "$tandem" matmul --kernel cublas --backend cpu --size 8 && expect err 'cublas.*CUDA' "matmul kernel of CUDA"

# A backend the user names that cannot run here: non-zero, with the reason, in CLI terms.
if [ "$gpu" -eq 0 ]; then
  run 1 env TANDEM_BACKEND=cuda "$tandem" check --quick && expect err 'CUDA' "check names why CUDA cannot run" &&
    reject out 'passed' "check must not run other backends in place of the named one"
  run 1 "$tandem" check --quick --backend cuda
  run 1 env TANDEM_BACKEND=cuda "$tandem" reduce --n 100 &&
    expect err '--backend cpu' "hints in CLI terms" && reject err 'Backend::|EngineOptions::' "no C++ names in hints"
  run 1 env TANDEM_BACKEND=cuda "$tandem" kernels && expect err 'usable GPU' "kernels says why the CUDA table is missing"
  # Without a GPU the CUDA kernel table cannot be read (the module gives it through an engine on a GPU):
  # an error that says so and still lists the CUDA kernel names.
  run 1 "$tandem" kernels --backend cuda && expect err 'warp_shuffle' "the CUDA kernel names are listed" &&
    expect err 'usable GPU' "the reason is given"
else
  echo "skip: a GPU is usable here: the checks of a named CUDA backend that cannot run"
  run 0 "$tandem" kernels --backend cuda && expect out 'warp_shuffle' "the CUDA table lists warp_shuffle"
fi

# TANDEM_DEVICE is for CUDA engines; the CPU ignores it.
run 0 env TANDEM_DEVICE=abc "$tandem" reduce --backend cpu --n 1000 --op sum --repeat 1
run 0 env TANDEM_DEVICE=abc "$tandem" kernels --backend cpu

# kernels: a "no" in the deterministic column says why.
run 0 "$tandem" kernels --backend cpu &&
  expect out '^reduce +tbb_deterministic .*no \(run-to-run, not the canonical order\)' "tbb_deterministic's reason"

# reduce --op all: every line of the table has the same width (argmin / argmax included).
if run 0 "$tandem" reduce --backend cpu --n 1000 --op all --repeat 1; then
  widths=$(sed -n '/^kernel /,/^time:/p' "$out" | sed '$d' | sed 's/µ/u/g' | awk '{ print length($0) }' | sort -u | wc -l)
  if [ "$widths" -ne 1 ]; then
    echo "FAIL: reduce's table lines differ in width"
    sed -n '/^kernel /,/^time:/p' "$out"
    failures=$((failures + 1))
  fi
fi

echo "cli_test: $failures failed"
[ "$failures" -eq 0 ]
