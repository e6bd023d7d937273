// Package registry holds the values that name GitHub's runner registry: the
// Scope runners register in and a Runner as GitHub lists it. It imports nothing
// that does I/O (no go-github, no HTTP), so the deterministic workflows can hold
// these values without linking the client; package github aliases them.
package registry
