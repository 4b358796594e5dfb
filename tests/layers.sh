#!/bin/sh
# layers.sh — the layering rules of doc/architecture.md, checked on the
# sources: each folder includes only the headers of its own layer and of
# the layers below it, and above recordio/ and loader/ only their public
# headers (recordio.h, loader.h):
#   lib       (internal helpers)         lib
#   recordio  (the format; remote/: S3)  lib recordio (and recordio/remote)
#   loader    (reading for training)     lib recordio (and recordio/remote) loader
#   tools     (recordio-* commands)      lib, recordio.h, loader.h, tools
#   trainer   (recordio-train)           lib, recordio.h, loader.h, trainer
#   python/src (the extension)           recordio.h, loader.h, python/src
#   bench     (measuring programs)       lib, recordio.h, loader.h, tools
#   examples  (what a user writes)       recordio.h, loader.h
# A header is known by the folder that holds it (their names are unique
# over these folders: also checked). Every line that breaks a rule is
# printed as FILE:LINE: the include, the layer it reaches; exit 1 if any.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
dirs="lib recordio recordio/remote loader tools trainer python/src bench examples"

# the folder of each header name
owners=$(for d in $dirs; do
	for h in "$d"/*.h; do
		if [ -f "$h" ]; then echo "$(basename "$h") $d"; fi
	done
done)
dups=$(echo "$owners" | awk '{print $1}' | sort | uniq -d)
if [ -n "$dups" ]; then
	echo "layers.sh: header names in more than one folder (ambiguous): $dups"
	exit 1
fi

# allowed DIR: the folders and public headers DIR may include
allowed() {
	case $1 in
	lib) echo "lib" ;;
	recordio | recordio/remote) echo "lib recordio recordio/remote" ;;
	loader) echo "lib recordio recordio/remote loader" ;;
	tools) echo "lib recordio.h loader.h tools" ;;
	trainer) echo "lib recordio.h loader.h trainer" ;;
	python/src) echo "recordio.h loader.h python/src" ;;
	bench) echo "lib recordio.h loader.h tools" ;;
	examples) echo "recordio.h loader.h" ;;
	esac
}

bad=0 checked=0
for d in $dirs; do
	ok=$(allowed "$d")
	for f in "$d"/*.c "$d"/*.h "$d"/*.cu; do
		[ -f "$f" ] || continue
		out=$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
			sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1 \2/' |
			while read -r line name; do
				owner=$(echo "$owners" | awk -v h="$(basename "$name")" '$1 == h {print $2}')
				# config.h (the build's), and headers of no folder here
				[ -n "$owner" ] || continue
				fine=0
				for a in $ok; do
					if [ "$a" = "$owner" ] || [ "$a" = "$(basename "$name")" ]; then fine=1; fi
				done
				[ $fine -eq 1 ] || echo "$f:$line: #include \"$name\" reaches $owner/"
			done)
		checked=$((checked + 1))
		if [ -n "$out" ]; then
			echo "$out"
			bad=$((bad + $(echo "$out" | wc -l)))
		fi
	done
done
echo "layers.sh: $checked files checked, $bad include(s) against the layering"
[ $bad -eq 0 ]
