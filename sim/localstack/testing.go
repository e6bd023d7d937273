package localstack

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// Run is a TestMain body: it starts a stack shared by the package's tests, runs
// them, stops the stack and returns the exit code.
//
//	func TestMain(m *testing.M) { os.Exit(localstack.Run(m, opts, &stack)) }
func Run(m *testing.M, opts Options, stack **Stack) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	s, err := Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "localstack: %v\n", err)
		return 1
	}
	*stack = s
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "localstack logs:\n%s", s.LogTails(15))
	}
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "localstack: stop: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
