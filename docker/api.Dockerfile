# The API (cmd/api): one static Go binary (CGO_ENABLED=0), nothing else. Built on
# the host by `make images`, whose build context is bin/image/api (the binary, the
# host's CA bundle and an empty directory), so no base image is pulled:
#
#   CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o bin/api ./cmd/api
#
# Build with DOCKER_BUILDKIT=0 where BuildKit has no registry to talk to.
FROM scratch
LABEL org.cqrs-spice.image=api

COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --chown=65532:65532 empty/ /tmp/
COPY api /api

ENV TMPDIR=/tmp HOME=/tmp
USER 65532:65532
EXPOSE 9999
HEALTHCHECK --interval=5s --timeout=3s --start-period=5s --retries=12 \
    CMD ["/api", "healthcheck"]
ENTRYPOINT ["/api"]
