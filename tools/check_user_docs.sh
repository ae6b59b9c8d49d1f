#!/usr/bin/env bash
# Fails when the files users read hold a machine's paths or working notes: the README, docs/, the examples,
# the presets (cmake --list-presets shows them) and the tools' scripts. Users read what was measured, where
# and how; plans, targets and notes about the machines the project was developed on belong in its issues.
# Usage: tools/check_user_docs.sh   (from anywhere; exit 0: clean, 1: each hit printed)
set -euo pipefail
cd "$(dirname "$0")/.."
files=(README.md docs/*.md docs/perf/*.md CMakePresets.json examples tools/*.sh tools/*.py tools/bench_charts)
for f in "${files[@]}"; do [ -e "$f" ] || { echo "check_user_docs: $f is missing"; exit 1; }; done
# Paths of one machine (a home, a checkout's parent, a particular Python environment) and working notes.
patterns=(
  '/work/' '/home/[a-z]' '/root/' '/opt/torch' '\.\./shared'
  '\blent\b' '\bsessions?\b' '[Ii]ssue #?[0-9]' 'the shared machines' '\bTODO\b' 'targets? (met|missed)'
)
status=0
for p in "${patterns[@]}"; do
  rc=0
  hits=$(grep -rnIE --exclude=check_user_docs.sh "$p" "${files[@]}") || rc=$?
  if [ $rc -eq 0 ]; then
    echo "check_user_docs: '$p' in files users read:"
    echo "$hits" | sed 's/^/  /'
    status=1
  elif [ $rc -ne 1 ]; then  # (1: no match; anything else: grep itself failed)
    echo "check_user_docs: grep failed (exit $rc) on '$p'"
    status=1
  fi
done
[ $status -eq 0 ] && echo "check_user_docs: no machine paths or working notes in ${#files[@]} places"
exit $status
