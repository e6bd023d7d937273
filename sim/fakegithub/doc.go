// Package fakegithub is a stateful fake GitHub REST server for tests and the simulator. It
// speaks the real REST shapes and is exercised only through the go-github client.
package fakegithub
