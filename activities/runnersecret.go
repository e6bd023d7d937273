package activities

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.temporal.io/sdk/temporal"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/scaleset"
)

// A runner's Secret holds what its pod registers with: a registration token
// (RUNNER_TOKEN) or, for a JIT runner, its just-in-time configuration
// (ACTIONS_RUNNER_INPUT_JITCONFIG). Either goes from GitHub straight into the
// Secret, never into an activity's input, output or error.
const (
	JITConfigSecretKey = "ACTIONS_RUNNER_INPUT_JITCONFIG"
	// AnnotationRunnerID on a JIT runner's Secret is GitHub's ID of the runner
	// its configuration registered, so a retry knows it without GitHub.
	AnnotationRunnerID = "arcflow.dev/runner-id"
)

// ErrTypeGitHubRefused: GitHub will not register the runner as specified (a 422,
// or a runner group that does not exist). Retrying cannot help.
const ErrTypeGitHubRefused = "GitHubRefused"

func scopeOf(in RunnerPodInput) github.Scope {
	return github.Scope{Enterprise: in.Spec.Enterprise, Organization: in.Spec.Organization, Repository: in.Spec.Repository,
		Credentials: in.Spec.GitHubAPICredentialsFrom.Ref(in.Namespace)}
}

// registrationToken is the runner's scope's registration token, from the
// process's token cache.
func (k *Kubernetes) registrationToken(ctx context.Context, in RunnerPodInput) (github.RegistrationToken, error) {
	scope := scopeOf(in)
	tokens, err := k.tokens(ctx, scope)
	if err != nil {
		return github.RegistrationToken{}, err
	}
	token, err := tokens.RegistrationToken(ctx, scope)
	if err != nil {
		return github.RegistrationToken{}, githubError(fmt.Errorf("registration token for %s: %w", scope, err))
	}
	return token, nil
}

// writeToken writes the registration token into the runner's own Secret: that
// of a pod an earlier version made, which reads one.
func (k *Kubernetes) writeToken(ctx context.Context, in RunnerPodInput) error {
	token, err := k.registrationToken(ctx, in)
	if err != nil {
		return err
	}
	return k.writeSecret(ctx, in, map[string]string{TokenSecretKey: token.Value()}, nil)
}

// writeJITConfig registers the runner with generate-jitconfig and writes its
// configuration. GitHub's call is not idempotent, so a retry settles what an
// earlier attempt left: a Secret written by it names the runner already, and
// is kept whether or not GitHub still lists that runner (an ephemeral runner
// that ran its job is gone from GitHub; registering it again left a runner no
// pod would ever start, offline for good); a registration without a Secret
// has lost its configuration, so it is removed and the runner registered again.
func (k *Kubernetes) writeJITConfig(ctx context.Context, in RunnerPodInput) (int64, error) {
	if id, err := k.registeredRunnerID(ctx, in); err != nil || id != 0 {
		return id, err // an earlier attempt's
	}
	scope := scopeOf(in)
	registry, err := k.tokens(ctx, scope)
	if err != nil {
		return 0, err
	}
	labels := append(append([]string(nil), in.Spec.Labels...), k.Defaults.CommonLabels...)
	request := github.JITRequest{Name: in.Name, Labels: labels, Group: in.Spec.Group, WorkFolder: in.Spec.WorkDir}
	generate := func() (github.JITConfig, error) { return registry.GenerateJITConfig(ctx, scope, request) }
	if in.ScaleSetID != 0 {
		if generate, err = k.scaleSetJIT(ctx, in); err != nil {
			return 0, err
		}
	}
	config, err := generate()
	if errors.Is(err, github.ErrConflict) {
		if err := removeStaleRegistration(ctx, registry, scope, in.Name); err != nil {
			return 0, err
		}
		config, err = generate()
	}
	switch {
	case errors.Is(err, github.ErrRefused) || errors.Is(err, github.ErrNotFound):
		return 0, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("register JIT runner %s/%s: %v", in.Namespace, in.Name, err), ErrTypeGitHubRefused, nil)
	case err != nil:
		return 0, githubError(fmt.Errorf("register JIT runner %s/%s: %w", in.Namespace, in.Name, err))
	}
	id := strconv.FormatInt(config.RunnerID, 10)
	return config.RunnerID, k.writeSecret(ctx, in, map[string]string{JITConfigSecretKey: config.Encoded()}, map[string]string{AnnotationRunnerID: id})
}

