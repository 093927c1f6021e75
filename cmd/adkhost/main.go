// Command adkhost runs Google ADK-style agents whose tools, callbacks and
// plugins are sandboxed WebAssembly modules. Today it offers
// `adkhost module inspect`; the server and the other commands come later.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
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
	module.AddCommand(newInspect())
	root.AddCommand(module)
	return root
}
