#!/usr/bin/env bash
# Render an experiment's report.html in headless Chromium, save a full-page PNG screenshot, and
# fail if the page logs console errors.
#
#   scripts/check-report.sh DIR [OUT.png]
#
# Installs Debian's chromium when it is missing (root, apt). The screenshot is 1400 px wide and
# 4000 px tall by default (CHECK_REPORT_HEIGHT overrides the height).
set -euo pipefail

dir=${1:?usage: scripts/check-report.sh DIR [OUT.png]}
html="$dir/report.html"
[ -f "$html" ] || { echo "error: $html does not exist (run lasthop run or lasthop report first)" >&2; exit 1; }
png=${2:-$dir/report.png}
height=${CHECK_REPORT_HEIGHT:-4000}

browser=""
for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
    echo "installing chromium (apt-get)..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq chromium >/dev/null
    browser=chromium
fi

abs=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
png_abs=$(cd "$(dirname "$png")" && pwd)/$(basename "$png")
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# --enable-logging=stderr --v=0 prints the page's console messages as "CONSOLE(...)" lines.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --enable-logging=stderr --v=0 \
    --window-size=1400,"$height" --screenshot="$png_abs" "file://$abs" 2>"$log" || {
    cat "$log" >&2
    echo "error: $browser failed" >&2
    exit 1
}
[ -s "$png_abs" ] || { cat "$log" >&2; echo "error: no screenshot written" >&2; exit 1; }

# Console messages: the report has no JavaScript, so any message Chromium logs from the page
# (its "INFO:CONSOLE" lines: console.error, uncaught exceptions, ...) is an error.
if grep -E ':CONSOLE[:(]|Uncaught' "$log" >/dev/null; then
    grep -E ':CONSOLE[:(]|Uncaught' "$log" >&2
    echo "error: the page logged console errors" >&2
    exit 1
fi
# Self-contained: no file or URL is loaded (src= / href= other than in-page anchors and data:).
if grep -oE '(src|href)="[^"#][^"]*"' "$html" | grep -v '"data:' >/dev/null; then
    grep -oE '(src|href)="[^"#][^"]*"' "$html" | grep -v '"data:' | head >&2
    echo "error: the report loads external files" >&2
    exit 1
fi
echo "screenshot: $png_abs"
