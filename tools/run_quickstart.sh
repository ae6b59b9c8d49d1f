#!/usr/bin/env bash
# Runs the shell commands of README.md's "## Quick start" section as written, from the repository root,
# so that the quick start cannot rot: CI runs this script.
#
# The commands are those of every shell code block of the section (from the "## Quick start" heading to
# the next heading of level 1 or 2): blocks indented by 4 spaces (or a tab), and fenced blocks whose
# language is empty, sh, bash or shell (fenced blocks of other languages are skipped, and said so). Each
# line is one command; a line ending in a backslash continues on the next. Blank lines and lines that
# are only a comment are skipped; trailing "# comments" stay, since bash ignores them itself.
#
# The commands run one after the other in one `bash -e -o pipefail` shell (so a `cd` or an `export`
# carries over to the next command, as in a terminal), each printed first as "quickstart$ <command>" and
# followed by the seconds it took.
# A command fails when its exit status is not 0 (for `a && b`, when a or b fails); the script then stops
# with that status, naming the command. It also fails when the section has no command.
#
# Usage: tools/run_quickstart.sh [--list] [FILE]
#   FILE    the Markdown file (default README.md; a path from the repository root, or absolute)
#   --list  print the commands, one per line, and run nothing
set -euo pipefail
cd "$(dirname "$0")/.."

list=0
file=README.md
for arg in "$@"; do
  case "$arg" in
    --list) list=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run_quickstart: unknown option '$arg' (try --help)" >&2; exit 2 ;;
    *) file=$arg ;;
  esac
done
[ -f "$file" ] || { echo "run_quickstart: no file '$file'" >&2; exit 2; }

# The commands of the section, into the array `commands` (a command may span lines).
commands=()
cmd=""
flush() {
  if [ -n "$cmd" ]; then commands+=("$cmd"); fi
  cmd=""
}
add() {  # one line of a shell block
  if [ -z "$cmd" ] && [[ $1 =~ ^[[:space:]]*(#.*)?$ ]]; then return; fi
  if [ -z "$cmd" ]; then cmd=$1; else cmd+=$'\n'$1; fi
  [[ $1 == *\\ ]] || flush
}
in_section=0 fence="" shell=0 indented=0 prev_blank=1
fence_re='^[[:space:]]*```'
while IFS= read -r line || [ -n "$line" ]; do
  if [ -n "$fence" ]; then  # inside a fenced block (of the section or not)
    if [[ $line =~ $fence_re ]]; then flush; fence=""; elif [ $in_section -eq 1 ] && [ $shell -eq 1 ]; then add "$line"; fi
    continue
  fi
  if [[ $line =~ ^##?[[:space:]] ]]; then  # a heading of level 1 or 2 starts or ends the section
    flush
    in_section=0 indented=0
    if [[ $line =~ ^##[[:space:]]+Quick\ start[[:space:]]*$ ]]; then in_section=1 prev_blank=1; fi
    continue
  fi
  if [[ $line =~ $fence_re ]]; then  # a fenced block starts: its language decides
    fence=$line
    if [ $in_section -eq 0 ]; then continue; fi
    lang=${line#*\`\`\`}
    lang=${lang#"${lang%%[![:space:]]*}"}
    lang=${lang%%[[:space:]]*}
    case "$lang" in
      "" | sh | bash | shell) shell=1 ;;
      *) shell=0; echo "run_quickstart: skipping a \`\`\`$lang block (not shell)" >&2 ;;
    esac
    continue
  fi
  [ $in_section -eq 1 ] || continue
  if [[ $line =~ ^(\ \ \ \ |$'\t') ]] && { [ $prev_blank -eq 1 ] || [ $indented -eq 1 ]; }; then
    indented=1
    if [[ $line == $'\t'* ]]; then add "${line#$'\t'}"; else add "${line#    }"; fi
    continue
  fi
  if [ $indented -eq 1 ]; then flush; fi
  indented=0
  if [[ $line =~ ^[[:space:]]*$ ]]; then prev_blank=1; else prev_blank=0; fi
done < "$file"
flush

if [ ${#commands[@]} -eq 0 ]; then
  echo "run_quickstart: no commands found under '## Quick start' in $file" >&2
  exit 1
fi
if [ $list -eq 1 ]; then
  printf '%s\n' "${commands[@]}"
  exit 0
fi

# One script, run by bash -e: each command printed, run, and its status checked (set -e alone would not
# stop at the failing first half of `a && b`).
script=$(mktemp)
trap 'rm -f "$script"' EXIT
{
  echo 'set -o pipefail'
  for c in "${commands[@]}"; do
    q=$(printf '%q' "$c")
    echo "printf 'quickstart\$ %s\n' $q"
    echo "quickstart_t0=\$SECONDS"
    echo "{"
    printf '%s\n' "$c"
    echo "} || { rc=\$?; printf 'run_quickstart: this command failed (exit %d): %s\n' \"\$rc\" $q >&2; exit \"\$rc\"; }"
    echo "printf 'quickstart: that command took %d s\n' \"\$((SECONDS - quickstart_t0))\""
  done
  echo "echo 'run_quickstart: every command of the quick start passed'"
} > "$script"
bash -e "$script"
