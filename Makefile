# The recipe's two commands: `make` builds the binaries and images and starts the
# stack; `make test` runs the tests. `make help` lists every target with the
# description after its `##`. Images come from our own binaries (FROM scratch) and
# Postgres from Debian packages when no registry can be reached
# (docker/postgres/build.sh); the first build downloads Go modules.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := up

GO ?= go
# Every compose command of this project, also when run from tests, uses one name.
export COMPOSE_PROJECT_NAME ?= cqrs
# `docker compose` (v2) where it works, else docker-compose (v1, 1.27 or later).
ifndef COMPOSE
COMPOSE := $(shell if docker compose version >/dev/null 2>&1; then echo docker compose; else echo docker-compose; fi)
endif

# The release, from VERSION: the binaries report it (--version, their start log
# line) and the default images are tagged with it as well as :latest. An image
# name given from outside (RUNTIME_IMAGE=cqrs-runtime:mine) is the only tag made.
VERSION := $(shell cat VERSION 2>/dev/null || echo dev)
VERSION_LDFLAGS := -X github.com/cqrs-spice/cqrs/internal/version.Version=$(VERSION)
export POSTGRES_IMAGE ?= cqrs-postgres:15
export RUNTIME_IMAGE ?= cqrs-runtime:latest
export API_IMAGE ?= cqrs-api:latest
# version_tag NAME: NAME's :$(VERSION) twin when NAME is the default :latest image, else nothing.
version_tag = $(if $(filter cqrs-$(1):latest,$($(2))),cqrs-$(1):$(VERSION))
RUNTIME_VERSION_IMAGE := $(call version_tag,runtime,RUNTIME_IMAGE)
API_VERSION_IMAGE := $(call version_tag,api,API_IMAGE)
POSTGRES_BASE_IMAGE ?= cqrs-debian:bookworm
# The legacy builder: it builds FROM scratch without asking a registry anything.
export DOCKER_BUILDKIT ?= 0

# The runtime links DuckDB through cgo; a fully static binary runs FROM scratch.
# netgo and osusergo keep Go's resolver and user lookup off glibc's dlopen paths.
RUNTIME_TAGS ?= duckdb_arrow netgo osusergo
RUNTIME_LDFLAGS ?= -s -w -linkmode external -extldflags "-static" $(VERSION_LDFLAGS)
TEST_TAGS ?= duckdb_arrow
# Replicas of each runtime service (make up ... MATERIALIZED_REPLICAS=3). A service
# of one replica publishes its fixed host ports (ACCELERATED_HTTP_PORT 8090 ...); a
# scaled one publishes each replica's ports on free loopback ports instead
# (`make endpoints` lists them): docker-compose.yml publishes fixed ports only
# for the variables that are set and not empty.
ACCELERATED_REPLICAS ?= 1
MATERIALIZED_REPLICAS ?= 1
ifeq ($(ACCELERATED_REPLICAS),1)
export ACCELERATED_HTTP_PORT ?= 8090
export ACCELERATED_FLIGHT_PORT ?= 50051
export ACCELERATED_METRICS_PORT ?= 9090
else
export ACCELERATED_HTTP_PORT :=
export ACCELERATED_FLIGHT_PORT :=
export ACCELERATED_METRICS_PORT :=
endif
ifeq ($(MATERIALIZED_REPLICAS),1)
export MATERIALIZED_HTTP_PORT ?= 8091
export MATERIALIZED_FLIGHT_PORT ?= 50052
export MATERIALIZED_METRICS_PORT ?= 9091
else
export MATERIALIZED_HTTP_PORT :=
export MATERIALIZED_FLIGHT_PORT :=
export MATERIALIZED_METRICS_PORT :=
endif
SCALE = --scale accelerated=$(ACCELERATED_REPLICAS) --scale materialized=$(MATERIALIZED_REPLICAS)

