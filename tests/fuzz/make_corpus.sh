#!/bin/sh
# The seed corpora of tests/fuzz/corpus/<harness>/ (docs/fuzzing.md), made
# from tests/data: small traces (SQLite pages of 512 bytes, so that a
# mutation lands in a page that matters), maps in JSON and CSV, sampling
# policies and file name patterns.  usage: tests/fuzz/make_corpus.sh
# [NUCATRACE]  (default build/nucatrace: the CSV maps are its exports)
set -eu
cd "$(dirname "$0")/../.."
nt=${1:-build/nucatrace}
c=tests/fuzz/corpus
rm -rf "$c"
mkdir -p "$c/trace_report" "$c/map_json" "$c/map_csv" "$c/sampling" "$c/trace_name"

small() {	# small NAME SQL: tests/data/bad/ok.sqlite changed by SQL
	cp tests/data/bad/ok.sqlite "$c/trace_report/$1.sqlite"
	sqlite3 "$c/trace_report/$1.sqlite" "$2; PRAGMA page_size = 512; VACUUM;"
}
small ok "UPDATE meta SET value = value WHERE 0"
small no-map "DELETE FROM maps"
small kernels-mode "UPDATE launches SET traced = 0; DELETE FROM blocks; UPDATE meta SET value = 'kernels' WHERE key = 'backend'"
small two-kernels "INSERT INTO kernels VALUES(2, '_Z4gemmv', NULL, 0, 32, 0, 0, 0, NULL); UPDATE launches SET kernel = 2, grid_x = 16 WHERE launch = 3; DELETE FROM blocks WHERE launch = 3 AND block >= 16"
for f in hostile-names block-sm-huge; do
	cp "tests/data/bad/$f.sqlite" "$c/trace_report/$f.sqlite"
	sqlite3 "$c/trace_report/$f.sqlite" "PRAGMA page_size = 512; VACUUM;"
done

cp tests/data/bad/map-other-sms.json "$c/map_json/8-sms.json"
cp tests/data/maps/h200-c9b1521b-quick.json "$c/map_json/h200-quick.json"
python3 - "$c/map_json/parts.json" <<'PY'
import json, sys
doc = json.load(open("tests/data/bad/map-other-sms.json"))
n, lines = 4, 3
doc["gpu"]["sm_count"] = n
doc["chain"] = [280.5, None, 290.25, 284.0]
doc["noise"] = [0.01, None, 0.02, 0.015]
doc["lines"] = {"offset": [0, 128, 4096],
                "latency": [[250 + s + 3 * l for l in range(lines)] for s in range(n)]}
doc["first_touch"] = {"first": [[290 + 170 * ((s + l) % 2) for l in range(lines)] for s in range(n)],
                      "repeat": [[276 + 30 * ((s + l) % 2) for l in range(lines)] for s in range(n)]}
json.dump(doc, open(sys.argv[1], "w"), separators=(",", ":"))
PY
for f in "$c"/map_json/*.json; do
	"$nt" map export --format csv --output "$c/map_csv/$(basename "$f" .json).csv" "$f"
done

printf 'all' >"$c/sampling/all"
printf 'all,window=1000,skip=1000,blocks=1000000,budget=1' >"$c/sampling/default"
printf 'all,window=100,blocks=900,budget=5' >"$c/sampling/blocks"
printf 'first=8,every=1000' >"$c/sampling/per-kernel"
printf 'window=3,skip=2,idle=5,budget=12.5,max=9' >"$c/sampling/windows"
printf ' match=*gemm* , max=100' >"$c/sampling/match"
printf 'none' >"$c/sampling/none"
printf 'first=2,match=_Z*,match=*chase*' >"$c/sampling/two-globs"

# trace_name: the first byte is the largest buffer tried, the rest the pattern
printf '\100nucatrace-%%h-%%p%%r.sqlite' >"$c/trace_name/default"
printf '\040%%t/%%%%x-%%p' >"$c/trace_name/escapes"
printf '\010a%%' >"$c/trace_name/lone-percent"
