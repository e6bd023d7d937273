# arcflow: GitHub Actions runner autoscaling on Kubernetes, driven by Temporal workflows.
# `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

TOOLS_BIN := $(CURDIR)/.tools/bin
STACK_DIR ?= $(CURDIR)/.stack
GO_TEST_FLAGS ?= -count=1 -timeout 30m
# Temporal for make up, demo, bench and chaos: dev (the CLI's dev server) or
# cluster (temporal-server on PostgreSQL).
TEMPORAL ?= dev
export ARCFLOW_TEMPORAL := $(TEMPORAL)
export ARCFLOW_TOOLS_BIN := $(TOOLS_BIN)

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Build etcd, Kubernetes, kwok, the Temporal CLI and server, controller-gen, helm, promtool, helm-docs; install chromium and PostgreSQL (cached outside the clone).
	@bash scripts/tools.sh all

.PHONY: build
build: ## Build the arcflow binaries into bin/.
	go build -tags grpcnotrace,retrynotrace -ldflags "-X main.version=$$(git describe --tags --always --dirty 2>/dev/null || echo dev)" -o bin/ ./cmd/... ./sim/cmd/... ./tools/cmd/...

.PHONY: image
image: ## Build the arcflow image (linux/amd64 + arm64 OCI layout and docker-load tarballs) into bin/image/, without Docker.
	@bash scripts/image.sh $(IMAGE_FLAGS)

.PHONY: image-temporal
image-temporal: ## Build the bundled Temporal's image (the pinned Temporal CLI, linux/amd64 + arm64) into bin/image-temporal/, without Docker.
	@bash scripts/image.sh -temporal -out bin/image-temporal $(IMAGE_FLAGS)

.PHONY: release
release: ## Write the image, the Helm chart package and SHA256SUMS into dist/ (version from git describe; builds helm if needed).
	@bash scripts/release.sh

.PHONY: generate
generate: tools ## Regenerate deepcopy code and the CRD YAML in deploy/crds with controller-gen; copy the CRDs and the dashboard; render the alert rules from the chart.
	@bash scripts/generate.sh .

.PHONY: lint
lint: tools ## gofmt, go vet, generated files up to date, promtool on the alert rules, the chart and kustomize components rendered and dry-run applied, the import rules, the docs checked.
	@bash scripts/lint.sh

.PHONY: test-unit
test-unit: ## Unit and workflow tests only (no local stack).
	go test -short $(GO_TEST_FLAGS) ./...

# The e2e package runs in E2E_SHARDS processes, each on a stack of its own, and
# each runs E2E_PARALLEL tests side by side (scripts/test.sh).
E2E_SHARDS ?= 1
E2E_PARALLEL ?= 6
export GO_TEST_FLAGS E2E_SHARDS E2E_PARALLEL

.PHONY: test
test: tools ## Everything CI runs, side by side: the lint, unit, integration and e2e tests on the real local stack (the e2e package in E2E_SHARDS processes).
	@bash scripts/test.sh

.PHONY: e2e
e2e: tools ## Full-stack tests only (the e2e package in E2E_SHARDS processes).
	@bash scripts/test.sh e2e

.PHONY: record-histories
record-histories: tools ## Record workflow histories on dev servers into workflows/testdata/histories (adds new scenarios; never overwrites).
	go test -count=1 -timeout 10m -run '^TestRecord' ./workflows/replaytest -args -record

.PHONY: up
up: tools ## Start etcd, kube-apiserver, kwok and Temporal for a person (TEMPORAL=dev with the Web UI, or TEMPORAL=cluster on PostgreSQL).
	go run ./sim/cmd/arcflow-stack up --dir $(STACK_DIR) --temporal $(TEMPORAL)

.PHONY: down
down: ## Stop what `make up` started.
	go run ./sim/cmd/arcflow-stack down --dir $(STACK_DIR)

.PHONY: demo
demo: tools ## Run arcflow end to end on the simulator; Ctrl-C stops everything it started.
	@bash scripts/demo.sh $(DEMO_FLAGS)

.PHONY: bench
bench: tools ## Benchmark tables per workload size beside ARC's measured figures (results in .bench/results.md).
	@bash scripts/bench.sh $(BENCH_FLAGS)

.PHONY: scale
scale: tools ## 50 pools under a job rate that steps up until jobs wait: table and plot of latency and CPU against the rate (results in .scale/).
	go run ./sim/cmd/arcflow-sim scale $(SCALE_FLAGS)

.PHONY: chaos
chaos: tools ## The workload while the worker and webhook are SIGKILLed; asserts no job lost (results in .chaos/results.md).
	go run ./sim/cmd/arcflow-sim chaos $(CHAOS_FLAGS)
