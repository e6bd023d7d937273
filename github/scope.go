package github

import (
	"strings"

	"github.com/arcflow/arcflow/github/registry"
)

type (
	// Scope is where runners register (registry.Scope).
	Scope = registry.Scope
	// Runner is a self-hosted runner as GitHub lists it (registry.Runner).
	Runner = registry.Runner
)

// ownerRepo splits a repository scope.
func ownerRepo(s Scope) (string, string) {
	owner, repo, _ := strings.Cut(s.Repository, "/")
	return owner, repo
}