// registeredRunnerID is the GitHub ID a JIT runner's Secret records, or 0 when
// the runner has no such Secret.
func (k *Kubernetes) registeredRunnerID(ctx context.Context, in RunnerPodInput) (int64, error) {
	if !in.JIT {
		return 0, nil
	}
	secret, err := k.Client.CoreV1().Secrets(in.Namespace).Get(ctx, TokenSecretName(in.Name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("get runner secret %s/%s: %w", in.Namespace, TokenSecretName(in.Name), err)
	}
	id, _ := strconv.ParseInt(secret.Annotations[AnnotationRunnerID], 10, 64)
	return id, nil
}

// removeStaleRegistration removes a runner that an earlier attempt registered
// but whose configuration was lost. It never started, so it is not busy.
func removeStaleRegistration(ctx context.Context, registry RunnerRegistry, scope github.Scope, name string) error {
	runner, found, err := registry.FindRunner(ctx, scope, name)
	if err != nil {
		return githubError(fmt.Errorf("find stale runner %s: %w", name, err))
	}
	if !found {
		return nil
	}
	if err := registry.RemoveRunner(ctx, scope, runner.ID); err != nil && !errors.Is(err, github.ErrNotFound) {
		return githubError(fmt.Errorf("remove stale runner %s: %w", name, err))
	}
	return nil
}

// writeSecret creates the runner's Secret, or refreshes the data of one an
// earlier attempt left.
func (k *Kubernetes) writeSecret(ctx context.Context, in RunnerPodInput, data, annotations map[string]string) error {
	secrets := k.Client.CoreV1().Secrets(in.Namespace)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: TokenSecretName(in.Name), Namespace: in.Namespace,
			Labels:      map[string]string{LabelRunner: "", LabelPool: in.Pool},
			Annotations: annotations,
		},
		Type:       corev1.SecretTypeOpaque,
		StringData: data,
	}
	_, err := secrets.Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		existing, getErr := secrets.Get(ctx, secret.Name, metav1.GetOptions{})
		if getErr != nil {
			return fmt.Errorf("get runner secret %s/%s: %w", in.Namespace, secret.Name, getErr)
		}
		existing.StringData, existing.Annotations = data, annotations
		_, err = secrets.Update(ctx, existing, metav1.UpdateOptions{})
	}
	if err != nil {
		// The API server's error names the object, not its data.
		return fmt.Errorf("write runner secret %s/%s: %w", in.Namespace, secret.Name, err)
	}
	return nil
}

// adoptTokenSecret makes the runner's pod or StatefulSet own its Secret.
func (k *Kubernetes) adoptTokenSecret(ctx context.Context, in RunnerPodInput, apiVersion, kind, name, uid string) error {
	patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":%q,"kind":%q,"name":%q,"uid":%q}]}}`, apiVersion, kind, name, uid)
	_, err := k.Client.CoreV1().Secrets(in.Namespace).Patch(ctx, TokenSecretName(in.Name), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("adopt runner secret of %s/%s: %w", in.Namespace, in.Name, err)
	}
	return nil
}

// scaleSetJIT registers runners with the runner scale set's generatejitconfig,
// in the errors of GitHub's: a name taken is github.ErrConflict, a set gone
// github.ErrNotFound (the listener finds or makes another).
func (k *Kubernetes) scaleSetJIT(ctx context.Context, in RunnerPodInput) (func() (github.JITConfig, error), error) {
	if k.ScaleSets == nil {
		return nil, errors.New("this worker has no Actions service client: runners of a scale set cannot register")
	}
	scope := scopeOf(in)
	client, err := k.ScaleSets(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("scale set client for %s: %w", scope, err)
	}
	return func() (github.JITConfig, error) {
		config, err := client.GenerateJITConfig(ctx, scope, in.ScaleSetID, in.Name, in.Spec.WorkDir)
		switch {
		case errors.Is(err, scaleset.ErrRunnerExists):
			return config, fmt.Errorf("%w: %w", github.ErrConflict, err)
		case errors.Is(err, scaleset.ErrScaleSetNotFound):
			return config, fmt.Errorf("%w: %w", github.ErrNotFound, err)
		}
		return config, err
	}, nil
}
