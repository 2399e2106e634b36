# The data runtime (cmd/dataruntime): one static binary, nothing else. Built on the
# host by `make images`, whose build context is bin/image/runtime (the binary, the
# host's CA bundle and an empty directory), so no base image is pulled:
#
#   CGO_ENABLED=1 go build -tags 'duckdb_arrow netgo osusergo' -trimpath \
#     -ldflags '-s -w -linkmode external -extldflags "-static"' -o bin/dataruntime ./cmd/dataruntime
#
# DuckDB is linked in through cgo, statically (glibc, libstdc++), so FROM scratch
# serves. Build with DOCKER_BUILDKIT=0 where BuildKit has no registry to talk to.
FROM scratch
LABEL org.cqrs-spice.image=runtime

COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# Writable by the runtime's user only: DuckDB's spill files and `mode: file`
# databases (mount a volume on /data to keep them).
COPY --chown=65532:65532 empty/ /tmp/
COPY --chown=65532:65532 empty/ /data/
COPY dataruntime /dataruntime

ENV TMPDIR=/tmp HOME=/tmp
WORKDIR /data
USER 65532:65532
# HTTP (Spice API, /v1/ready), Flight and Flight SQL, Prometheus metrics.
EXPOSE 8090 50051 9090
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=12 \
    CMD ["/dataruntime", "healthcheck", "--url", "http://127.0.0.1:8090/v1/ready"]
ENTRYPOINT ["/dataruntime"]
CMD ["--spicepod", "/spicepods/spicepod.yaml", "--http", "0.0.0.0:8090", "--flight", "0.0.0.0:50051", "--metrics", "0.0.0.0:9090"]
