// Command arcflow is the arcflow CLI: `arcflow worker` runs the workflows and the
// Kubernetes watchers. The webhook, dev, scale and status subcommands arrive with
// their issues.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "--help" || os.Args[1] == "-h" {
		fmt.Println("usage: arcflow <command> [flags]\n\ncommands:\n  worker    run the Temporal worker and the Kubernetes watchers\n  webhook   run the GitHub webhook server\n  version   print the version\n\n`arcflow <command> --help` lists a command's flags.")
		return
	}
	switch os.Args[1] {
	case "worker":
		if err := runWorker(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "arcflow worker:", err)
			os.Exit(1)
		}
	case "webhook":
		if err := runWebhook(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "arcflow webhook:", err)
			os.Exit(1)
		}
	case "version":
		fmt.Println("arcflow", buildVersion())
	default:
		fmt.Fprintf(os.Stderr, "arcflow: unknown command %q (try arcflow help)\n", os.Args[1])
		os.Exit(2)
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