# TLS=1: every hop of the stack speaks TLS (docker-compose.tls.yml over
# docker-compose.yml, the spicepods of spicepods/tls/), with the local CA and
# certificates of certs/, which `make certs` makes once (cmd/devcerts). COMPOSE_FILE
# carries the overlay to every compose command, so give TLS=1 to each make command
# of a stack started with it (up, wait, endpoints, scale, down, logs, bench*).
# docs/operations.md, TLS.
TLS ?= 0
# Where the certificates are (docker-compose.tls.yml mounts it at /certs).
export TLS_CERTS_DIR ?= certs
CERTS_DIR := $(TLS_CERTS_DIR)
CA_FILE := $(abspath $(CERTS_DIR))/ca.pem
ifeq ($(TLS),1)
export COMPOSE_FILE := docker-compose.yml:docker-compose.tls.yml
export COMPOSE_PATH_SEPARATOR := :
UP_CERTS := certs
RUNTIME_SCHEME := https
FLIGHT_SCHEME := grpc+tls
PG_SSL := sslmode=verify-full&sslrootcert=$(CA_FILE)
# cmd/bench trusts the local CA for the runtimes' https ports (Go reads
# SSL_CERT_FILE; given to the binary only, not to the go command's downloads).
BENCH_RUN := -exec 'env SSL_CERT_FILE=$(CA_FILE)'
SPICEPODS := /spicepods/tls
else ifeq ($(TLS),0)
UP_CERTS :=
RUNTIME_SCHEME := http
FLIGHT_SCHEME := grpc
PG_SSL := sslmode=disable
BENCH_RUN :=
SPICEPODS := /spicepods
else
$(error TLS=$(TLS): want TLS=1 (TLS on every hop) or TLS=0 (plain, the default))
endif
# plain_only NAME: fail a target that works only on the plain stack when TLS=1.
plain_only = $(if $(filter 1,$(TLS)),@echo "error: make $(1) runs only on the plain stack (TLS=0): it starts stacks or compose files of its own that speak plain TCP"; exit 1)

# Seconds `make up` waits for every service to be healthy.
WAIT_TIMEOUT ?= 300
SERVICES := postgres accelerated materialized api
# The runtimes' API keys and Postgres's password, random, made on first use and
# never overwritten; docker-compose.yml passes them to the services (env_file).
# Git ignores it.
SECRETS_FILE := secrets.env
SECRET_VARS := ACCELERATED_API_KEY MATERIALIZED_API_KEY POSTGRES_PASSWORD

.PHONY: help version up secrets certs deps ports k8s-secrets build images postgres-image runtime-image api-image image-context \
	wait endpoints down clean logs test test-unit docs screenshot fuzz bench bench-quick bench-scale bench-failover bench-heavy bench-writes bench-restart chaos chaos-quick scale drop-stale-slots

# help lists every target with the text after the `##` on its rule line.
help: ## list the targets
	@awk -F':[^#]*## ' '/^[a-zA-Z0-9_-]+:[^=]*## / && !seen[$$1]++ { printf "  make %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

version: ## print the version the binaries and images get (from VERSION)
	@echo $(VERSION)

up: ports secrets $(UP_CERTS) build images ## check ports, build, images, start the stack, wait until healthy (the default; TLS=1: TLS on every hop)
	@echo "==> $(COMPOSE) up -d"
	@$(COMPOSE) up -d --remove-orphans $(SCALE) || { $(COMPOSE) logs --tail=100; exit 1; }
	@$(MAKE) --no-print-directory wait endpoints

# scale sets the replica counts on the running stack without building anything:
#   make scale MATERIALIZED_REPLICAS=3
# Replicas that go get SIGTERM and drain first (docs/operations.md, Replicas). Scaling a
# service between one and more replicas re-creates it (its host ports change).
scale: ## change the runtimes' replica counts on the running stack (MATERIALIZED_REPLICAS=3 ...)
	@echo "==> $(COMPOSE) up -d --no-deps $(SCALE) accelerated materialized"
	@$(COMPOSE) up -d --no-deps $(SCALE) accelerated materialized
	@$(MAKE) --no-print-directory wait

# drop-stale-slots drops the replication slots (and publications) of accelerated
# replicas that are gone: those named for the spicepod's replicas that stay
# inactive for 10 s. A live replica's slot is active and is never dropped.
drop-stale-slots: ## drop the replication slots of accelerated replicas that are gone
	@$(COMPOSE) run --rm --no-deps -T accelerated drop-slots --inactive \
		--spicepod $(SPICEPODS)/accelerated/spicepod.yaml

## Host checks ---------------------------------------------------------------

# deps installs what the images need (ca-certificates, debootstrap while the
# Postgres image is missing, a Compose tool) when it can, else says what to run.
deps: ## install missing host packages (root + apt), else print the command to run
	@docker/preflight.sh deps

# ports fails before anything starts when a port the stack publishes is taken.
ports: ## fail when a host port the stack publishes is taken, naming the variable that moves it
	@docker/preflight.sh ports

