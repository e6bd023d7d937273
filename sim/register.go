package sim

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
)

// register does what the runner image's entrypoint does (start): config.sh
// with the registration token, or run.sh with a JIT configuration, which
// brings the runner GitHub registered at its creation online; an image the
// simulator does not know uses whichever its pod has. A pod gone by then
// registers nothing. A known entrypoint whose credential comes empty from
// its Secret exits 1 (errNoCredential).
//
// The pod's existence is asked for last, just before GitHub hears of the
// runner: a real process cannot register once its pod is gone, while the
// reads before it (claims, the Secret) take long enough on a loaded API
// server for arcflow to delete the pod and make its last look for a
// registration meanwhile, which would leave this one behind.
func (r *Runners) register(ctx context.Context, pod *corev1.Pod, env map[string]corev1.EnvVar, start Start) error {
	if err := r.writeVolumes(ctx, pod); err != nil {
		return err
	}
	key := activities.TokenSecretKey
	_, jit := env[activities.JITConfigSecretKey]
	if start != StartAsAny {
		jit = start == StartJIT
	}
	if jit {
		key = activities.JITConfigSecretKey
	}
	secret, err := r.secretValue(ctx, pod.Namespace, env, key)
	if err != nil || !r.podExists(ctx, pod) {
		return err
	}
	if secret == "" && start != StartAsAny {
		return fmt.Errorf("%s: %w", key, errNoCredential)
	}
	if jit {
		_, err = r.GitHub.StartJIT(secret)
		return err
	}
	labels := strings.FieldsFunc(env["RUNNER_LABELS"].Value, func(c rune) bool { return c == ',' })
	_, err = r.GitHub.Register(secret, env["RUNNER_NAME"].Value, labels, env["RUNNER_EPHEMERAL"].Value != "false")
	return err
}

// secretValue reads an environment variable that comes from a Secret, as the
// kubelet would.
func (r *Runners) secretValue(ctx context.Context, namespace string, env map[string]corev1.EnvVar, name string) (string, error) {
	if value := env[name].Value; value != "" {
		return value, nil // ARC's runner pods carry their token in plain env
	}
	from := env[name].ValueFrom
	if from == nil || from.SecretKeyRef == nil {
		return "", fmt.Errorf("pod has no %s secret reference", name)
	}
	ref := from.SecretKeyRef
	secret, err := r.Kube.CoreV1().Secrets(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read secret %s for %s: %w", ref.Name, name, err)
	}
	return string(secret.Data[ref.Key]), nil
}

func runnerEnv(pod *corev1.Pod) map[string]corev1.EnvVar {
	env := map[string]corev1.EnvVar{}
	for _, c := range pod.Spec.Containers {
		if c.Name == "runner" {
			for _, e := range c.Env {
				env[e.Name] = e
			}
		}
	}
	return env
}
