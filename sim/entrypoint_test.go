package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities"
)

// The simulated runner plays each well-known image's entrypoint: summerwind's
// startup.sh needs RUNNER_TOKEN, GitHub's image needs a command, and run.sh
// needs a JIT configuration; other images register as their pod allows.
func TestEntrypoint(t *testing.T) {
	fromSecret := corev1.EnvVar{ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}}
	token := map[string]corev1.EnvVar{activities.TokenSecretKey: fromSecret}
	jit := map[string]corev1.EnvVar{activities.JITConfigSecretKey: fromSecret}
	plain := map[string]corev1.EnvVar{activities.TokenSecretKey: {Value: "AAA"}} // ARC's pods
	const (
		summerwind = "summerwind/actions-runner:latest"
		dind       = "registry.example.com/summerwind/actions-runner-dind:v2.311.0"
		github     = "ghcr.io/actions/actions-runner:latest"
	)
	runSh := []string{activities.JITRunnerCommand}
	for _, c := range []struct {
		name          string
		image         string
		command, args []string
		env           map[string]corev1.EnvVar
		want          Start
	}{
		{"summerwind with a token", summerwind, nil, nil, token, StartToken},
		{"summerwind with a plain token", summerwind, nil, nil, plain, StartToken},
		{"summerwind-dind with a token", dind, nil, nil, token, StartToken},
		{"summerwind with a JIT configuration", summerwind, nil, nil, jit, ExitAtStart},
		{"summerwind with an empty token", summerwind, nil, nil, map[string]corev1.EnvVar{activities.TokenSecretKey: {}}, ExitAtStart},
		{"summerwind running its run.sh", summerwind, []string{"/runnertmp/run.sh"}, nil, jit, StartJIT},
		{"summerwind running its run.sh by args", summerwind, nil, []string{"/runnertmp/run.sh"}, jit, StartJIT},
		{"summerwind running a script of its own", summerwind, []string{"/bin/bash", "-c", "x"}, nil, jit, StartAsAny},
		{"GitHub's without a command", github, nil, nil, jit, NotCreated},
		{"GitHub's with run.sh", github, runSh, nil, jit, StartJIT},
		{"GitHub's with a relative run.sh", "ghcr.io/actions/actions-runner:2.325.0", []string{"run.sh"}, nil, jit, StartJIT},
		{"GitHub's with run.sh as args", github, nil, runSh, jit, StartJIT},
		{"GitHub's with run.sh and a token", github, runSh, nil, token, ExitAtStart},
		{"GitHub's with a script of its own", github, []string{"/home/runner/mine.sh"}, nil, token, StartAsAny},
		{"another image with a token", "runner", nil, nil, token, StartAsAny},
		{"another image with a JIT configuration", "runner", nil, nil, jit, StartAsAny},
	} {
		require.Equal(t, c.want, Entrypoint(c.image, c.command, c.args, c.env), c.name)
	}
}