# secrets writes 32 random bytes (hex) per variable of SECRET_VARS from
# /dev/urandom, readable by the owner only. An existing file is kept: only the
# variables it lacks are added (a file from an older checkout gains
# POSTGRES_PASSWORD and keeps its keys). Delete the file and run make again to
# change them all; a new POSTGRES_PASSWORD also needs a new Postgres volume
# (docs/operations.md).
secrets: ## create secrets.env (the runtimes' random API keys, Postgres's password), or add what it lacks
	@umask 077; f=$(SECRETS_FILE); old=1; \
	if [ ! -f "$$f" ]; then \
		old=; \
		echo "==> $$f (new random API keys for the runtimes and a password for Postgres)"; \
		echo "# API keys of the data runtimes and Postgres's password, made by make secrets; keep them out of git." > "$$f.tmp" && mv "$$f.tmp" "$$f"; \
	fi; \
	for v in $(SECRET_VARS); do \
		grep -q "^$$v=" "$$f" && continue; \
		[ -z "$$(tail -c1 "$$f")" ] || echo >> "$$f"; \
		[ -z "$$old" ] || echo "==> $$f: added $$v (the file had none)"; \
		echo "$$v=$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >> "$$f"; \
	done

# certs makes the TLS mode's local CA and the services' certificates (SANs: the
# compose service name, localhost, 127.0.0.1) in certs/, git-ignored; files that
# exist are kept. Delete certs/ and run it again for new ones.
certs: ## make certs/ (local CA, per-service certificates) for TLS=1 unless they exist
	@$(GO) run ./cmd/devcerts --dir $(CERTS_DIR)

## Binaries ------------------------------------------------------------------

build: ## build bin/dataruntime (static, cgo + DuckDB), bin/api and bin/bench
	@mkdir -p bin
	@echo "==> bin/dataruntime (static, cgo + DuckDB; the link takes a minute)"; \
		CGO_ENABLED=1 $(GO) build -tags '$(RUNTIME_TAGS)' -trimpath \
			-ldflags '$(RUNTIME_LDFLAGS)' -o bin/dataruntime ./cmd/dataruntime \
			2>bin/.dataruntime.log || { cat bin/.dataruntime.log; exit 1; }; \
		grep -v -e 'statically linked applications requires' -e 'in function' -e '^# ' \
			bin/.dataruntime.log || true; \
		rm -f bin/.dataruntime.log
	@for cmd in api bench; do \
		echo "==> bin/$$cmd (static, pure Go)"; \
		CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w $(VERSION_LDFLAGS)' -o bin/$$cmd ./cmd/$$cmd; \
	done

## Images --------------------------------------------------------------------

images: postgres-image runtime-image api-image ## build the three images

postgres-image: deps ## build the Postgres image (pulled, else from Debian packages)
	@IMAGE='$(POSTGRES_IMAGE)' BASE_IMAGE='$(POSTGRES_BASE_IMAGE)' docker/postgres/build.sh

# Each image's build context is a small directory under bin/image/: its binary
# (hard-linked), the host's CA bundle and an empty directory for /tmp and /data.
image-context: deps ## prepare the images' build contexts under bin/image/
	@test -r /etc/ssl/certs/ca-certificates.crt || \
		{ echo "error: /etc/ssl/certs/ca-certificates.crt missing: apt-get install ca-certificates"; exit 1; }
	@for img in runtime api; do \
		mkdir -p bin/image/$$img/empty; \
		cp -p /etc/ssl/certs/ca-certificates.crt bin/image/$$img/; \
	done

runtime-image: image-context ## build the runtime image from bin/dataruntime
	@test -x bin/dataruntime || { echo "error: bin/dataruntime missing: run make build (needs cmd/dataruntime)"; exit 1; }
	@! ldd bin/dataruntime >/dev/null 2>&1 || { echo "error: bin/dataruntime is dynamically linked and cannot run FROM scratch: run make build"; exit 1; }
	@ln -f bin/dataruntime bin/image/runtime/dataruntime
	@echo "==> image $(RUNTIME_IMAGE)$(if $(RUNTIME_VERSION_IMAGE), and $(RUNTIME_VERSION_IMAGE))"
	@docker build -q -f docker/runtime.Dockerfile -t $(RUNTIME_IMAGE) $(if $(RUNTIME_VERSION_IMAGE),-t $(RUNTIME_VERSION_IMAGE)) bin/image/runtime \
		>/dev/null 2>bin/.image.log || { cat bin/.image.log; exit 1; }

