#!/usr/bin/env bash
# Checks that every ```cpp block of README.md and docs/*.md compiles against include/ and build/include
# (the generated tandem/version.hpp): each block is compiled on its own with -fsyntax-only, wrapped as
#   <the block's #include and __global__ lines>  #include <tandem/tandem.hpp> and the std headers it uses
#   int main(int argc, char** argv) { <the rest of the block> }
# so a block declares what it uses (no names carry over from an earlier block). A block that uses MPI
# (tandem/mpi.hpp) gets mpicxx's include flags; one with a kernel launch (<<<) is compiled by nvcc
# (-c; NVCC, default /usr/local/cuda/bin/nvcc or nvcc on PATH). Either is skipped, and said so, where the
# tool is missing. Usage: tools/check_snippets.sh [files...]   (paths from the repository root, or
# absolute; default: README.md docs/*.md). Exit status 1 when a block fails to compile, else 0.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_INCLUDE=${BUILD_INCLUDE:-$ROOT/build/include}
CXX=${CXX:-g++}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(README.md docs/*.md)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failed=0 checked=0 skipped=0
for f in "${files[@]}"; do
  # Split the file's ```cpp blocks into $tmp/block_N.txt, with the line each starts on.
  rm -f "$tmp"/block_*.txt
  awk -v dir="$tmp" '
    /^```cpp[[:space:]]*$/ { inblock = 1; n++; out = sprintf("%s/block_%03d.txt", dir, n); print "//@line " NR + 1 > out; next }
    /^```/ && inblock { inblock = 0; close(out); next }
    inblock { print > out }
  ' "$f"
  for block in "$tmp"/block_*.txt; do
    [ -e "$block" ] || continue
    line=$(head -1 "$block" | sed 's|//@line ||')
    src=$tmp/snippet.cpp
    {
      grep -E '^[[:space:]]*(#include|__global__)' "$block"
      echo '#include <tandem/tandem.hpp>'
      printf '#include <%s>\n' cstddef cstdint span vector string optional
      echo 'int main(int argc, char** argv) {'
      echo '  (void)argc; (void)argv;'
      echo "#line $line \"$f\""
      tail -n +2 "$block" | sed -E 's/^[[:space:]]*(#include|__global__).*$//'
      echo '  return 0;'
      echo '}'
    } > "$src"
    flags=(-std=c++20 -I "$ROOT/include" -I "$BUILD_INCLUDE")
    if grep -q 'tandem/mpi.hpp' "$block"; then
      if ! command -v mpicxx >/dev/null; then
        echo "skip: $f:$line (MPI: no mpicxx)"; skipped=$((skipped + 1)); continue
      fi
      read -r -a mpi_flags <<< "$(mpicxx --showme:compile)"
      flags+=("${mpi_flags[@]}")
    fi
    if grep -q '<<<' "$block"; then
      if [ ! -x "$NVCC" ]; then
        echo "skip: $f:$line (CUDA: no nvcc)"; skipped=$((skipped + 1)); continue
      fi
      cp "$src" "$tmp/snippet.cu"
      cmd=("$NVCC" "${flags[@]}" -c "$tmp/snippet.cu" -o "$tmp/snippet.o")
    else
      cmd=("$CXX" "${flags[@]}" -fsyntax-only "$src")
    fi
    checked=$((checked + 1))
    if "${cmd[@]}" > "$tmp/log" 2>&1; then
      echo "ok:   $f:$line"
    else
      echo "FAIL: $f:$line (the \`\`\`cpp block starting there)"
      head -30 "$tmp/log"
      failed=$((failed + 1))
    fi
  done
done
echo "C++ snippets: $checked compiled, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
