#!/usr/bin/env bash
# Checks that the generated parts of docs/PERFORMANCE.md (its "<!-- generated: NAME -->" sections) and
# docs/perf/tables.md are what tools/bench_charts makes of the committed JSON (the files the page names on
# its "<!-- bench_charts inputs: ... -->" line), and that every chart the page shows exists.
# Regenerates both into a temporary folder (tables only: no matplotlib needed, Python 3's standard library
# only) and compares them with the committed files: exit 0 when they match, 1 with a diff when not.
# To update them after new measurements:
#   python3 tools/bench_charts.py --page docs/PERFORMANCE.md --tables docs/perf/tables.md --out docs/perf
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1  # leave no __pycache__ in the work tree

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs/perf"
cp docs/PERFORMANCE.md "$tmp/docs/PERFORMANCE.md"
ln -s "$PWD/docs/perf/json" "$tmp/docs/perf/json"  # the page names its inputs relative to itself

python3 tools/bench_charts.py --no-charts --page "$tmp/docs/PERFORMANCE.md" --tables "$tmp/docs/perf/tables.md" \
  2>"$tmp/log" || { sed "s#$tmp/##" "$tmp/log" >&2; echo "check_results: tools/bench_charts failed" >&2; exit 1; }

status=0
for f in docs/PERFORMANCE.md docs/perf/tables.md; do
  if ! diff -u --label "$f (committed)" --label "$f (from the JSON)" "$f" "$tmp/$f"; then
    status=1
  fi
done
# The charts are regenerated only on demand (they need matplotlib); the ones the page shows must exist.
for png in $(grep -o '](perf/[^)]*\.png)' docs/PERFORMANCE.md | sed 's/^](//; s/)$//'); do
  [ -f "docs/$png" ] || { echo "check_results: docs/PERFORMANCE.md shows docs/$png, which does not exist"; status=1; }
done
if [ "$status" -ne 0 ]; then
  echo "check_results: docs/PERFORMANCE.md or docs/perf/tables.md differ from what the committed JSON gives;"
  echo "  regenerate them: python3 tools/bench_charts.py --page docs/PERFORMANCE.md --tables docs/perf/tables.md \\"
  echo "    --no-charts   (without --no-charts, the charts too; they need python3-matplotlib)"
  exit 1
fi
python3 tools/scaling_tables.py --check || exit 1  # docs/SCALING.md's measured tables
echo "check_results: docs/PERFORMANCE.md and docs/perf/tables.md match the committed JSON"