api-image: image-context ## build the api image from bin/api
	@test -x bin/api || { echo "error: bin/api missing: run make build (needs cmd/api)"; exit 1; }
	@! ldd bin/api >/dev/null 2>&1 || { echo "error: bin/api is dynamically linked and cannot run FROM scratch: run make build"; exit 1; }
	@ln -f bin/api bin/image/api/api
	@echo "==> image $(API_IMAGE)$(if $(API_VERSION_IMAGE), and $(API_VERSION_IMAGE))"
	@docker build -q -f docker/api.Dockerfile -t $(API_IMAGE) $(if $(API_VERSION_IMAGE),-t $(API_VERSION_IMAGE)) bin/image/api \
		>/dev/null 2>bin/.image.log || { cat bin/.image.log; exit 1; }

## Stack ---------------------------------------------------------------------

# wait polls each service's health until all are healthy, printing progress, and
# dumps the logs when WAIT_TIMEOUT runs out, a container stops or is unhealthy, or
# one has crashed and restarted three times.
wait: ## wait until every service is healthy (WAIT_TIMEOUT seconds), else print the logs
	@echo "==> waiting up to $(WAIT_TIMEOUT)s for: $(SERVICES)"; \
	deadline=$$(( $$(date +%s) + $(WAIT_TIMEOUT) )); \
	while :; do \
		line=""; ok=1; failed=""; \
		for s in $(SERVICES); do \
			ids=$$(docker ps -aq --filter label=com.docker.compose.project=$(COMPOSE_PROJECT_NAME) \
				--filter label=com.docker.compose.service=$$s); \
			for id in $${ids:-none}; do \
			st=missing; restarts=0; \
			if [ "$$id" != none ]; then \
				read -r st restarts < <(docker inspect -f '{{if eq .State.Status "running"}}{{if .State.Health}}{{.State.Health.Status}}{{else}}running{{end}}{{else}}{{.State.Status}}{{end}} {{.RestartCount}}' $$id 2>/dev/null || echo missing 0); \
			fi; \
			line="$$line $$s=$$st"; [ "$$restarts" = 0 ] || line="$$line(restarts:$$restarts)"; \
			case $$st in healthy|running) ;; exited|dead|unhealthy) ok=0; failed="$$failed $$s";; *) ok=0;; esac; \
			if [ "$$restarts" -ge 3 ]; then failed="$$failed $$s"; fi; \
			done; \
		done; \
		echo "   $$(date +%T)$$line"; \
		if [ $$ok = 1 ]; then break; fi; \
		if [ -n "$$failed" ] || [ $$(date +%s) -ge $$deadline ]; then \
			echo "error: not healthy:$${failed:- timed out after $(WAIT_TIMEOUT)s}; logs follow"; \
			$(COMPOSE) ps || true; \
			$(COMPOSE) logs --tail=100 || true; \
			exit 1; \
		fi; \
		sleep 3; \
	done

endpoints: ## print the stack's URLs, one line per runtime replica
	@echo; \
	echo "The stack is up:"; \
	echo "  curl localhost:$${API_PORT:-9999}/ranking                 # top 5 from Postgres"; \
	echo "  curl localhost:$${API_PORT:-9999}/ranking-accelerated     # from the accelerated runtime"; \
	echo "  curl localhost:$${API_PORT:-9999}/ranking-materialized    # from the materialized runtime"; \
	echo "  curl -X POST localhost:$${API_PORT:-9999}/orders          # a random order"; \
	echo "Runtimes (Spice HTTP API / Flight SQL / metrics; HTTP and Flight need the API keys of $(SECRETS_FILE)):"; \
	for s in accelerated materialized; do \
		for i in $$(docker ps --filter label=com.docker.compose.project=$(COMPOSE_PROJECT_NAME) \
			--filter label=com.docker.compose.service=$$s \
			--format '{{.Label "com.docker.compose.container-number"}}' | sort -n); do \
			h=$$($(COMPOSE) port --index=$$i $$s 8090 2>/dev/null || true); \
			f=$$($(COMPOSE) port --index=$$i $$s 50051 2>/dev/null || true); \
			m=$$($(COMPOSE) port --index=$$i $$s 9090 2>/dev/null || true); \
			printf '  %-13s $(RUNTIME_SCHEME)://%s  $(FLIGHT_SCHEME)://%s  http://%s/metrics\n' "$$s#$$i" "$$h" "$$f" "$$m"; \
		done; \
	done; \
	echo "Postgres: postgres://postgres@127.0.0.1:$${POSTGRES_PORT:-5432}/postgres?$(PG_SSL) (password: POSTGRES_PASSWORD of $(SECRETS_FILE))"; \
	$(if $(filter 1,$(TLS)),echo "TLS on every hop: clients trust $(CERTS_DIR)/ca.pem (curl --cacert $(CERTS_DIR)/ca.pem https://...)";) \
	echo "make logs | make down | make clean"

