// Package image builds arcflow's container image without a Docker engine: a static
// arcflow binary, Debian's CA bundle, /etc/passwd and /etc/group for the nonroot
// user 65532, and nothing else (no shell, no package manager). Build compiles the
// binary for each platform and writes one OCI index into an OCI image layout;
// WriteDockerTarball writes a `docker load` archive of one platform; Unpack lays an
// image's filesystem out in a directory, so tests can run the binary that ships.
//
// The bundled Temporal's image (temporal.go) shares the base layer and holds the
// pinned Temporal CLI instead of arcflow, built from the Go module proxy
// (BuildTemporal, `make image-temporal`); the Helm chart runs its `temporal
// server start-dev` when temporal.address is empty.
//
// Only tools/cmd/arcflow-image and tests import this package: the arcflow binary itself
// does not link go-containerregistry.
//
// The root Dockerfile builds the same image for people with Docker; its user,
// entrypoint, files and labels are checked against this package's constants.
package image
