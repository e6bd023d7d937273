# arcflow's image for people who build with Docker. `make image` builds the same
# image without a Docker engine (tools/image, tools/cmd/arcflow-image); a test in
# tools/image checks that this file names the same user, entrypoint, files
# and labels.
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION="$(git describe --tags --always --dirty)" \
#     --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg CREATED="$(date -u -d @"$(git log -1 --format=%ct)" +%Y-%m-%dT%H:%M:%SZ)" \
#     -t ghcr.io/arcflow/arcflow:dev .

# The binary: static (CGO_ENABLED=0), cross-compiled on the build machine.
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -tags grpcnotrace,retrynotrace -ldflags "-s -w -X main.version=$VERSION" -o /out/arcflow ./cmd/arcflow && \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -tags grpcnotrace,retrynotrace,webhookonly -ldflags "-s -w -X main.version=$VERSION" -o /out/arcflow-webhook ./cmd/arcflow

# CA certificates from Debian's ca-certificates package, and nonroot's home.
FROM debian:bookworm-slim AS certs
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /home/nonroot && chmod 0700 /home/nonroot

# No shell, no package manager: the binary, the CA bundle, passwd and group.
FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.source="https://github.com/arcflow/arcflow" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$REVISION" \
      org.opencontainers.image.licenses="NOASSERTION" \
      org.opencontainers.image.created="$CREATED" \
      org.opencontainers.image.title="arcflow" \
      org.opencontainers.image.description="GitHub Actions runner autoscaling on Kubernetes (ARC legacy mode) driven by Temporal workflows" \
      dev.arcflow.ca-certificates="debian ca-certificates (debian:bookworm-slim)"
COPY tools/image/rootfs/etc/passwd tools/image/rootfs/etc/group /etc/
COPY --from=certs /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=certs --chown=65532:65532 /home/nonroot /home/nonroot
COPY --from=build /out/arcflow /out/arcflow-webhook /usr/local/bin/
ENV PATH=/usr/local/bin
USER 65532:65532
ENTRYPOINT ["arcflow"]
