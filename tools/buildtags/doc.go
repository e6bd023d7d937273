// Package buildtags names the build tags every shipped arcflow binary is built
// with, so the image, the Dockerfile, `make build` and the test harnesses build
// the same program.
package buildtags
