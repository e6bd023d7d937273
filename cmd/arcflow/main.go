// Command arcflow is the arcflow CLI: `arcflow worker` runs the workflows and the
// Kubernetes watchers, `arcflow webhook` the GitHub webhook server, `arcflow all`
// both in one process; `scale`,
// `status`, `setup` and `drain` talk to Temporal for a person.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

// usage lists the commands this build has (see commands).
var usage = "usage: arcflow <command> [flags]\n\ncommands:\n" + commandList +
	"  version   print the version\n\n`arcflow <command> --help` lists a command's flags."

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "--help" || os.Args[1] == "-h" {
		fmt.Println(usage)
		return
	}
	commands := commands()
	commands["version"] = func([]string) error { fmt.Println("arcflow", buildVersion()); return nil }
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
