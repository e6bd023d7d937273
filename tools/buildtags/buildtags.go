package buildtags

import "strings"

// Release are the tags of every shipped binary. grpcnotrace and retrynotrace
// keep golang.org/x/net/trace out (grpc and the Temporal SDK's retry
// interceptor import it for /debug/requests, which arcflow never serves). That
// package links html/template, whose reflective method calls make the linker
// keep every exported method of every type: without it the webhook server's
// binary is about a quarter smaller, and so are the pages it keeps resident.
const Release = "grpcnotrace,retrynotrace"

// WebhookOnly is the webhook server alone (arcflow-webhook in the image).
const WebhookOnly = "webhookonly"

// With is Release plus extra tags, as go build's -tags takes them.
func With(extra ...string) string {
	return strings.Join(append([]string{Release}, extra...), ",")
}
