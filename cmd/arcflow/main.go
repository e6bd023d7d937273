// Command arcflow is the arcflow CLI. Today it reports its version; the worker,
// webhook, dev, scale and status subcommands arrive with their issues.
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
		fmt.Println("usage: arcflow <command>\n\ncommands:\n  version   print the version")
		return
	}
	switch os.Args[1] {
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
