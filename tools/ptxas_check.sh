#!/bin/sh
# The CUDA compiler launcher of the wgmma kernels (tandem_cuda_sm90a, CMakeLists.txt; TANDEM_PTXAS_CHECK): runs the
# compile it is given, whose ptxas reports every kernel's resources (-Xptxas=-v), and fails it where ptxas had to
# serialize wgmma instructions or inject waits and arrives around them (its notes C75xx on wgmma, GMMA or
# warpgroup instructions: the tensor cores idle while they drain; slower, not wrong), or where a kernel spills
# registers. Its other notes are not shown; everything else the compile prints is.
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
trap 'exit 130' HUP INT TERM
"$@" 2>"$log"
rc=$?
grep -v '^ptxas info *:' "$log" | grep -v '^ *[0-9]* bytes stack frame' >&2
# (a spill is reported on the line after the one that names its kernel)
bad=$(grep -E -B1 '\(C75[0-9][0-9]\).*(wgmma|GMMA|warpgroup)|[1-9][0-9]* bytes spill (stores|loads)' "$log" | grep -v '^--$')
if [ -n "$bad" ]; then
  printf '%s\n' "$bad" | sed 's/^/ptxas_check: /' | head -20 >&2
  echo "ptxas_check: ptxas serialized wgmma or spilled registers in the compile above: keep the accumulators out" \
    "of non-wgmma instructions inside a pipeline stage, and in-flight wgmma operands in registers of their own" \
    "(to build anyway, e.g. with another CUDA Toolkit: configure with -DTANDEM_PTXAS_CHECK=OFF)" >&2
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
