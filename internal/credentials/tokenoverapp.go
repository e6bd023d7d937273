package credentials

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/github"
)

// ARC reads a Secret (or environment) that holds both a token and GitHub App
// keys and authenticates with the token, ignoring the App keys. arcflow does
// the same, so an ARC installation's Secret keeps working at cut-over, and
// says so: the worker logs a warning for its own credentials, and the
// Resolver records an event on a githubAPICredentialsFrom Secret.

// TokenOverAppReason is the reason of the event on a Secret that holds both.
const TokenOverAppReason = "TokenOverAppKeys"

// TokenOverAppMessage is that event's message (it names keys, never values).
const TokenOverAppMessage = "this Secret holds both github_token and GitHub App keys (github_app_id, " +
	"github_app_installation_id, github_app_private_key); arcflow uses the token, as ARC does"

// appSecretKeys are a Secret's GitHub App keys.
var appSecretKeys = []string{"github_app_id", "github_app_installation_id", "github_app_private_key"}

// TokenOverApp is cfg as ARC uses it: when it holds a token, without its GitHub
// App fields. both reports that it held a token and an App field, for the
// caller to say so.
func TokenOverApp(cfg github.Config) (out github.Config, both bool) {
	if cfg.Token == "" || (cfg.AppID == 0 && cfg.AppInstallationID == 0 && cfg.AppPrivateKey == "") {
		return cfg, false
	}
	cfg.AppID, cfg.AppInstallationID, cfg.AppPrivateKey = 0, 0, ""
	return cfg, true
}

// tokenOverAppKeys is a Secret's data as ARC reads it: when it holds a
// github_token, without its App keys. both reports that an App key had a value
// too. data itself is left as it is (it is the informer's or the API's copy).
func tokenOverAppKeys(data map[string][]byte) (out map[string][]byte, both bool) {
	if len(data["github_token"]) == 0 {
		return data, false
	}
	present := false
	for _, key := range appSecretKeys {
		if _, ok := data[key]; ok {
			present = true
			both = both || len(data[key]) > 0
		}
	}
	if !present {
		return data, false
	}
	out = maps.Clone(data)
	for _, key := range appSecretKeys {
		delete(out, key)
	}
	return out, both
}

// announceTokenOverApp records one event on a Secret that holds both a token
// and App keys, once per resourceVersion of it: each read of the Secret asks,
// and only a changed Secret is announced again. An event that cannot be
// recorded is logged and tried again at the next read; the credentials work
// either way.
func (r *Resolver) announceTokenOverApp(ctx context.Context, secret *corev1.Secret) {
	ref := secret.Namespace + "/" + secret.Name
	r.mu.Lock()
	if r.announced == nil {
		r.announced = map[string]string{}
	}
	if r.announced[ref] == secret.ResourceVersion {
		r.mu.Unlock()
		return
	}
	r.announced[ref] = secret.ResourceVersion
	r.mu.Unlock()
	if err := r.recordEvent(ctx, secret); err != nil {
		r.mu.Lock()
		if r.announced[ref] == secret.ResourceVersion {
			delete(r.announced, ref)
		}
		r.mu.Unlock()
		if r.Log != nil {
			r.Log.Warn("cannot record the event on a Secret that holds both a token and GitHub App keys", "secret", ref, "error", err)
		}
	}
}

// recordEvent records TokenOverAppReason on the Secret, as
// activities.RecordEvent records events on resources.
func (r *Resolver) recordEvent(ctx context.Context, secret *corev1.Secret) error {
	now := metav1.Now()
	on := corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: secret.Namespace, Name: secret.Name,
		UID: secret.UID, ResourceVersion: secret.ResourceVersion}
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: secret.Name + ".", Namespace: secret.Namespace},
		InvolvedObject: on,
		Reason:         TokenOverAppReason, Message: TokenOverAppMessage, Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "arcflow"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := r.Kube.CoreV1().Events(secret.Namespace).Create(ctx, event, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("event on Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return nil
}
