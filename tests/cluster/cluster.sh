#!/bin/sh
# cluster.sh — N "hosts" on one machine for multi-host MPI tests: each host
# is a network namespace with its own veth on a bridge, its own address, its
# own hostname and its own TMPDIR, and mpirun reaches it through an rsh agent
# that enters the namespace instead of logging in. Needs root (ip netns).
#
#   cluster.sh up DIR N         make N hosts; DIR (created) holds the state:
#                               DIR/hostfile (N hosts, 1 slot each),
#                               DIR/netns-rsh (the agent), DIR/mpirun (mpirun
#                               with the MCA options that keep it on the
#                               bridge), DIR/env (names, sourceable).
#                               Exit 77 when namespaces cannot be made.
#   cluster.sh hostfile DIR FILE HOSTS SLOTS
#                               write FILE: the first HOSTS hosts, SLOTS each
#   cluster.sh shape DIR RATE [BURST]
#                               tc tbf on both ends of every host's link
#                               (e.g. 1gbit 128kb); RATE "none" removes it
#   cluster.sh pids DIR I       the processes running in host I (1..N)
#   cluster.sh down DIR         kill what still runs in the hosts, delete
#                               them and the bridge, remove DIR
#
# Every run claims a free tag K (0..199, tried from $$ on): bridge rioKbr,
# namespaces rioKhI, veths rioKvI, subnet 10.232.K.0/24, hosts 10.232.K.(10+I).
# Creating the bridge is the claim, so two runs at once (make -j2 check and
# a bench) never share a name or a subnet. Use it as
#   C=$(mktemp -d); trap 'tests/cluster/cluster.sh down "$C"' EXIT
#   tests/cluster/cluster.sh up "$C" 4 || exit $?
#   "$C/mpirun" -np 4 --hostfile "$C/hostfile" recordio-train ... --threads 1
# What each MCA option is for: doc "Across hosts" in README.md.
set -u

die() { echo "cluster.sh: $*" >&2; exit 1; }
skip() { echo "cluster.sh: SKIP: $*" >&2; exit 77; }

load() {
	[ -f "$1/env" ] || die "$1: no cluster here (no $1/env)"
	. "$1/env"
}

up() {
	dir=$1 n=$2
	case "$n" in '' | *[!0-9]*) die "up: '$n' is not a number of hosts" ;; esac
	[ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "up: $n hosts: want 1 to 64"
	command -v ip >/dev/null 2>&1 || skip "no ip(8)"
	command -v unshare >/dev/null 2>&1 || skip "no unshare(1)"
	[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
	mkdir -p "$dir" || die "up: cannot make $dir"
	dir=$(cd "$dir" && pwd)
	# claim a tag: the first K from $$ on whose bridge can be created
	k=$(($$ % 200)) tries=0 tag=""
	while [ $tries -lt 200 ]; do
		if ! ip -4 addr show | grep -q " 10\.232\.$k\." &&
			ip link add "rio${k}br" type bridge 2>/dev/null; then
			tag=$k
			break
		fi
		k=$(((k + 1) % 200)) tries=$((tries + 1))
	done
	if [ -z "$tag" ]; then
		ip link add rioprobebr$$ type bridge 2>/dev/null || skip "cannot create a bridge"
		ip link del rioprobebr$$
		die "up: no free tag among 200 (stale rio*br bridges? ip link show type bridge)"
	fi
	net="10.232.$tag"
	{
		echo "CLUSTER_DIR='$dir'"
		echo "CLUSTER_N=$n"
		echo "CLUSTER_TAG=$tag"
		echo "CLUSTER_BRIDGE=rio${tag}br"
		echo "CLUSTER_NET=$net.0/24"
	} >"$dir/env"
	ip addr add "$net.1/24" dev "rio${tag}br" && ip link set "rio${tag}br" up ||
		{ down "$dir"; skip "cannot configure a bridge"; }
	: >"$dir/hostfile"
	# the agent: "host command..." -> the command inside that host's namespace
	{
		echo '#!/bin/sh'
		echo "# mpirun's rsh agent for the hosts of $dir (made by cluster.sh)"
		echo 'host=$1; shift'
		echo 'case "$host" in'
	} >"$dir/netns-rsh"
	i=1
	while [ "$i" -le "$n" ]; do
		ns="rio${tag}h$i" ip="$net.$((10 + i))"
		if ! why=$(ip netns add "$ns" 2>&1); then
			down "$dir"
			case "$why" in
			*[Ee]xists*) die "up: namespace $ns is left from an earlier run: ip netns del $ns" ;;
			esac
			skip "cannot create a network namespace ($why)"
		fi
		echo "$ns" >>"$dir/namespaces"
		ip link add "rio${tag}v$i" type veth peer name eth0 netns "$ns" &&
			ip link set "rio${tag}v$i" master "rio${tag}br" &&
			ip link set "rio${tag}v$i" up &&
			ip -n "$ns" addr add "$ip/24" dev eth0 &&
			ip -n "$ns" link set eth0 up &&
			ip -n "$ns" link set lo up ||
			{ down "$dir"; die "up: cannot wire host $i ($ns)"; }
		mkdir -p "$dir/tmp-$ns"
		echo "$ip slots=1" >>"$dir/hostfile"
		echo "$ip" >>"$dir/addresses"
		echo "$ip | $ns) ns=$ns ;;" >>"$dir/netns-rsh"
		i=$((i + 1))
	done
	cat >>"$dir/netns-rsh" <<EOF
*) echo "netns-rsh: unknown host '\$host'" >&2; exit 255 ;;
esac
# its own hostname (unshare --uts) and TMPDIR: Open MPI's daemons on one
# machine hostname share session directories, and a launch then hangs now
# and then waiting for a daemon that never called back
exec ip netns exec "\$ns" unshare --uts /bin/sh -c "hostname \$ns; export TMPDIR=$dir/tmp-\$ns; \$*"
EOF
	cat >"$dir/mpirun" <<EOF
