package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/adkhost/adkhost/host/server"
	"github.com/adkhost/adkhost/host/server/adminclient"
)

// clientFlags say how to reach a running server's admin API.
type clientFlags struct {
	server, token, tokenFile, data string
	json                           bool
}

func (f *clientFlags) add(cmd *cobra.Command) {
	url := os.Getenv("ADKHOST_SERVER")
	if url == "" {
		url = "http://localhost:8000"
	}
	cmd.Flags().StringVar(&f.server, "server", url, "server URL (env ADKHOST_SERVER)")
	cmd.Flags().StringVar(&f.token, "token", "", "admin token (default: env ADKHOST_ADMIN_TOKEN, then --token-file)")
	cmd.Flags().StringVar(&f.tokenFile, "token-file", "", "file holding the admin token (default: DIR/"+server.TokenFileName+" of --data)")
	cmd.Flags().StringVar(&f.data, "data", defaultDataDir(), "the server's data directory, where it keeps the admin token it generated (env ADKHOST_DATA)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON")
}

func (f *clientFlags) client() (*adminclient.Client, error) {
	token := f.token
	if token == "" {
		token = strings.TrimSpace(os.Getenv("ADKHOST_ADMIN_TOKEN"))
	}
	if token == "" {
		file := f.tokenFile
		if file == "" {
			file = filepath.Join(f.data, server.TokenFileName)
		}
		t, err := server.ReadToken(file)
		if err != nil {
			return nil, fmt.Errorf("no admin token: pass --token, set ADKHOST_ADMIN_TOKEN, or give the server's data directory with --data (env ADKHOST_DATA; the server writes its token there): %w", err)
		}
		token = t
	}
	return &adminclient.Client{Base: f.server, Token: token}, nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newModuleUpload() *cobra.Command {
	var f clientFlags
	var name string
	cmd := &cobra.Command{
		Use:   "upload FILE.wasm [--name NAME]",
		Short: "Upload a module to a running server (validated and compiled there)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			if name == "" {
				name = strings.TrimSuffix(filepath.Base(args[0]), ".wasm")
			}
			m, err := c.UploadModule(cmd.Context(), name, wasm)
			if err != nil {
				return fmt.Errorf("uploading %s: %w", args[0], err)
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), m)
			}
			printUpload(cmd.OutOrStdout(), m)
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&name, "name", "", "module name (default: the file name without .wasm)")
	return cmd
}

func newModuleList() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the modules of a running server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			ms, err := c.Modules(cmd.Context())
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), ms)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDIGEST\tNEWEST\tSIZE\tVERSION\tUSED BY")
			for _, m := range ms {
				newest := ""
				if m.Newest {
					newest = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", m.Name, shortDigest(m.Digest), newest, m.Size, m.Metadata["version"], strings.Join(m.UsedBy, ","))
			}
			return tw.Flush()
		},
	}
	f.add(cmd)
	return cmd
}

// shortDigest is how `module list` shows a digest: "sha256:" and 12 hex
// digits, which `module delete` and `module: name@sha256:...` accept.
func shortDigest(d string) string {
	return d[:min(len(d), len("sha256:")+12)]
}

// printUpload says what an upload did: a new version (and which apps moved
// to it), or bytes the server already had.
func printUpload(w io.Writer, m adminclient.Module) {
	switch {
	case m.Unchanged:
		fmt.Fprintf(w, "unchanged: %s %s is already on the server (%d bytes)\n", m.Name, shortDigest(m.Digest), m.Size)
	case m.Newest:
		fmt.Fprintf(w, "uploaded %s %s (%d bytes): the newest version, used by references to %q\n", m.Name, shortDigest(m.Digest), m.Size, m.Name)
	default:
		fmt.Fprintf(w, "uploaded %s %s (%d bytes): stored, but an upload made earlier is newer\n", m.Name, shortDigest(m.Digest), m.Size)
	}
	if len(m.Reloaded) > 0 {
		fmt.Fprintf(w, "apps now using it: %s\n", strings.Join(m.Reloaded, ", "))
	}
	for _, app := range slices.Sorted(maps.Keys(m.ReloadErrors)) {
		fmt.Fprintf(w, "app %s still uses the previous version: %s\n", app, m.ReloadErrors[app])
	}
	if !m.Unchanged && len(m.Reloaded) == 0 && len(m.UsedBy) == 0 {
		fmt.Fprintf(w, "no app uses it yet: reference it as {module: %s, ...} in an app definition\n", m.Name)
	}
}

func newModuleDelete() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "delete NAME|DIGEST",
		Short: "Delete a module: every version of a name, or one version by digest (sha256:… as list shows it); refused while an app uses it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			if err := c.DeleteModule(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", args[0])
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

// readDefinition reads an app definition: a YAML file (the root agent's
// config), or a directory holding root_agent.yaml and the files it uses.
func readDefinition(path string) (map[string][]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return map[string][]byte{"root_agent.yaml": b}, nil
	}
	files := map[string][]byte{}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != path {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(path, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if _, ok := files["root_agent.yaml"]; !ok {
		return nil, errors.New(path + " has no root_agent.yaml")
	}
	return files, nil
}

// folderHint: a single YAML file was registered, and the server misses a
// file that sits beside it (a scripted model, a config_path agent), so
// the user meant to register the folder.
func folderHint(path string, err error) string {
	if st, statErr := os.Stat(path); statErr != nil || st.IsDir() {
		return ""
	}
	dir := filepath.Dir(path)
	entries, _ := os.ReadDir(dir)
	var missed []string
	for _, e := range entries {
		if !e.IsDir() && e.Name() != filepath.Base(path) && strings.Contains(err.Error(), e.Name()) {
			missed = append(missed, e.Name())
		}
	}
	if len(missed) == 0 {
		return ""
	}
	return fmt.Sprintf("\nhint: only %s was sent; it uses %s beside it: register the folder instead: adkhost app register %s",
		filepath.Base(path), strings.Join(missed, ", "), dir)
}

func newAppRegister() *cobra.Command {
	var f clientFlags
	var name string
	cmd := &cobra.Command{
		Use:   "register APP_DIR_OR_YAML [--name NAME]",
		Short: "Register or replace an app on a running server",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			files, err := readDefinition(args[0])
			if err != nil {
				return err
			}
			if name == "" {
				name = strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			}
			a, err := c.RegisterApp(cmd.Context(), name, files)
			if err != nil {
				return fmt.Errorf("registering %s: %w%s", name, err, folderHint(args[0], err))
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), a)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "registered %s version %d (root agent %s)\n", a.Name, a.Version, a.RootAgent)
			for _, w := range a.Warnings {
				fmt.Fprintf(cmd.OutOrStdout(), "warning: %s\n", w)
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&name, "name", "", "app name (default: the file or directory name)")
	return cmd
}

func newAppList() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the apps of a running server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			as, err := c.Apps(cmd.Context())
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), as)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tSTATUS\tROOT AGENT\tERROR")
			for _, a := range as {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", a.Name, a.Version, a.Status, a.RootAgent, a.Error)
			}
			return tw.Flush()
		},
	}
	f.add(cmd)
	return cmd
}

func newAppDelete() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an app from a running server (its sessions stay)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			if err := c.DeleteApp(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", args[0])
			return nil
		},
	}
	f.add(cmd)
	return cmd
}
