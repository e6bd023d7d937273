//go:build tools

// Package tools records the commands built by scripts/tools.sh so that go mod tidy
// keeps their modules.
package tools

import (
	_ "github.com/temporalio/cli/cmd/temporal"
	_ "go.temporal.io/server/cmd/server"
	_ "go.temporal.io/server/cmd/tools/sql"
)