down: ## stop the stack, keep Postgres's data
	@$(COMPOSE) down --remove-orphans

logs: ## the stack's recent logs (FOLLOW=1 to follow)
	@$(COMPOSE) logs --tail=200 $(if $(FOLLOW),--follow)

# clean leaves nothing of ours behind: the stack with its volume, Postgres
# containers that a killed test binary left (label org.cqrs-spice.pgtest), the
# images built here, with their untagged predecessors (label org.cqrs-spice.image;
# a pulled postgres:15-bookworm stays, only our tag goes) and bin/.
clean: ## remove containers, volumes, our images and bin/
	@$(COMPOSE) down --volumes --remove-orphans
	@ids=$$(docker ps -aq --filter label=org.cqrs-spice.pgtest); \
		if [ -n "$$ids" ]; then docker rm -f -v $$ids >/dev/null; fi
	@for img in $(API_IMAGE) $(API_VERSION_IMAGE) $(RUNTIME_IMAGE) $(RUNTIME_VERSION_IMAGE) $(POSTGRES_IMAGE) $(POSTGRES_BASE_IMAGE); do \
		if docker image inspect $$img >/dev/null 2>&1; then echo "removing image $$img"; docker rmi $$img >/dev/null; fi; \
	done
	@docker image prune -f --filter label=org.cqrs-spice.image >/dev/null
	@rm -rf bin

## Kubernetes ----------------------------------------------------------------

# k8s-secrets writes the example overlay's secrets.env (git-ignored) with random
# values, once; an existing file is kept.
K8S_SECRETS := deploy/kubernetes/overlays/example/secrets.env
k8s-secrets: ## write the Kubernetes example overlay's secrets.env (random), once
	@if [ -f $(K8S_SECRETS) ]; then echo "$(K8S_SECRETS) exists: kept"; else \
		umask 077; { \
			echo "POSTGRES_PASSWORD=$$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')"; \
			echo "ACCELERATED_API_KEY=$$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')"; \
			echo "MATERIALIZED_API_KEY=$$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')"; \
		} > $(K8S_SECRETS); echo "wrote $(K8S_SECRETS)"; fi

## Tests ---------------------------------------------------------------------

# go vet and staticcheck with every build tag the tests use, so no file escapes
# them. staticcheck is pinned and fetched by the go command from the module
# proxy; staticcheck.conf names the checks it leaves out, and why.
VET_TAGS := $(TEST_TAGS) e2e browser chaos
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

# make test-unit: vet and staticcheck, then every package's tests with -short
# and no Docker (about a minute): tests that need Postgres or a stack skip under
# -short, saying so. Without the duckdb_arrow tag the runtime's tests would not
# compile; each such package then fails (internal/tagtest), so `go test ./...`
# alone cannot pass while leaving them out.
test-unit: ## vet, staticcheck and the unit tests: no Docker, about a minute (go test -short)
	$(GO) vet -tags '$(VET_TAGS)' ./...
	$(STATICCHECK) -tags '$(VET_TAGS)' ./...
	$(GO) test -tags '$(TEST_TAGS)' -short -count=1 ./...

# Integration tests start Postgres with testcontainers-go from $(POSTGRES_IMAGE);
# Ryuk, its reaper, is an image that cannot be pulled offline: pgtest cleans up.
# make test: vet and staticcheck; unit and integration tests under the race
# detector (Postgres under testcontainers; a test that cannot start it fails,
# never skips); the differential test of the maintained views whole (100,000
# changes; a tenth under -race); then the end-to-end test: the compose stack from scratch on free
# ports, orders in, all three rankings equal to Postgres, a quick benchmark run
# against it, everything torn down (and the same stack in TLS mode, every hop
# checked to be TLS, about 40 s); then the live page in headless Chromium
# (chromium, installed by make deps) on a stack of its own; then the quick chaos
# test.
test: export TESTCONTAINERS_RYUK_DISABLED = true
test: secrets build images ## vet, staticcheck; unit and integration tests under -race; end-to-end, browser and quick chaos tests (needs Docker)
	$(call plain_only,test)
	$(GO) vet -tags '$(VET_TAGS)' ./...
	$(STATICCHECK) -tags '$(VET_TAGS)' ./...
	$(GO) test -race -tags '$(TEST_TAGS)' -count=1 -timeout 20m ./...
	$(GO) test -tags '$(TEST_TAGS)' -count=1 -run '^TestMaintainedDifferential$$' ./internal/runtime/accelerator/duckdb/
	COMPOSE='$(COMPOSE)' $(GO) test -tags e2e -count=1 -v -timeout 20m ./internal/e2e/
	COMPOSE='$(COMPOSE)' $(GO) test -tags browser -count=1 -v -timeout 15m ./internal/e2e/
	COMPOSE='$(COMPOSE)' $(GO) test -tags chaos -count=1 -v -timeout 15m -run TestChaosQuick ./internal/chaos/

