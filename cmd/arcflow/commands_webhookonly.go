//go:build webhookonly

package main

// A build with -tags webhookonly is the webhook server alone (arcflow-webhook in
// the image): it links no workflow code and no typed Kubernetes client, which
// keeps its resident memory about 19 MiB below the full binary's.
func commands() map[string]func([]string) error {
	return map[string]func([]string) error{"webhook": runWebhook}
}

const commandList = `  webhook   run the GitHub webhook server
`
