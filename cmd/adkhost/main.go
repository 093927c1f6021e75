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
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/adkhost/adkhost/abi"
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
	root.Version = versionString()
	root.SetVersionTemplate("adkhost {{.Version}}\n")
	module := &cobra.Command{Use: "module", Short: "Work with Wasm modules"}
	module.AddCommand(newInspect(), newModuleBuild(), newModuleUpload(), newModuleList(), newModuleDelete())
	app := &cobra.Command{Use: "app", Short: "Manage the apps of a running server"}
	app.AddCommand(newAppRegister(), newAppList(), newAppDelete())
	root.AddCommand(module, app, newServe(), newRun(), &cobra.Command{
		Use:   "version",
		Short: "Print adkhost's version, ABI version and Go version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "adkhost %s\n", versionString())
		},
	})
	return root
}

// versionString is the release version (set with -ldflags "-X
// main.version=…") or, for a build from a checkout, the commit it was built
// from; then the guest ABI and Go versions.
func versionString() string {
	v := version
	if info, ok := debug.ReadBuildInfo(); ok && v == "dev" {
		var rev, dirty string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value[:min(len(s.Value), 12)]
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			v += " (" + rev + dirty + ")"
		}
	}
	return fmt.Sprintf("%s, abi v%d, %s %s/%s", v, abi.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
