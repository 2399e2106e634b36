#!/usr/bin/env bash
# Checks the host before `make` builds or starts anything, so a newcomer's two
# commands (`make`, `make test`) need no third:
#
#   preflight.sh deps    installs what the build needs from Debian's packages when
#                        it runs as root with apt-get, else names the one command
#                        to run: ca-certificates (copied into our images),
#                        debootstrap (builds Postgres offline, only while its image
#                        is missing), a Compose tool and chromium (the headless
#                        browser of the live page's test).
#   preflight.sh ports   fails before anything starts when a host port the stack
#                        publishes is taken by something other than this project's
#                        own containers, naming the port, its holder and the
#                        variable that moves it.
#
# Environment: COMPOSE_PROJECT_NAME (cqrs), POSTGRES_IMAGE (cqrs-postgres:15), the
# port variables of docker-compose.yml.
set -euo pipefail

log() { printf 'preflight: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

deps() {
	command -v docker >/dev/null || die "docker not found: install Docker Engine (Debian: apt-get install docker.io)"
	docker info >/dev/null 2>&1 || die "the Docker daemon does not answer: start it (systemctl start docker, or dockerd &)"
	local need=()
	[ -r /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
	if ! docker image inspect "${POSTGRES_IMAGE:-cqrs-postgres:15}" >/dev/null 2>&1; then
		command -v debootstrap >/dev/null || need+=(debootstrap)
	fi
	if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
		need+=(docker-compose)
	fi
	command -v chromium >/dev/null || need+=(chromium)
	[ ${#need[@]} -gt 0 ] || return 0
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		die "missing ${need[*]}: run  sudo apt-get install -y ${need[*]}  (or your system's equivalent), then make again"
	fi
	log "installing ${need[*]} from Debian's packages"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || die "apt-get update failed: run  apt-get install -y ${need[*]}  by hand"
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
		die "apt-get install ${need[*]} failed (see above)"
}

# holder prints what listens on TCP port $1, as "name (pid N)", if ss can tell.
holder() {
	ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'users:(("[^"]*",pid=[0-9]*' | head -n 1 |
		sed -E 's/users:\(\("([^"]*)",pid=([0-9]*)/\1 (pid \2)/'
}

# listening reports whether anything accepts TCP connections on port $1.
listening() {
	if command -v ss >/dev/null; then
		[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
	else
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
	fi
}

ports() {
	local project=${COMPOSE_PROJECT_NAME:-cqrs} ours taken=0
	# Ports this project's running containers already publish are ours: `make` again
	# on a running stack is fine.
	ours=$(docker ps --filter "label=com.docker.compose.project=$project" --format '{{.Ports}}' 2>/dev/null || true)
	local spec var port
	for spec in API_PORT:9999 POSTGRES_PORT:5432 \
		ACCELERATED_HTTP_PORT:8090 ACCELERATED_FLIGHT_PORT:50051 ACCELERATED_METRICS_PORT:9090 \
		MATERIALIZED_HTTP_PORT:8091 MATERIALIZED_FLIGHT_PORT:50052 MATERIALIZED_METRICS_PORT:9091; do
		var=${spec%%:*}
		# Set but empty: a scaled runtime, on free ports (see the Makefile).
		[ "${!var+set}" = set ] && [ -z "${!var}" ] && continue
		port=${!var:-${spec#*:}}
		listening "$port" || continue
		grep -qE "(^|[ ,:])$port->" <<<"$ours" && continue
		local who
		who=$(holder "$port")
		log "error: port $port ($var) is already in use${who:+ by $who}: stop it, or move the stack's port, e.g.  make $var=$((port + 1))"
		taken=1
	done
	[ $taken = 0 ] || exit 1
}

case "${1:-}" in
deps) deps ;;
ports) ports ;;
*) die "usage: $0 deps|ports" ;;
esac
