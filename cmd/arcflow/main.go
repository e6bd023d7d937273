// Command arcflow is the arcflow CLI: `arcflow worker` runs the workflows and the
// Kubernetes watchers, `arcflow webhook` the GitHub webhook server, `arcflow all`
// both in one process; `scale`,
// `status` and `setup` talk to Temporal for a person.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

const usage = `usage: arcflow <command> [flags]

commands:
  worker    run the Temporal worker and the Kubernetes watchers
  webhook   run the GitHub webhook server
  all       run the worker and the webhook server in one process
  scale     hold an autoscaler at N replicas for a while (force-scale)
  status    a table of autoscalers, pools and runners, from their state queries
  setup     register arcflow's search attributes in the Temporal namespace
  version   print the version

` + "`arcflow <command> --help`" + ` lists a command's flags.`

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "--help" || os.Args[1] == "-h" {
		fmt.Println(usage)
		return
	}
	commands := map[string]func([]string) error{
		"worker": runWorker, "webhook": runWebhook, "all": runAll, "scale": runScale, "status": runStatus, "setup": runSetup,
		"version": func([]string) error { fmt.Println("arcflow", buildVersion()); return nil },
	}
	run, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "arcflow: unknown command %q\n\n%s\n", os.Args[1], usage)
		os.Exit(2)
	}
	if err := run(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "arcflow %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "dev"
}