# make docs rewrites the generated tables of docs/configuration.md from the
# programs' flag sets and variable tables (each program's TestDocs; make test
# fails while one differs). One package at a time: they share the page.
docs: ## rewrite the generated tables of docs/configuration.md from the code
	DOCS_UPDATE=1 $(GO) test -tags '$(TEST_TAGS)' -p 1 -count=1 -run '^TestDocs$$' ./cmd/...

# The live page's browser test alone (a stack of its own, about three minutes),
# saving the page as SCREENSHOT at laptop width: the picture the docs show.
SCREENSHOT ?= docs/img/live.png
screenshot: secrets build images ## the live page's test in headless Chromium, saving docs/img/live.png
	$(call plain_only,screenshot)
	SCREENSHOT='$(SCREENSHOT)' COMPOSE='$(COMPOSE)' $(GO) test -tags browser -count=1 -v -timeout 15m -run TestLivePage ./internal/e2e/

# Each fuzz target in turn for FUZZTIME; plain `go test` (make test) runs their
# seeds. FuzzGuard runs DuckDB, so it needs the duckdb_arrow tag like the runtime.
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	FuzzParse:./internal/runtime/spicepod/ \
	FuzzParseOrder:./internal/app/api/ \
	FuzzDecodeTicket:./internal/runtime/server/flightsrv/ \
	FuzzGuard:./internal/runtime/accelerator/duckdb/
fuzz: ## run each fuzz target for FUZZTIME (default 30s)
	@for t in $(FUZZ_TARGETS); do \
		echo "==> $${t%%:*} ($(FUZZTIME))"; \
		$(GO) test -tags '$(TEST_TAGS)' -run '^$$' -fuzz "^$${t%%:*}$$" -fuzztime '$(FUZZTIME)' "$${t#*:}"; \
	done

## Benchmark -----------------------------------------------------------------

# Where bench finds the stack: the loopback ports docker-compose.yml publishes.
# (--runtime-hops adds the ranking read on each runtime's own HTTP API as
# freshness hops; they duplicate the api's hops and double the read load.)
BENCH_ENDPOINTS = --url http://127.0.0.1:$${API_PORT:-9999} \
	--postgres-url "postgres://postgres@127.0.0.1:$${POSTGRES_PORT:-5432}/postgres?$(PG_SSL)" \
	--accelerated-metrics http://$$(metrics_addr accelerated $${ACCELERATED_METRICS_PORT-9090})/metrics \
	--materialized-metrics http://$$(metrics_addr materialized $${MATERIALIZED_METRICS_PORT-9091})/metrics \
	--api-metrics http://$$(metrics_addr api "$${API_METRICS_PORT-}")/metrics \
	--accelerated-runtime $(RUNTIME_SCHEME)://$$(http_addr accelerated $${ACCELERATED_HTTP_PORT-8090}) \
	--materialized-runtime $(RUNTIME_SCHEME)://$$(http_addr materialized $${MATERIALIZED_HTTP_PORT-8091})
# A scaled runtime has no fixed port: bench reads the metrics of its first replica;
# the api's metrics port is a free one unless API_METRICS_PORT is set.
# The runtimes' HTTP APIs answer the watermark reads, with the keys of secrets.env;
# Postgres's password comes from there too, as PGPASSWORD (pgx reads it for a URL
# without a password), so no password lands in a report's command line.
BENCH_SHELL_FUNCS = metrics_addr() { if [ -n "$${2-}" ]; then echo "127.0.0.1:$$2"; else $(COMPOSE) port "$$1" 9090; fi; }; \
	http_addr() { if [ -n "$${2-}" ]; then echo "127.0.0.1:$$2"; else $(COMPOSE) port "$$1" 8090; fi; }; \
	set -a; . ./$(SECRETS_FILE); set +a; export PGPASSWORD="$${POSTGRES_PASSWORD}";
