package localstack

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Kubectl runs the real kubectl against the stack and returns its combined output.
func (s *Stack) Kubectl(ctx context.Context, args ...string) (string, error) {
	tools, err := ToolsDir()
	if err != nil {
		return "", err
	}
	bin, err := tool(tools, "kubectl")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig=" + s.Kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// Temporal runs the real temporal CLI against the stack's dev server.
func (s *Stack) Temporal(ctx context.Context, args ...string) (string, error) {
	return temporalCLI(ctx, s.TemporalAddress, args...)
}

// temporalCLI runs the real temporal CLI against the server at address.
func temporalCLI(ctx context.Context, address string, args ...string) (string, error) {
	tools, err := ToolsDir()
	if err != nil {
		return "", err
	}
	bin, err := tool(tools, "temporal")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "--address", address)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("temporal %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// InstallCRDs applies every CRD in dir server-side (the CRDs are too large for the
// last-applied annotation of a client-side apply) and waits until they are served.
// A directory is installed once per stack: tests side by side wait for the first
// install rather than race it.
func (s *Stack) InstallCRDs(ctx context.Context, dir string) error {
	s.crdsMu.Lock()
	defer s.crdsMu.Unlock()
	if s.crdsInstalled[dir] {
		return nil
	}
	if err := s.installCRDs(ctx, dir); err != nil {
		return err
	}
	if s.crdsInstalled == nil {
		s.crdsInstalled = map[string]bool{}
	}
	s.crdsInstalled[dir] = true
	return nil
}

func (s *Stack) installCRDs(ctx context.Context, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %s: %v", dir, err)
	}
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	if _, err := s.Kubectl(ctx, "apply", "--server-side", "-f", dir); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	return s.awaitCRDsEstablished(ctx, dir, time.Minute)
}

// awaitCRDsEstablished polls until every CRD in dir is Established. It does
// not use `kubectl wait --for=condition=Established`: on a loaded API server
// that command read a CRD created a moment before with no status.conditions
// yet and exited 1 (".status.conditions accessor error") instead of waiting.
func (s *Stack) awaitCRDsEstablished(ctx context.Context, dir string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	const columns = `custom-columns=NAME:.metadata.name,ESTABLISHED:.status.conditions[?(@.type=="Established")].status`
	var pending []string
	for {
		out, err := s.Kubectl(ctx, "get", "--no-headers", "-o", columns, "-f", dir)
		if err == nil {
			pending = notEstablished(out)
			if len(pending) == 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("install CRDs: not established within %s: %w", timeout, err)
			}
			return fmt.Errorf("install CRDs: not established within %s: %s", timeout, strings.Join(pending, ", "))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// notEstablished names the CRDs of a `NAME ESTABLISHED` listing whose
// Established condition is not True (or not there yet).
func notEstablished(listing string) []string {
	var pending []string
	for _, line := range strings.Split(strings.TrimSpace(listing), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 || fields[1] != "True" {
			pending = append(pending, fields[0])
		}
	}
	return pending
}
