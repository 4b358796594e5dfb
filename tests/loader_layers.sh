#!/bin/sh
# loader_layers.sh — no circles between the loader's files (issue 27): a
# file that uses another (calls a function it defines, or names it, as a
# thread's start) must not be used by it, directly or through others; and
# no header includes itself through others. Checked on the sources:
#   - functions: every rio_/rio__ name defined at the start of a line in a
#     loader/*.c file (not static), and the files whose code names it;
#   - includes: #include "x.h" between loader/*.h.
# A circle is printed as "loader_layers.sh: a circle: a.c -> b.c -> a.c";
# exit 1 if any. Each run first checks that it finds the circles of two
# made-up pairs of files (--self-test); --dir DIR checks DIR's files.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$top/loader
if [ "${1:-}" = --self-test ]; then
	# two files that call each other, and two headers that include each
	# other: both circles must be found
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	printf 'int rio__a(void)\n{\n\treturn rio__b();\n}\n' >"$dir/a.c"
	printf 'int rio__b(void)\n{\n\treturn rio__a();\n}\n' >"$dir/b.c"
	printf '#include "y.h"\n' >"$dir/x.h"
	printf '#include "x.h"\n' >"$dir/y.h"
	if out=$("$0" --dir "$dir"); then
		echo "loader_layers.sh: the self-test's circles were not found: $out"
		exit 1
	fi
	case $out in
	*"a.c -> b.c -> a.c"*"x.h -> y.h -> x.h"* | *"b.c -> a.c -> b.c"*"x.h -> y.h -> x.h"* | \
		*"a.c -> b.c -> a.c"*"y.h -> x.h -> y.h"* | *"b.c -> a.c -> b.c"*"y.h -> x.h -> y.h"*)
		echo "loader_layers.sh: self-test: both circles found" ;;
	*)
		echo "loader_layers.sh: self-test: wrong report: $out"
		exit 1 ;;
	esac
	exit 0
fi
if [ "${1:-}" = --dir ]; then
	dir=$2
else
	"$0" --self-test # the check finds circles where there are some
fi
cd "$dir"

# edges "FROM TO", one a line: between .c files by the functions they use,
# between .h files by their includes
edges=$(
	# comments and strings out, then the definitions and the names used
	for f in *.c; do
		sed -e 's://.*$::' -e 's:"[^"]*"::g' "$f" |
			awk -v f="$f" '
			BEGIN { c = 0 }
			{
				line = $0
				# block comments
				out = ""
				while (line != "") {
					if (c) {
						i = index(line, "*/")
						if (!i) { line = ""; break }
						line = substr(line, i + 2); c = 0
					} else {
						i = index(line, "/*")
						if (!i) { out = out line; line = ""; break }
						out = out substr(line, 1, i - 1); line = substr(line, i + 2); c = 1
					}
				}
				if (out ~ /^[A-Za-z_]/ && out !~ /^static/ && out !~ /;[ \t]*$/ &&
				    match(out, /rio_[A-Za-z0-9_]*\(/))
					print "def", substr(out, RSTART, RLENGTH - 1), f
				s = out
				while (match(s, /rio_[A-Za-z0-9_]*/)) {
					print "use", substr(s, RSTART, RLENGTH), f
					s = substr(s, RSTART + RLENGTH)
				}
			}'
	done | awk '
		$1 == "def" { where[$2] = $3 }
		$1 == "use" { n++; un[n] = $2; uf[n] = $3 }
		END {
			for (i = 1; i <= n; i++)
				if ((un[i] in where) && where[un[i]] != uf[i])
					print uf[i], where[un[i]]
		}' | sort -u
	for h in *.h; do
		[ -f "$h" ] || continue
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$h" |
			while read -r inc; do
				if [ -f "$inc" ]; then echo "$h $inc"; fi
			done
	done
)

# a depth-first search from every file: a file met again on the path is a
# circle (each printed from the file where the search met it again)
report=$(echo "$edges" | awk '
	NF == 2 { out[$1] = out[$1] " " $2; node[$1] = 1; node[$2] = 1 }
	function dfs(v, depth,    k, m, w, i, j, p) {
		onpath[v] = depth
		stack[depth] = v
		m = split(out[v], k, " ")
		for (i = 1; i <= m; i++) {
			w = k[i]
			if (w in onpath) {
				p = w
				for (j = onpath[w] + 1; j <= depth; j++)
					p = p " -> " stack[j]
				print p " -> " w
			} else if (!(w in done))
				dfs(w, depth + 1)
		}
		delete onpath[v]
		done[v] = 1
	}
	END {
		for (v in node)
			if (!(v in done))
				dfs(v, 0)
	}' | sort)
files=$(ls *.c *.h 2>/dev/null | wc -l)
if [ -n "$report" ]; then
	echo "$report" | sed 's/^/loader_layers.sh: a circle: /'
	echo "loader_layers.sh: $files files checked: the circles above"
	exit 1
fi
echo "loader_layers.sh: $files files checked, no circles"
