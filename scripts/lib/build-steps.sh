# Sourced by a driver's build-sdk (run by scripts/build-source, which sets PSB_PREFIX).
#
#   step NAME COMMAND [ARGS...]   run once: a step that passed is skipped next time
#                                 ($PSB_PREFIX/.steps/NAME holds its seconds); its
#                                 output goes to $PSB_PREFIX/logs/NAME.log; a failure
#                                 names the step and its log, shows the log's end and
#                                 stops the build (exit 1)
#   record_flag KEY VALUE         a build flag (standard, patch, configure option) for
#                                 psbench-sdk.json and the runs' records
#   apply_patches SRC PATCH...    each patch file to the tree SRC (-p1), unless it
#                                 reverses cleanly (an earlier build applied it)
#   patches_digest PATCH...       8 hex digits of the patches' text: in the names of
#                                 the steps they change, so that a prefix built before a
#                                 patch was added applies it and builds again
set -euo pipefail
: "${PSB_PREFIX:?build-sdk runs under scripts/build-source}"
mkdir -p "$PSB_PREFIX/.steps" "$PSB_PREFIX/logs"

step() {
  local name=$1
  shift
  local stamp="$PSB_PREFIX/.steps/$name" log="$PSB_PREFIX/logs/$name.log"
  if [[ -f "$stamp" ]]; then
    echo "build-source: step $name: done before ($(cat "$stamp") s), skipped"
    return 0
  fi
  echo "build-source: step $name ... (log: $log)"
  local started=$SECONDS status=0
  ("$@") > "$log" 2>&1 < /dev/null || status=$?
  if ((status != 0)); then
    echo "build-source: step $name failed (exit $status); log: $log" >&2
    echo "--- the log's last lines:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  echo "$((SECONDS - started))" > "$stamp"
  echo "build-source: step $name passed in $((SECONDS - started)) s"
}

record_flag() {
  local file="$PSB_PREFIX/logs/flags.tsv"
  touch "$file"
  grep -v -P "^\\Q$1\\E\t" "$file" > "$file.new" || true
  printf '%s\t%s\n' "$1" "$2" >> "$file.new"
  mv "$file.new" "$file"
}

apply_patches() {
  local src=$1 file
  shift
  for file in "$@"; do
    if patch -d "$src" -p1 -R --dry-run --silent < "$file" > /dev/null 2>&1; then
      echo "$(basename "$file"): applied before"
    else
      patch -d "$src" -p1 < "$file"
    fi
  done
}

patches_digest() {
  cat "$@" | sha256sum | cut -c1-8
}
