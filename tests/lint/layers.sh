#!/bin/sh
# The layering rules, checked on the sources' #include lines:
#  - a file of core/<layer>/ includes headers of its own layer and of the
#    layers before it in $CORE_LAYERS (lowest first), never of a later one,
#    and nothing of a front end (calibrate/, reports/, interposer/, usage.h);
#  - a front end (calibrate/, reports/, interposer/) includes the core and
#    the top-level helpers, never another front end's headers.
# Usage: CORE_LAYERS="util map ..." tests/lint/layers.sh
set -u
cd "$(dirname "$0")/../.."
layers=${CORE_LAYERS:?set CORE_LAYERS, lowest layer first}
bad=0
rank() {	# rank LAYER: its place in $layers, or nothing
	i=0
	for l in $layers; do
		i=$((i + 1))
		[ "$l" = "$1" ] && { echo $i; return; }
	done
}
for dir in core/*/; do
	l=$(basename "$dir")
	r=$(rank "$l")
	[ -n "$r" ] || { echo "layers: $dir is not in CORE_LAYERS"; bad=1; continue; }
	for f in "$dir"*.[ch] "$dir"*.def; do
		[ -e "$f" ] || continue
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			case "$inc" in
			*/*) il=${inc%%/*} ;;
			*) echo "layers: $f includes \"$inc\" without its layer"; bad=1; continue ;;
			esac
			case "$il" in kernels | include) continue ;; esac
			ir=$(rank "$il")
			if [ -z "$ir" ]; then
				echo "layers: $f (core/$l) includes \"$inc\", outside the core"; bad=1
			elif [ "$ir" -gt "$r" ]; then
				echo "layers: $f (core/$l) includes \"$inc\" of the higher layer core/$il"; bad=1
			fi
		done
	done
done
for fe in calibrate reports interposer; do
	for f in "$fe"/*.[ch]; do
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			case "$inc" in
			*/*) il=${inc%%/*} ;;
			*) [ -e "$fe/$inc" ] || [ -e "$inc" ] ||
				{ echo "layers: $f includes \"$inc\", not in $fe/ or at the top"; bad=1; }
			   continue ;;
			esac
			case "$il" in
			calibrate | reports | interposer)
				[ "$il" = "$fe" ] ||
					{ echo "layers: $f includes \"$inc\" of the front end $il/"; bad=1; } ;;
			esac
		done
	done
done
[ $bad -eq 0 ] && echo "layers: ok ($layers)"
exit $bad
