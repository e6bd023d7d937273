// Package hraspec turns a HorizontalRunnerAutoscaler and its target into the
// autoscaler workflow's spec. The worker's watcher and the webhook, which may
// start an autoscaler itself, build the spec the same way.
package hraspec