# 100 connections, 6 s per scenario in 6 interleaved rounds, open loop at 200 and
# 1000 req/s, 100 writes/s, at 10k, 100k and 1M orders (about 15 minutes).
BENCH_ARGS ?= -c 100 -z 6s --rounds 6 --rate 200,1000 --duration 3s --write-rate 100 --scale 10k,100k,1M

# make bench brings the stack up when the api does not answer, then measures.
bench: ## the full benchmark (about 15 minutes); starts the stack if needed
	@curl -fsS -o /dev/null http://127.0.0.1:$${API_PORT:-9999}/readyz 2>/dev/null || $(MAKE) --no-print-directory up
	$(BENCH_SHELL_FUNCS) $(GO) run $(BENCH_RUN) ./cmd/bench $(BENCH_ENDPOINTS) $(BENCH_ARGS)

# The replica scenario (about a minute): three materialized replicas behind the
# api, a closed loop of 100 connections on /ranking-materialized with writes read
# back; one replica SIGKILLed at 10 s, one added at 20 s, scaled to 1 at 30 s.
# Prints non-2xx, p99 per event and when the api stopped sending to the killed one.
FAILOVER_ARGS ?=
bench-failover: ## three materialized replicas: kill, add, scale down under load
	$(call plain_only,bench-failover)
	@$(MAKE) --no-print-directory up MATERIALIZED_REPLICAS=3
	MATERIALIZED_HTTP_PORT= MATERIALIZED_FLIGHT_PORT= MATERIALIZED_METRICS_PORT= COMPOSE='$(COMPOSE)' \
		$(GO) run ./cmd/bench failover --url http://127.0.0.1:$${API_PORT:-9999} $(FAILOVER_ARGS)

# The heavy-query scenario (about two minutes): orders seeded to 100k, then the
# ranking reads (cache bypassed) with the accelerated runtime idle, then while six
# cross joins over its tables run on it without pause, each a unique query text;
# p50/p99 and non-2xx side by side, to bench/results/heavy-latest.md and the
# generated block of docs/benchmarks.md. Needs one accelerated replica.
HEAVY_ARGS ?=
bench-heavy: ## ranking reads idle and under six unique heavy cross joins on the accelerated runtime
	@curl -fsS -o /dev/null http://127.0.0.1:$${API_PORT:-9999}/readyz 2>/dev/null || $(MAKE) --no-print-directory up
	$(BENCH_SHELL_FUNCS) $(GO) run $(BENCH_RUN) ./cmd/bench heavy --url http://127.0.0.1:$${API_PORT:-9999} \
		--postgres-url "postgres://postgres@127.0.0.1:$${POSTGRES_PORT:-5432}/postgres?$(PG_SSL)" \
		--accelerated-runtime $(RUNTIME_SCHEME)://127.0.0.1:$(ACCELERATED_HTTP_PORT) $(HEAVY_ARGS)

# make bench-scale: the scale run, per size of SIZES (orders seeded
# inside Postgres with generate_series, ascending, never removed): CPU per change
# of each process from 10 s of writes only, freshness per hop from the runtimes'
# own watermarks (a read of no rows that waits, with Spice-Min-Position, until a
# runtime's watermark covers each write) over 15 s of writes at 100/s, then read
# throughput and CPU per request of each process per scenario.
# 10M orders take about 2 GB of Postgres disk (docs/benchmarks.md).
SIZES ?= 10k,100k,1M,10M
SCALE_ARGS ?= -c 100 -z 6s --rounds 3 --write-rate 100 --changes-window 10s --freshness-window 15s
bench-scale: ## freshness, CPU per change and per read at each size of SIZES
	@curl -fsS -o /dev/null http://127.0.0.1:$${API_PORT:-9999}/readyz 2>/dev/null || $(MAKE) --no-print-directory up
	$(BENCH_SHELL_FUNCS) $(GO) run $(BENCH_RUN) ./cmd/bench $(BENCH_ENDPOINTS) $(SCALE_ARGS) --scale $(SIZES)

