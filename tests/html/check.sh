#!/bin/sh
# The --html page in a real browser (Debian's chromium, headless): for
# each real trace in tests/data/traces, for a copy of the chase trace with
# a hostile kernel name, and for the ranks of a synthetic job (the job
# view, both GPUs' maps side by side; $GEN, tests/bench/gen_trace.c),
# write the page, then check that
#   - chromium loads it without a console error ("Uncaught", "ERROR:CONSOLE"),
#   - the DOM it parsed has as many <svg> as the file and no <script>,
#   - the screenshot (1400x3000) is not blank: many distinct pixel rows
#     (python3) or, without python3, a PNG well above a blank page's size,
#   - the page fits 1,400 pixels' width: no scrolling sideways (a copy of it
#     with a script that notes the document's width, --dump-dom).
# The traces: tests/data/traces/*.sqlite and a training step's (.xz).
# Not part of `make test`: `make test-html`.  Screenshots stay in $OUT
# (a fresh folder unless set).  Needs chromium (apt-get install chromium).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
NT=$(cd "$(dirname "${NUCATRACE:-$root/build/nucatrace}")" && pwd)/$(basename "${NUCATRACE:-nucatrace}")
CHROMIUM=${CHROMIUM:-chromium}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT" || exit 2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0

if ! command -v "$CHROMIUM" >/dev/null; then
	echo "html: $CHROMIUM not found (apt-get install chromium)" >&2
	exit 2
fi

chrome() {
	"$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d -p "$WORK")" --window-size=1400,3000 "$@"
}

# Distinct scanlines of a PNG (after inflating, before unfiltering: a blank
# page has a handful, a page with pictures thousands).
rows() {
	python3 - "$1" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
i, idat, w = 8, b"", 0
while i < len(d):
    n, t = struct.unpack(">I4s", d[i:i + 8])
    if t == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", d[i + 8:i + 18])
        bpp = {2: 3, 6: 4, 0: 1, 4: 2}[ctype] * depth // 8
    elif t == b"IDAT":
        idat += d[i + 8:i + 8 + n]
    i += 12 + n
raw = zlib.decompress(idat)
stride = 1 + w * bpp
print(len({raw[k:k + stride] for k in range(0, len(raw), stride)}))
PY
}

check() {
	name=$1 page=$2 shot=$OUT/$1.png why=
	if ! chrome --enable-logging=stderr --v=0 --screenshot="$shot" "file://$page" \
		>"$WORK/$name.log" 2>&1 || [ ! -s "$shot" ]; then
		why="no screenshot"
	elif grep -E "Uncaught|ERROR:CONSOLE" "$WORK/$name.log" >"$WORK/$name.err"; then
		why="console: $(head -1 "$WORK/$name.err")"
	fi
	if [ -z "$why" ]; then
		chrome --dump-dom "file://$page" >"$WORK/$name.dom" 2>/dev/null
		want=$(grep -o '<svg' "$page" | wc -l)
		got=$(grep -o '<svg' "$WORK/$name.dom" | wc -l)
		[ "$want" = "$got" ] || why="the DOM has $got <svg>, the file $want"
		grep -qi '<script' "$WORK/$name.dom" && why="a <script> in the DOM"
	fi
	if [ -z "$why" ]; then
		sed 's#</body>#<script>document.body.setAttribute("data-fit", document.documentElement.scrollWidth + " " + window.innerWidth)</script></body>#' \
			"$page" >"$WORK/$name-width.html"
		fit=$(chrome --dump-dom "file://$WORK/$name-width.html" 2>/dev/null | grep -o 'data-fit="[0-9]* [0-9]*"' |
			tr -dc '0-9 ')
		set -- $fit
		[ $# -eq 2 ] && [ "$1" -le "$2" ] || why="wider than the window: document ${1:-?} px, window ${2:-?} px"
	fi
	if [ -z "$why" ]; then
		if command -v python3 >/dev/null; then
			n=$(rows "$shot") || n=0
			[ "$n" -ge 200 ] || why="screenshot looks blank ($n distinct rows)"
		else
			[ "$(wc -c <"$shot")" -gt $((3 * blank)) ] || why="screenshot looks blank"
		fi
	fi
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "ok   $name ($(wc -c <"$page") bytes)"
	else
		fail=$((fail + 1))
		echo "FAIL $name: $why"
	fi
}

printf '<!DOCTYPE html><html><body></body></html>\n' >"$WORK/blank.html"
chrome --screenshot="$WORK/blank.png" "file://$WORK/blank.html" >/dev/null 2>&1
blank=$(wc -c <"$WORK/blank.png" 2>/dev/null || echo 0)
[ -z "$(command -v python3)" ] || echo "blank page: $(rows "$WORK/blank.png") distinct rows"

for t in "$root"/tests/data/traces/*.sqlite; do
	name=$(basename "$t" .sqlite)
	if ! "$NT" report --html "$WORK/$name.html" "$t" >/dev/null; then
		fail=$((fail + 1))
		echo "FAIL $name: nucatrace report --html failed"
		continue
	fi
	check "$name" "$WORK/$name.html"
done

# A training step under the default (130 kernels, long demangled names).
xz -dc "$root/tests/data/traces/h200-89a84787-train-mixed.sqlite.xz" >"$WORK/train.sqlite" &&
	"$NT" report --html "$WORK/train.html" "$WORK/train.sqlite" >/dev/null &&
	check train "$WORK/train.html" || { fail=$((fail + 1)); echo "FAIL train: no page"; }

# A kernel and GPU named like markup must stay text.
cp "$root/tests/data/traces/h200-abc66725-chase.sqlite" "$WORK/hostile.sqlite"
sqlite3 "$WORK/hostile.sqlite" "update kernels set demangled='<script>alert(1)</script>&\"''x';
	update devices set name='<img src=x onerror=alert(2)>'" &&
	"$NT" report --html "$WORK/hostile.html" "$WORK/hostile.sqlite" >/dev/null &&
	check hostile "$WORK/hostile.html" || { fail=$((fail + 1)); echo "FAIL hostile: no page"; }

# The job view: two ranks on the two H200 maps of one machine.
GEN=${GEN:-$root/build/tests/gen_trace}
mkdir "$WORK/job" && "$GEN" --ranks 2 --quiet --map "$root/tests/data/maps/h200-707dd6a3-a.json" \
	--map "$root/tests/data/maps/h200-2cf08462-a.json" "$WORK/job" &&
	"$NT" report --html "$WORK/job.html" "$WORK"/job/*.sqlite >/dev/null &&
	check job "$WORK/job.html" || { fail=$((fail + 1)); echo "FAIL job: no page"; }

echo "screenshots in $OUT"
echo "html: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
