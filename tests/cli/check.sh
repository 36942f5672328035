#!/usr/bin/env bash
# Runs hurray-inspect over every test input and compares what it prints
# (stdout, stderr and the exit status) with tests/cli/expected/.
#
#   check.sh HURRAY_INSPECT SOURCE_DIR GOLDEN_DIR [--update]
#
# Inputs: tests/cli/inputs/* (hand-built, good and bad), the project's own
# vectors under tests/vectors/ (*.bin, *.hrry, *.hrrs), and the reference's
# golden corpus under GOLDEN_DIR when it exists (skipped, with a note, when
# it does not). Each input gives NAME.txt (text), NAME.json (--json) and, for
# streams and containers, NAME.hex.txt (--hex --preview=4); the project's
# vectors give one --brief report per directory (vectors__valid.brief.txt).
# --update rewrites the expected files instead of comparing.
set -u
BIN=$1
SRC=$2
GOLDEN=$3
MODE=${4:-check}
EXP="$SRC/tests/cli/expected"
[ "$MODE" = "--update" ] && mkdir -p "$EXP"

failures=0
checked=0

run() { # run ARGS... : the report as the tests record it
  "$BIN" "$@" 2>&1
  echo "[exit $?]"
}

compare() { # compare NAME ARGS...
  local name=$1
  shift
  check_output "$name" "$(run "$@")"
}

check_output() { # check_output NAME TEXT
  local name=$1 got=$2
  local want="$EXP/$name"
  checked=$((checked + 1))
  if [ "$MODE" = "--update" ]; then
    printf '%s\n' "$got" >"$want"
    return
  fi
  if [ ! -f "$want" ]; then
    echo "MISSING expected output $want (run scripts/update_cli_expected.sh)"
    failures=$((failures + 1))
    return
  fi
  if ! diff -u "$want" <(printf '%s\n' "$got") >/tmp/hurray_cli_diff.$$ 2>&1; then
    echo "DIFFERS: $name"
    head -n 60 /tmp/hurray_cli_diff.$$
    failures=$((failures + 1))
  fi
  rm -f /tmp/hurray_cli_diff.$$
}

inspect_input() { # inspect_input NAME FILE
  local name=$1 file=$2
  compare "$name.txt" "$file"
  compare "$name.json" --json "$file"
  case "$file" in
    *.hrrs | *.hrry) compare "$name.hex.txt" --hex --preview=4 "$file" ;;
  esac
}

for f in "$SRC"/tests/cli/inputs/*; do
  [ -f "$f" ] || continue
  inspect_input "inputs__$(basename "$f")" "$f"
done

# The project's vectors are many: one --brief report per directory (the
# verdict and summary of every vector), full reports come from the rest.
if [ -d "$SRC/tests/vectors" ]; then
  while IFS= read -r dir; do
    got=""
    while IFS= read -r f; do
      got+="==== ${f#"$SRC/tests/"}"$'\n'"$(run --brief "$f")"$'\n'
    done < <(find "$dir" -maxdepth 1 -type f \( -name '*.bin' -o -name '*.hrry' -o -name '*.hrrs' \) | LC_ALL=C sort)
    [ -n "$got" ] || continue
    rel=${dir#"$SRC/tests/"}
    check_output "${rel//\//__}.brief.txt" "${got%$'\n'}"
  done < <(find "$SRC/tests/vectors" -type d | LC_ALL=C sort)
fi

if [ -d "$GOLDEN" ]; then
  while IFS= read -r f; do
    rel=${f#"$GOLDEN/"}
    inspect_input "golden__${rel//\//__}" "$f"
  done < <(find "$GOLDEN" -type f \( -name '*.bin' -o -name '*.hrry' \) | LC_ALL=C sort)
else
  echo "note: golden corpus $GOLDEN absent; its expected outputs were not checked"
fi

# stdin and argument handling
compare "cli__stdin.txt" - <"$SRC/tests/cli/inputs/stream_two_tensors.hrrs"
compare "cli__usage_no_input.txt"
compare "cli__usage_bad_option.txt" --frobnicate x
compare "cli__usage_bad_preview.txt" --preview=0 x
# relative path: the message names the file, and must not depend on the checkout
check_output "cli__missing_file.txt" "$(cd "$SRC" && run tests/cli/inputs/does-not-exist)"
compare "cli__as_descriptor.txt" --as=descriptor "$SRC/tests/cli/inputs/stream_two_tensors.hrrs"
compare "cli__brief_stream.txt" --brief "$SRC/tests/cli/inputs/stream_partition.hrrs"
compare "cli__brief_json.json" --brief --json "$SRC/tests/cli/inputs/stream_two_tensors.hrrs"

if [ "$MODE" = "--update" ]; then
  echo "wrote $checked expected outputs under $EXP"
  exit 0
fi
echo "$checked outputs checked, $failures differ"
[ "$failures" -eq 0 ]