# make bench-writes: the write benchmark (about 20 minutes). First F, the CPU
# of a lone change (4 orders/s for 20 s between two quiet windows); then open-loop
# POST /orders at each rate, 30 s per step, in 2 rounds: per rate the command side
# alone (the runtimes paused: api + Postgres) and the whole chain, in the other
# order every other round; then up to 3 more steps per configuration narrow its
# sustained rate; then the single-feed ceiling (a backlog of 100,000 one-row
# transactions written while the runtimes are paused, then their catch-up); then
# the whole chain at twice its sustained rate for 60 s, its RSS sampled. Reports
# the goals (pooled over the rounds), POST p50/p99, write-to-visible per runtime
# from their watermarks, CPU and memory per process, catch-up, to
# bench/results/writes-latest.md and the generated block of docs/benchmarks.md.
# A smoke run:
#   make bench-writes WRITES_ARGS='--rates 100,500 --step 10s --rounds 1 --refine 0 --lone-window 5s --backlog 20000 --overload 10s'
WRITES_ARGS ?= --rates 100,250,500,1000,2000 --step 30s --rounds 2
bench-writes: ## the write benchmark: the rate the command side alone and the whole chain sustain
	@curl -fsS -o /dev/null http://127.0.0.1:$${API_PORT:-9999}/readyz 2>/dev/null || $(MAKE) --no-print-directory up
	$(BENCH_SHELL_FUNCS) $(GO) run $(BENCH_RUN) ./cmd/bench writes $(BENCH_ENDPOINTS) $(WRITES_ARGS)

# make bench-restart: restarts at scale, per size of RESTART_SIZES (both
# runtimes stopped while orders are seeded inside Postgres): time from process
# start to ready and caught up, and peak RSS, of runtime 1 in mode: memory (a new
# snapshot), runtime 2 (subscribes again) and runtime 1 in mode: file
# (bench/compose.file-mode.yml: resumes from its file and slot), each stopped and
# SIGKILLed RESTART_ROUNDS times; the snapshot's rows/s next to Postgres's COPY.
# Leaves runtime 1 in mode: memory. Table: bench/results/restart-latest.md.
RESTART_SIZES ?= 1M
RESTART_ARGS ?= --rounds 3
bench-restart: ## restarts at scale: time to ready and caught up, peak RSS, per mode
	$(call plain_only,bench-restart)
	@curl -fsS -o /dev/null http://127.0.0.1:$${API_PORT:-9999}/readyz 2>/dev/null || $(MAKE) --no-print-directory up
	set -a; . ./$(SECRETS_FILE); set +a; export PGPASSWORD="$${POSTGRES_PASSWORD}"; \
	COMPOSE='$(COMPOSE)' $(GO) run ./cmd/bench restart --sizes $(RESTART_SIZES) \
		--postgres-url "postgres://postgres@127.0.0.1:$${POSTGRES_PORT:-5432}/postgres?sslmode=disable" \
		--accelerated-runtime http://127.0.0.1:$(ACCELERATED_HTTP_PORT) --accelerated-metrics http://127.0.0.1:$(ACCELERATED_METRICS_PORT)/metrics \
		--materialized-runtime http://127.0.0.1:$(MATERIALIZED_HTTP_PORT) --materialized-metrics http://127.0.0.1:$(MATERIALIZED_METRICS_PORT)/metrics \
		$(RESTART_ARGS)

# About a minute, on the data as it is: a smoke run.
bench-quick: ## a benchmark smoke run of about a minute, on the data as it is
	@$(MAKE) --no-print-directory bench BENCH_ARGS=--quick

## Chaos -----------------------------------------------------------------------

# make chaos runs every fault (cmd/chaos) against its own compose project,
# cqrs-chaos, on host ports 19990-19997 (CHAOS_ARGS=--port-base N moves them),
# removed first with its volumes (--fresh); the table goes to
# chaos/results/latest.md and the generated block of docs/chaos.md. The stack
# stays up afterwards: CHAOS_ARGS=--down removes it. The load rounds write at
# --load-rate (pass 80% of the whole chain's sustained rate that make
# bench-writes finds), the overload rounds at twice that.
CHAOS_ARGS ?=
chaos: secrets build images ## every fault against a fresh second stack (project cqrs-chaos), checked round by round
	$(call plain_only,chaos)
	$(GO) run ./cmd/chaos --project cqrs-chaos --fresh $(CHAOS_ARGS)

# The CI setting: three faults on a fresh stack, torn down at the end.
chaos-quick: export TESTCONTAINERS_RYUK_DISABLED = true
chaos-quick: secrets build images ## three faults on a fresh stack, torn down at the end (the CI setting)
	$(call plain_only,chaos-quick)
	COMPOSE='$(COMPOSE)' $(GO) test -tags chaos -count=1 -v -timeout 15m -run TestChaosQuick ./internal/chaos/
