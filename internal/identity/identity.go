package identity

import (
	"fmt"
	"os"
)

// Process is "<hostname>-<pid>".
func Process() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("process identity: %w", err)
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid()), nil
}
