//go:build !webhookonly

package main

// commands are the commands of the full arcflow binary.
func commands() map[string]func([]string) error {
	return map[string]func([]string) error{
		"worker": runWorker, "webhook": runWebhook, "all": runAll, "scale": runScale, "status": runStatus, "setup": runSetup,
		"drain": runDrain,
	}
}

const commandList = `  worker    run the Temporal worker and the Kubernetes watchers
  webhook   run the GitHub webhook server
  all       run the worker and the webhook server in one process
  scale     hold an autoscaler at N replicas for a while (force-scale)
  status    a table of autoscalers, pools and runners, from their state queries
  setup     register arcflow's search attributes in the Temporal namespace
  drain     stop creating runners in a namespace and wait until none is left (--undo resumes)
`
