// Package sim simulates GitHub and the runners inside runner pods, for e2e tests,
// benchmarks and the demo.
package sim
