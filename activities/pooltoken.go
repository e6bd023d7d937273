package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/github"
)

// LabelPoolToken marks a pool's shared registration-token Secret.
const LabelPoolToken = "arcflow.dev/pool-token"

// AnnotationTokenExpires is when the token in a pool's Secret expires (RFC
// 3339). Worker replicas each fetch their own token: the newest one stays,
// instead of the replicas overwriting each other's.
const AnnotationTokenExpires = "arcflow.dev/token-expires-at"

// poolTokenRecheck is how long a written pool token is trusted without an API
// call. Past it, the next runner makes sure the Secret is still there, so one
// deleted by hand is back within this long.
const poolTokenRecheck = time.Minute

// sharesPoolToken: a token runner reads the pool's shared token Secret. Every
// runner of a scope registers with the same hour-long token, so a Secret per
// runner only cost three writes each (create, adopt, delete), one of them
// before the pod. A JIT runner's configuration is its own.
func sharesPoolToken(in RunnerPodInput) bool { return !in.JIT }

// writeCredential writes what the runner registers with: the pool's token, or
// a JIT runner's own configuration, whose GitHub ID it returns.
func (k *Kubernetes) writeCredential(ctx context.Context, in RunnerPodInput) (int64, error) {
	if sharesPoolToken(in) {
		return 0, k.writePoolToken(ctx, in)
	}
	return k.writeJITConfig(ctx, in)
}

// PoolTokenSecretName is the pool's token Secret for the runner's scope and
// credentials: a template that moves the pool to another scope gets a Secret of
// its own, so the old scope's runners keep theirs during the rollout. The kind
// keeps a RunnerDeployment and a RunnerSet of one name apart.
func PoolTokenSecretName(in RunnerPodInput) string {
	sum := sha256.Sum256([]byte(in.Kind + "|" + scopeOf(in).String() + "|" + in.Spec.GitHubAPICredentialsFrom.Ref(in.Namespace)))
	suffix := "-runner-token-" + hex.EncodeToString(sum[:4])
	pool := in.Pool
	if max := 253 - len(suffix); len(pool) > max {
		pool = pool[:max]
	}
	return pool + suffix
}

// runnerSecretName is the Secret the runner's pod reads its credential from.
func runnerSecretName(in RunnerPodInput) string {
	if sharesPoolToken(in) {
		return PoolTokenSecretName(in)
	}
	return TokenSecretName(in.Name)
}

// poolTokens remembers which token this process last wrote into each pool
// Secret, so a pool's runners after the first cost no API call for it, and
// shares one write among the runners of a burst.
type poolTokens struct {
	once    singleflight.Group
	mu      sync.Mutex
	written map[string]writtenToken // by namespace/name
}

type writtenToken struct {
	owner, digest string
	at            time.Time
}

func (p *poolTokens) fresh(key string, want writtenToken) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	got, ok := p.written[key]
	return ok && got.owner == want.owner && got.digest == want.digest && time.Since(got.at) < poolTokenRecheck
}

// known tells whether this process wrote the Secret for this pool before, so
// it most likely exists.
func (p *poolTokens) known(key, owner string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	got, ok := p.written[key]
	return ok && got.owner == owner
}

func (p *poolTokens) remember(key string, w writtenToken) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.written == nil {
		p.written = map[string]writtenToken{}
	}
	p.written[key] = w
}

// writePoolToken makes the pool's token Secret hold the scope's current
// registration token.
func (k *Kubernetes) writePoolToken(ctx context.Context, in RunnerPodInput) error {
	token, err := k.registrationToken(ctx, in)
	if err != nil {
		return err
	}
	name := PoolTokenSecretName(in)
	key := in.Namespace + "/" + name
	sum := sha256.Sum256([]byte(token.Value()))
	want := writtenToken{digest: hex.EncodeToString(sum[:])}
	if in.Owner != nil {
		want.owner = string(in.Owner.UID)
	}
	if k.poolTokens.fresh(key, want) {
		return nil
	}
	_, err, _ = k.poolTokens.once.Do(key+"/"+want.owner+"/"+want.digest, func() (any, error) {
		if k.poolTokens.fresh(key, want) {
			return nil, nil
		}
		if err := k.applyPoolToken(ctx, in, name, token, k.poolTokens.known(key, want.owner)); err != nil {
			return nil, err
		}
		want.at = time.Now()
		k.poolTokens.remember(key, want)
		return nil, nil
	})
	return err
}

// applyPoolToken creates the Secret, or updates the token of the one there
// (first, when it is known to exist) unless that one expires no sooner. A
// Secret of that name that is not this pool's is left alone.
func (k *Kubernetes) applyPoolToken(ctx context.Context, in RunnerPodInput, name string, token github.RegistrationToken, known bool) error {
	secrets := k.Client.CoreV1().Secrets(in.Namespace)
	expires := map[string]string{AnnotationTokenExpires: token.ExpiresAt.UTC().Format(time.RFC3339)}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: in.Namespace, Annotations: expires,
			Labels: map[string]string{LabelPool: in.Pool, LabelPoolToken: "true"}},
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{TokenSecretKey: token.Value()},
	}
	secret.OwnerReferences = deletedWithPool(in.Owner)
	var existing *corev1.Secret
	var err error
	if known {
		existing, err = secrets.Get(ctx, name, metav1.GetOptions{})
	}
	if !known || apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, secret, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return fmt.Errorf("create pool token secret %s/%s: %w", in.Namespace, name, err)
			}
			return nil
		}
		existing, err = secrets.Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("get pool token secret %s/%s: %w", in.Namespace, name, err)
	}
	if existing.Labels[LabelPool] != in.Pool || existing.Labels[LabelPoolToken] != "true" {
		return invalidSpec("secret", in, fmt.Errorf("secret %s exists and is not the pool's token secret (label %s=%s)", name, LabelPoolToken, "true"))
	}
	current := string(existing.Data[TokenSecretKey])
	if v, ok := existing.StringData[TokenSecretKey]; ok {
		current = v // as a client without an API server's conversion keeps it
	}
	if current == token.Value() {
		return nil
	}
	if until, err := time.Parse(time.RFC3339, existing.Annotations[AnnotationTokenExpires]); err == nil && current != "" &&
		!until.Before(token.ExpiresAt.Truncate(time.Second)) {
		return nil // another replica's token, at least as new as this one
	}
	if existing.Annotations == nil {
		existing.Annotations = map[string]string{}
	}
	existing.Annotations[AnnotationTokenExpires] = expires[AnnotationTokenExpires]
	existing.Data, existing.StringData = nil, map[string]string{TokenSecretKey: token.Value()}
	if _, err := secrets.Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
		// The API server's error names the object, not its data.
		return fmt.Errorf("update pool token secret %s/%s: %w", in.Namespace, name, err)
	}
	return nil
}

// readsSecret tells whether any of the pod's containers reads the Secret.
func readsSecret(pod *corev1.Pod, name string) bool {
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == name {
				return true
			}
		}
	}
	return false
}
