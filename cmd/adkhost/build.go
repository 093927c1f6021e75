package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/adkhost/adkhost/modbuild"
	"github.com/adkhost/adkhost/sandbox"
)

func newModuleBuild() *cobra.Command {
	var opt modbuild.Options
	var quiet, verbose bool
	var pyRuntime, tsRuntime string
	cmd := &cobra.Command{
		Use:   "build SOURCE [-o OUT.wasm]",
		Short: "Build a module from Python or TypeScript source (a .py, .ts or .js file, or a folder)",
		Long: "Builds a module from source with adkhost's own toolchain (modbuild):\n" +
			"Python (.py, or a folder) imports the code at build time and snapshots the\n" +
			"interpreter (CPython 3.11; sdk/python/README.md). The runtime comes from\n" +
			"`make python-runtime` (--python-runtime or " + modbuild.PythonRuntimeEnv + " to point elsewhere).\n" +
			"TypeScript or JavaScript (.ts, .mts, .js, .mjs, or a folder) is bundled with\n" +
			"esbuild, evaluated at build time and snapshotted (QuickJS-ng;\n" +
			"sdk/typescript/README.md). The runtime comes from `make ts-runtime`\n" +
			"(--ts-runtime or " + modbuild.TSRuntimeEnv + " to point elsewhere).\n" +
			"The module is then loaded as the server would, and its declaration printed.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt.Source = args[0]
			opt.RuntimeDir = pyRuntime
			if !(modbuild.Python{}).Accepts(opt.Source) && (modbuild.TypeScript{}).Accepts(opt.Source) {
				opt.RuntimeDir = tsRuntime
			}
			if opt.Output == "" {
				opt.Output = modbuild.DefaultOutput(opt.Source)
			}
			if verbose {
				opt.Stderr = cmd.ErrOrStderr()
			}
			if err := modbuild.Build(cmd.Context(), opt); err != nil {
				return err
			}
			wasm, err := os.ReadFile(opt.Output)
			if err != nil {
				return err
			}
			rt, err := sandbox.New(cmd.Context(), sandbox.Config{CacheDir: defaultCacheDir()})
			if err != nil {
				return err
			}
			defer rt.Close(cmd.Context())
			m, err := rt.Load(cmd.Context(), wasm)
			if err != nil {
				return fmt.Errorf("built %s, but it is refused: %w", opt.Output, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "built %s\n", opt.Output)
			if !quiet {
				printDescribe(cmd.OutOrStdout(), m, len(wasm))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opt.Output, "output", "o", "", "the module to write (default: NAME.wasm beside a file, or in the current directory for a folder)")
	f.StringVar(&opt.Name, "name", "", "the module's name (default: the file or folder name)")
	f.StringSliceVar(&opt.Capabilities, "capabilities", nil, "capabilities to ask for besides those the source asks for (state,actions,artifacts,config,http,memory,...)")
	f.StringVar(&opt.Main, "main", "", "for a folder: the module that declares the tools (Python: default the package, or the only .py file; TypeScript: a file, default index.ts or the only source file)")
	f.StringSliceVar(&opt.Paths, "path", nil, "directories of dependencies: pure-Python packages (e.g. a virtualenv's site-packages), imported at build time; for TypeScript, directories bare imports resolve in (like node_modules)")
	f.StringVar(&pyRuntime, "python-runtime", "", "the Python runtime directory (default: $"+modbuild.PythonRuntimeEnv+", else build/python-runtime of the checkout)")
	f.StringVar(&tsRuntime, "ts-runtime", "", "the TypeScript runtime directory (default: $"+modbuild.TSRuntimeEnv+", else build/ts-runtime of the checkout)")
	f.BoolVarP(&quiet, "quiet", "q", false, "print only the output path")
	f.BoolVarP(&verbose, "verbose", "v", false, "show the toolchain's output as it runs")
	return cmd
}
