#!/usr/bin/env bash
# Builds the Postgres image the stack and the integration tests use, without a
# registry when there is none:
#
#   1. the image already exists                -> nothing to do;
#   2. the public postgres:15-bookworm pulls   -> tag it;
#   3. otherwise                               -> debootstrap a Debian bookworm rootfs
#      from the mirror in this machine's apt configuration, import it as the base
#      image, and build Postgres 15 on it from Debian's packages (this directory's
#      Dockerfile and docker-entrypoint.sh, which behave like the official image).
#
# Environment: IMAGE (default cqrs-postgres:15), BASE_IMAGE (cqrs-debian:bookworm),
# UPSTREAM_IMAGE (postgres:15-bookworm), PULL_TIMEOUT seconds (20), DEBIAN_MIRROR
# (default: read from /etc/apt), SUITE (bookworm).
set -euo pipefail

IMAGE=${IMAGE:-cqrs-postgres:15}
BASE_IMAGE=${BASE_IMAGE:-cqrs-debian:bookworm}
UPSTREAM_IMAGE=${UPSTREAM_IMAGE:-postgres:15-bookworm}
PULL_TIMEOUT=${PULL_TIMEOUT:-20}
SUITE=${SUITE:-bookworm}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

log() { printf 'postgres-image: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# apt_uris prints the URIs of the apt sources that carry SUITE itself (not
# SUITE-updates or SUITE-security), from deb822 .sources files and one-line lists.
apt_uris() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		# deb822: stanzas separated by blank lines; keep URIs of stanzas whose
		# Types include deb and whose Suites include SUITE exactly.
		awk -v suite="$SUITE" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ")) {
					n = split(uris, u, " ")
					for (i = 1; i <= n; i++) print u[i]
				}
				uris = ""; suites = ""; types = ""
			}
			/^[[:space:]]*#/ { next }
			/^[[:space:]]*$/ { flush(); next }
			tolower($1) == "uris:"   { $1 = ""; uris = $0 }
			tolower($1) == "suites:" { $1 = ""; suites = $0 }
			tolower($1) == "types:"  { $1 = ""; types = $0 }
			END { flush() }
		' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		# deb [options] URI SUITE COMPONENTS...
		sed -E 's/\[[^]]*\]//' "$f" | awk -v suite="$SUITE" '$1 == "deb" && $3 == suite { print $2 }'
	done
}

mirror() {
	if [ -n "${DEBIAN_MIRROR:-}" ]; then
		echo "$DEBIAN_MIRROR"
		return
	fi
	local uri
	uri=$(apt_uris | grep -E '^(https?|ftp)://' | head -n 1 || true)
	[ -n "$uri" ] || die "no apt source for suite '$SUITE' in /etc/apt (sources.list or sources.list.d/*.sources); set DEBIAN_MIRROR"
	echo "${uri%/}"
}

# try_pull asks the registry for the image's manifest (quick to fail when there is
# no registry), and only then pulls, with a time-out fit for a slow link.
try_pull() {
	log "looking for $UPSTREAM_IMAGE in its registry (timeout ${PULL_TIMEOUT}s)"
	if timeout "$PULL_TIMEOUT" docker manifest inspect "$UPSTREAM_IMAGE" >/dev/null 2>&1 &&
		timeout 900 docker pull -q "$UPSTREAM_IMAGE" >/dev/null; then
		docker tag "$UPSTREAM_IMAGE" "$IMAGE"
		log "tagged $UPSTREAM_IMAGE as $IMAGE"
		return 0
	fi
	log "no registry reachable: building $IMAGE from Debian packages"
	return 1
}

ROOTFS=
cleanup() { [ -z "$ROOTFS" ] || rm -rf "$ROOTFS" "$ROOTFS.log"; }
trap cleanup EXIT

build_base() {
	local mirror=$1 rootfs
	command -v debootstrap >/dev/null || die "debootstrap not found: apt-get install debootstrap"
	[ "$(id -u)" = 0 ] || die "debootstrap needs root to build $BASE_IMAGE"
	rootfs=$(mktemp -d "${TMPDIR:-/tmp}/cqrs-rootfs.XXXXXX")
	ROOTFS=$rootfs
	local include=()
	# apt in the image needs CA certificates to use an https mirror.
	case $mirror in https:*) include=(--include=ca-certificates) ;; esac
	log "debootstrap --variant=minbase $SUITE from $mirror"
	debootstrap --variant=minbase "${include[@]}" "$SUITE" "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
		tail -n 30 "$rootfs.log" >&2
		die "debootstrap failed (log above)"
	}
	# Like Debian's slim images: no docs, man pages or translations in later installs.
	cat >"$rootfs/etc/dpkg/dpkg.cfg.d/cqrs-slim" <<-'DPKG'
		path-exclude /usr/share/doc/*
		path-include /usr/share/doc/*/copyright
		path-exclude /usr/share/man/*
		path-exclude /usr/share/info/*
		path-exclude /usr/share/locale/*
		path-exclude /usr/share/lintian/*
	DPKG
	printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/90cqrs-no-recommends"
	find "$rootfs/usr/share/doc" -type f ! -name copyright -delete
	rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
		"$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
		"$rootfs"/var/log/*.log "$rootfs"/var/log/apt/* "$rootfs"/tmp/*
	log "importing rootfs as $BASE_IMAGE"
	tar --numeric-owner -C "$rootfs" -c . | docker import \
		-c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		-c 'CMD ["bash"]' -c 'LABEL org.cqrs-spice.image=debian' - "$BASE_IMAGE" >/dev/null
}

build_image() {
	local mirror=$1 args=()
	# Pass a proxy through if this machine uses one.
	local v
	for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
		[ -n "${!v:-}" ] && args+=(--build-arg "$v=${!v}")
	done
	log "docker build $IMAGE FROM $BASE_IMAGE"
	# Host network: the build only needs the apt mirror, and the bridge may have no
	# route out on locked-down hosts. The legacy builder: BuildKit wants a registry.
	local out
	out=$(mktemp)
	DOCKER_BUILDKIT=0 docker build --network host \
		--build-arg "BASE_IMAGE=$BASE_IMAGE" \
		--build-arg "DEBIAN_MIRROR=$mirror" \
		--build-arg "SUITE=$SUITE" \
		"${args[@]}" -t "$IMAGE" "$HERE" >"$out" 2>&1 || {
		tail -n 40 "$out" >&2
		rm -f "$out"
		die "docker build of $IMAGE failed (output above)"
	}
	rm -f "$out"
}

main() {
	command -v docker >/dev/null || die "docker not found"
	if have_image "$IMAGE"; then
		log "$IMAGE is present"
		return
	fi
	local start=$SECONDS
	if ! try_pull; then
		local m
		m=$(mirror)
		have_image "$BASE_IMAGE" || build_base "$m"
		build_image "$m"
	fi
	log "$IMAGE ready in $((SECONDS - start))s"
}

main "$@"
