package credentials

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/github"
)

// ErrInvalid says a Secret is missing or does not hold a credential set. Its
// messages name the Secret and its keys, never their values.
var ErrInvalid = errors.New("github credentials secret is missing or invalid")

// DefaultRecheck is how long a Secret read stays trusted.
const DefaultRecheck = time.Minute

// Resolver builds and keeps one client per credential set.
type Resolver struct {
	Kube kubernetes.Interface
	// Worker is the worker's own configuration: the URLs a Secret without its
	// own inherits.
	Worker github.Config
	// Options build every client (metrics, transport).
	Options github.Options
	// Recheck is how long a Secret read is trusted before it is read again, so
	// a rotated Secret takes effect within it (DefaultRecheck). A Secret whose
	// data did not change keeps its client, and so its caches.
	Recheck time.Duration
	// Log, when set, gets what cannot be said on the Secret itself.
	Log *slog.Logger

	mu   sync.Mutex
	sets map[string]*set // by namespace/name
	// announced is the resourceVersion of each Secret whose token-over-App
	// event was recorded, by namespace/name.
	announced map[string]string
}

type set struct {
	digest  [sha256.Size]byte
	client  *github.Client
	checked time.Time
}

// For returns the client of the Secret ref ("namespace/name").
func (r *Resolver) For(ctx context.Context, ref string) (*github.Client, error) {
	recheck := r.Recheck
	if recheck <= 0 {
		recheck = DefaultRecheck
	}
	r.mu.Lock()
	cur := r.sets[ref]
	r.mu.Unlock()
	if cur != nil && time.Since(cur.checked) < recheck {
		return cur.client, nil
	}
	data, err := r.read(ctx, ref)
	if err != nil {
		return nil, err
	}
	digest := digestOf(data)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sets == nil {
		r.sets = map[string]*set{}
	}
	if cur = r.sets[ref]; cur != nil && cur.digest == digest {
		cur.checked = time.Now()
		return cur.client, nil
	}
	cfg, err := github.ConfigFromSecret(data, r.Worker)
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w: %w", ref, ErrInvalid, err)
	}
	client, err := github.New(cfg, r.Options)
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w: %w", ref, ErrInvalid, err)
	}
	r.sets[ref] = &set{digest: digest, client: client, checked: time.Now()}
	return client, nil
}

// Check reads and validates the Secret ref without keeping a client, for the
// watcher to report a bad Secret on the resource that names it. A Secret with
// both a token and App keys is valid: the token is used, as in ARC.
func (r *Resolver) Check(ctx context.Context, ref string) error {
	data, err := r.read(ctx, ref)
	if err != nil {
		return err
	}
	if _, err := github.ConfigFromSecret(data, r.Worker); err != nil {
		return fmt.Errorf("secret %s: %w: %w", ref, ErrInvalid, err)
	}
	return nil
}

// read returns the Secret's data as ARC reads it (the token over App keys,
// announced on the Secret once per version).
func (r *Resolver) read(ctx context.Context, ref string) (map[string][]byte, error) {
	namespace, name, ok := strings.Cut(ref, "/")
	if !ok || namespace == "" || name == "" {
		return nil, fmt.Errorf("secret reference %q: %w: want namespace/name", ref, ErrInvalid)
	}
	secret, err := r.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("secret %s: %w: not found", ref, ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", ref, err)
	}
	data, both := tokenOverAppKeys(secret.Data)
	if both {
		r.announceTokenOverApp(ctx, secret)
	}
	return data, nil
}

func digestOf(data map[string][]byte) [sha256.Size]byte {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s%d:", len(k), k, len(data[k]))
		h.Write(data[k])
	}
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out
}
