#!/bin/sh
# 2026-12-03, entry-only block tracing (issue 31): one device call with the
# build carried (build/: nucatrace, libnucatrace.so, tests/gpu programs,
# validate, the host's libsqlite3 and libelf in build/devlibs).
#   sh docs/results/2026-12-03-entry-site/run.sh STEP...   (tests/gpu/entry.sh's steps)
# Everything but the traces comes back in $OUT/entry.tgz; the traces kept as
# test data, trimmed and compressed, beside it.
RO=${OUT:-/tmp/out}
W=/tmp/E
rm -rf $W && mkdir -p $W
trap 'tar czf $RO/entry.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="*.bin" --exclude="store.db*" -C /tmp E' EXIT
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
make -s sitecost >$W/make-sitecost.log 2>&1 || { echo "make sitecost failed"; tail $W/make-sitecost.log; }
sh tests/gpu/entry.sh $W "$@"
for d in torch-entry torch-full; do
	for f in $W/$d/*.sqlite; do
		[ -e "$f" ] && python3 tests/gpu/trim_trace.py "$f" "$RO/$d.sqlite.xz" 1 >/dev/null 2>&1 &&
			ls -la "$RO/$d.sqlite.xz"
	done
done
for f in $W/val-chase-entry/*.sqlite; do
	[ -e "$f" ] && xz -9c "$f" >"$RO/val-chase-entry.sqlite.xz"
done
