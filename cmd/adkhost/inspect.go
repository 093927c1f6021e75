package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

func newInspect() *cobra.Command {
	var asJSON bool
	var cacheDir string
	cmd := &cobra.Command{
		Use:   "inspect FILE.wasm",
		Short: "Print what a module declares, or why it is refused",
		Long: "Loads the module as the server would (ABI version, exports, describe message)\n" +
			"and prints its name, transport, hooks, capabilities and tools.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			rt, err := sandbox.New(cmd.Context(), sandbox.Config{CacheDir: cacheDir})
			if err != nil {
				return err
			}
			defer rt.Close(cmd.Context())
			m, err := rt.Load(cmd.Context(), wasm)
			if err != nil {
				return fmt.Errorf("%s is refused: %w", args[0], err)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Digest    string        `json:"digest"`
					Transport string        `json:"transport"`
					Bytes     int           `json:"bytes"`
					Describe  *abi.Describe `json:"describe"`
				}{m.Digest(), m.Transport().String(), len(wasm), m.Describe()})
			}
			printDescribe(cmd.OutOrStdout(), m, len(wasm))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
	cmd.Flags().StringVar(&cacheDir, "cache-dir", defaultCacheDir(), "compilation cache directory (empty: no cache)")
	return cmd
}

// defaultCacheDir is the user's cache directory for compiled modules.
func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "adkhost", "compiled")
}

func printDescribe(w io.Writer, m *sandbox.Module, size int) {
	d := m.Describe()
	name := d.Name
	if d.Version != "" {
		name += " " + d.Version
	}
	fmt.Fprintf(w, "module       %s\n", name)
	fmt.Fprintf(w, "digest       %s\n", m.Digest())
	fmt.Fprintf(w, "transport    %s (ABI v%d), %d bytes\n", m.Transport(), abi.Version, size)
	fmt.Fprintf(w, "hooks        %s\n", joinOrNone(d.Hooks))
	fmt.Fprintf(w, "capabilities %s\n", joinOrNone(d.Capabilities))
	for _, t := range d.Tools {
		long := ""
		if t.LongRunning {
			long = " (long-running)"
		}
		desc, _, _ := strings.Cut(t.Description, "\n")
		fmt.Fprintf(w, "tool         %s%s: %s\n", t.Name, long, desc)
		if len(t.Parameters) > 0 {
			fmt.Fprintf(w, "  parameters %s\n", t.Parameters)
		}
	}
}

func joinOrNone[T ~string](xs []T) string {
	if len(xs) == 0 {
		return "none"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}
