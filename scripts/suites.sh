# Sourced, not run: the Debian suites taskscope supports, and what differs
# between them. Every script that needs to know a suite (install-deps.sh,
# the build roots, the guest images, the package's version) asks here, so
# a new suite is one entry in each table below.
#
#   bookworm  Debian 12 (oldstable): systemd 252, sdbus-c++ 1.2, g++ 12
#   trixie    Debian 13 (stable):    systemd 257, sdbus-c++ 2.1, g++ 14

taskscope_suites=(bookworm trixie)

# suite_number SUITE: Debian's release number (the package version's ~debNuM).
suite_number() {
	case "$1" in
	bookworm) echo 12 ;;
	trixie) echo 13 ;;
	*) return 1 ;;
	esac
}

# suite_of_host: the suite this machine runs, from /etc/os-release; empty
# when it is not Debian or not a suite named above.
suite_of_host() {
	local id="" codename=""
	[ -r /etc/os-release ] || return 0
	id=$(. /etc/os-release && echo "${ID:-}")
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ "$id" = debian ] || return 0
	suite_number "$codename" >/dev/null 2>&1 && echo "$codename"
	return 0
}

# suite_require SUITE WHO: stops with a message naming the supported suites.
suite_require() {
	if ! suite_number "$1" >/dev/null 2>&1; then
		echo "$2: this is not a supported Debian suite ('${1:-unknown}'; $(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-no /etc/os-release}"))." >&2
		echo "$2: supported: Debian 12 (bookworm) and Debian 13 (trixie); nothing was installed." >&2
		exit 1
	fi
}

# The build's packages. Their names are the same in both suites (the -dev
# packages pull each suite's own library versions: sdbus-c++ 1.2 or 2.1).
suite_build_deps=(
	build-essential cmake ninja-build pkg-config git
	libsdbus-c++-dev libsdbus-c++-bin libsystemd-dev
	nlohmann-json3-dev libspdlog-dev libfmt-dev libboost-test-dev
	musl-tools
	libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libmsgpack-cxx-dev
)
# The go-plugin tier (tests/goplugin): HashiCorp's go-plugin client and the
# Go code generated from the driver's .proto files, built in GOPATH mode
# from Debian's Go sources (/usr/share/gocode), no network. protobuf 1.5
# (on the v2 API, which protoc-gen-go's code needs) instead of the 1.3
# that golang-google-grpc-dev would otherwise pull in.
suite_goplugin_deps=(
	golang-go golang-github-hashicorp-go-plugin-dev golang-google-grpc-dev
	golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev protoc-gen-go protoc-gen-go-grpc
	golang-github-zclconf-go-cty-dev golang-github-hashicorp-hcl-v2-dev
)
# The bus tier: its own dbus-daemon, busctl (systemd's, no PID 1 needed),
# jq and ss in its scripts; the README's API reference is generated from
# the interface XML with xsltproc (a unit-tier check).
suite_bus_deps=(dbus xsltproc systemd jq iproute2)
# The package build (dpkg-buildpackage, lintian).
suite_package_deps=(debhelper dpkg-dev lintian fakeroot)

# suite_mirrors SUITE: mmdebstrap's source lines for SUITE, one a line,
# from the mirrors this host's own apt names (Debian's, never written here).
suite_mirrors() {
	local suite=$1 main_uri="" sec_uri="" f uris suites u
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		while IFS='|' read -r uris suites; do
			for u in $uris; do
				case " $suites " in
				*-security*) [ -n "$sec_uri" ] || sec_uri=$u ;;
				*) [ -n "$main_uri" ] || main_uri=$u ;;
				esac
			done
		done < <(awk 'BEGIN{RS="";FS="\n"} {u="";s="";for(i=1;i<=NF;i++){if($i~/^URIs:/){sub(/^URIs:[ \t]*/,"",$i);u=$i} if($i~/^Suites:/){sub(/^Suites:[ \t]*/,"",$i);s=$i}} if(u!="") print u "|" s}' "$f")
	done
	if [ -z "$main_uri" ] && [ -f /etc/apt/sources.list ]; then
		# One-line entries, with or without "[option=value ...]" after "deb".
		local plain
		plain=$(sed -E 's/^deb[[:space:]]+\[[^]]*\]/deb/' /etc/apt/sources.list)
		main_uri=$(awk '$1=="deb" && $3 !~ /security/ {print $2; exit}' <<<"$plain")
		sec_uri=$(awk '$1=="deb" && $3 ~ /security/ {print $2; exit}' <<<"$plain")
	fi
	[ -n "$main_uri" ] || return 1
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	echo "deb [signed-by=$keyring] $main_uri $suite main"
	echo "deb [signed-by=$keyring] $main_uri $suite-updates main"
	[ -z "$sec_uri" ] || echo "deb [signed-by=$keyring] $sec_uri $suite-security main"
}

# suite_unitdir SUITE: where the suite's packages put systemd units. Debian
# 12 keeps /lib/systemd/system (the /usr-merge moratorium: its lintian
# flags units under /usr/lib); Debian 13 moved them to /usr/lib/systemd/system
# (debhelper 13.24's dh_installsystemd, and lintian flags /lib there).
suite_unitdir() {
	case "$1" in
	bookworm) echo /lib/systemd/system ;;
	*) echo /usr/lib/systemd/system ;;
	esac
}
