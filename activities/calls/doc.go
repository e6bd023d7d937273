// Package calls is what a workflow calls an activity with: each activity's
// name, its input and output, the error types it returns and the constants both
// sides read. It does no I/O and links neither go-github nor client-go, so the
// deterministic workflows package depends on it and not on package activities.
package calls
