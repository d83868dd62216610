#!/bin/sh
# The schedule viewer in a real browser: `visa schedule SAMPLE --html` written, loaded by headless
# Chromium with #selftest (the page's script brushes both views, resets, clicks and double-clicks
# the op that ends the schedule and writes what it saw into #selftest-result, whose "pass" the
# test requires), and the rendered DOM checked: op boxes and tensors drawn, the
# expected label on a box, the clicked op's description (`visa explain`'s text) and what it waited
# on shown. A screenshot is kept beside the page as the test's artifact.
# Usage: schedule_viewer_browser_test.sh VISA CHROMIUM OUT_DIR SAMPLE EXPECTED_LABEL
set -eu
visa=$1 chromium=$2 out=$3 sample=$4 label=$5
mkdir -p "$out"
page="$out/$sample.html"
"$visa" schedule "$sample" --html "$page" >/dev/null
# Its own profile per run: tests run in parallel and a shared profile is locked.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
browse() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$profile" --window-size=1600,1000 "$@" 2>>"$out/$sample.chromium.log"
}
browse --dump-dom "file://$page#selftest" >"$out/$sample.dom.html"
fail() { echo "FAIL ($sample): $*"; exit 1; }
result=$(grep -o 'SELFTEST {.*}' "$out/$sample.dom.html" || true)
[ -n "$result" ] || fail "no #selftest-result in the rendered DOM ($out/$sample.dom.html): the script did not run"
echo "$result"
echo "$result" | grep -q '"pass":true' || fail "the page's self-check failed"
boxes=$(grep -o 'class="op-box' "$out/$sample.dom.html" | wc -l)
[ "$boxes" -gt 0 ] || fail "no op box drawn"
tensors=$(grep -o 'class="tensor-box' "$out/$sample.dom.html" | wc -l)
[ "$tensors" -gt 0 ] || fail "no tensor drawn in the memory view"
grep -q "class=\"op-label\"[^>]*>[^<]*$label" "$out/$sample.dom.html" || fail "no box labelled \`$label\`"
grep -q 'id="details-explain"' "$out/$sample.dom.html" || fail "the click showed no description"
grep -q 'class="op-box[^"]*selected' "$out/$sample.dom.html" || fail "the clicked op is not highlighted"
grep -q 'Waited on' "$out/$sample.dom.html" || fail "the click showed no 'Waited on'"
browse --screenshot="$out/$sample.png" "file://$page#selftest" >/dev/null
[ "$(head -c 4 "$out/$sample.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "no screenshot"
echo "ok: $boxes op boxes, $tensors tensors; screenshot $out/$sample.png"
