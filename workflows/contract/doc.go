// Package contract is what other processes share with arcflow's workflows: the
// task queue, workflow IDs, signal and query names, search attributes and memos,
// and the payloads the webhook sends. It links no workflow code and no
// Kubernetes client, so the webhook server that imports it stays small.
package contract