#!/bin/sh
# mpirun across the hosts of $dir (made by cluster.sh); add --hostfile
export PMIX_MCA_gds=hash OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset OMPI_MCA_btl OMPI_MCA_btl_vader_single_copy_mechanism
exec mpirun --mca plm_rsh_agent $dir/netns-rsh --mca plm_rsh_no_tree_spawn 1 \\
	--mca oob_tcp_if_include $net.0/24 --mca pml ob1 --mca btl tcp,self \\
	--mca btl_tcp_if_include $net.0/24 --mca mpi_yield_when_idle 1 "\$@"
EOF
	chmod +x "$dir/netns-rsh" "$dir/mpirun"
}

hostfile() {
	load "$1"
	[ "$3" -le "$CLUSTER_N" ] || die "hostfile: $3 hosts, the cluster has $CLUSTER_N"
	head -n "$3" "$1/addresses" | sed "s/\$/ slots=$4/" >"$2"
}

shape() {
	load "$1"
	rate=$2 burst=${3:-128kb}
	i=1
	while [ "$i" -le "$CLUSTER_N" ]; do
		ns="rio${CLUSTER_TAG}h$i" veth="rio${CLUSTER_TAG}v$i"
		tc qdisc del dev "$veth" root 2>/dev/null
		tc -n "$ns" qdisc del dev eth0 root 2>/dev/null
		if [ "$rate" != none ]; then
			tc qdisc add dev "$veth" root tbf rate "$rate" burst "$burst" latency 50ms &&
				tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst "$burst" \
					latency 50ms || die "shape: tc tbf $rate burst $burst on host $i failed"
		fi
		i=$((i + 1))
	done
}

pids() {
	load "$1"
	ip netns pids "rio${CLUSTER_TAG}h$2"
}

down() {
	dir=$1
	[ -f "$dir/env" ] || { rm -rf "$dir"; return 0; }
	. "$dir/env"
	if [ -f "$dir/namespaces" ]; then
		for ns in $(cat "$dir/namespaces"); do
			p=$(ip netns pids "$ns" 2>/dev/null)
			[ -n "$p" ] && kill -9 $p 2>/dev/null
			ip netns del "$ns" 2>/dev/null
		done
	fi
	i=1
	while [ "$i" -le "$CLUSTER_N" ]; do
		ip link del "rio${CLUSTER_TAG}v$i" 2>/dev/null
		i=$((i + 1))
	done
	ip link del "$CLUSTER_BRIDGE" 2>/dev/null
	rm -rf "$dir"
	return 0
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
up) [ $# -eq 2 ] || die "usage: cluster.sh up DIR N"; up "$@" ;;
hostfile) [ $# -eq 4 ] || die "usage: cluster.sh hostfile DIR FILE HOSTS SLOTS"; hostfile "$@" ;;
shape) [ $# -ge 2 ] || die "usage: cluster.sh shape DIR RATE [BURST]"; shape "$@" ;;
pids) [ $# -eq 2 ] || die "usage: cluster.sh pids DIR I"; pids "$@" ;;
down) [ $# -eq 1 ] || die "usage: cluster.sh down DIR"; down "$1" ;;
*) die "usage: cluster.sh up|hostfile|shape|pids|down DIR ..." ;;
esac
