// Command adkhost runs Google ADK-style agents whose tools, callbacks and
// plugins are sandboxed WebAssembly modules: `adkhost serve` is the server
// (admin and run APIs), `adkhost app` and `adkhost module` manage a running
// server, `adkhost run` talks to an app locally, and `adkhost module
// inspect` checks a module offline.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	// SIGTERM too: it is how containers and service managers stop the
	// server, which then drains its runs.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot(os.Stdout).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "adkhost:", err)
		os.Exit(1)
	}
}

// newRoot builds the command tree, writing results to out.
func newRoot(out io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "adkhost",
		Short:         "Run ADK agents whose tools, callbacks and plugins are Wasm modules",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(out)
	module := &cobra.Command{Use: "module", Short: "Work with Wasm modules"}
	module.AddCommand(newInspect(), newModuleUpload(), newModuleList(), newModuleDelete())
	app := &cobra.Command{Use: "app", Short: "Manage the apps of a running server"}
	app.AddCommand(newAppRegister(), newAppList(), newAppDelete())
	root.AddCommand(module, app, newServe(), newRun())
	return root
}
