// Package modbuild builds adkhost modules from source in the languages
// whose toolchains adkhost drives itself: `adkhost module build weather.py`.
// Each language is a Builder in a file of its own (python.go, ...); Build
// picks the builder for a source file or folder and runs it. The builders
// find their runtimes (interpreters built for WASI, snapshot tools) in a
// directory the Makefile fills from the package registries, and say exactly
// what is missing when they cannot.
package modbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Options say what to build.
type Options struct {
	// Source is a source file or a folder.
	Source string
	// Output is the .wasm file to write.
	Output string
	// Name is the module's name in its describe message; empty: the
	// source's file or folder name.
	Name string
	// Capabilities are asked for in the describe message (ABI.md §8), in
	// addition to those the source asks for itself.
	Capabilities []string
	// Main names the module to import when Source is a folder (Python: a
	// module or package inside it; TypeScript: a file inside it); empty:
	// the builder decides.
	Main string
	// Paths are extra directories of dependencies (Python: pure-Python
	// packages, e.g. a virtualenv's site-packages; TypeScript: directories
	// like node_modules that bare imports resolve in), used at build time.
	Paths []string
	// RuntimeDir overrides where the builder looks for its runtime.
	RuntimeDir string
	// Stderr receives the toolchain's output (build-time errors, tracebacks).
	Stderr io.Writer
}

// Builder builds modules written in one language.
type Builder interface {
	// Language names the language ("python").
	Language() string
	// Accepts reports whether the builder builds source, a file or a folder.
	Accepts(source string) bool
	// Build writes the module.
	Build(ctx context.Context, opt Options) error
}

// Builders are the languages `module build` knows.
func Builders() []Builder {
	return []Builder{Python{}, TypeScript{}}
}

// Build builds opt.Source with the builder that accepts it.
func Build(ctx context.Context, opt Options) error {
	if opt.Stderr == nil {
		opt.Stderr = io.Discard
	}
	if _, err := os.Stat(opt.Source); err != nil {
		return fmt.Errorf("source: %w", err)
	}
	var langs, accepted []string
	var builder Builder
	for _, b := range Builders() {
		langs = append(langs, b.Language())
		if b.Accepts(opt.Source) {
			accepted = append(accepted, b.Language())
			if builder == nil {
				builder = b
			}
		}
	}
	if len(accepted) > 1 {
		// A folder of sources in two languages: guessing would build the
		// wrong program.
		return fmt.Errorf("%s holds sources of %s: pass the file that declares the module instead of the folder",
			opt.Source, strings.Join(accepted, " and "))
	}
	if builder != nil {
		if opt.Output == "" {
			opt.Output = DefaultOutput(opt.Source)
		}
		return builder.Build(ctx, opt)
	}
	return fmt.Errorf("%s: not a source this command builds (%s); build other languages with their own toolchain (README: Writing a tool)",
		opt.Source, strings.Join(langs, ", "))
}

// DefaultOutput is NAME.wasm beside the source for a file, or in the
// current directory for a folder.
func DefaultOutput(source string) string {
	clean := filepath.Clean(source)
	if st, err := os.Stat(clean); err == nil && st.IsDir() {
		return filepath.Base(clean) + ".wasm"
	}
	return strings.TrimSuffix(clean, filepath.Ext(clean)) + ".wasm"
}

// moduleName turns a file or folder name into a module name (ABI.md §7:
// a letter or _, then letters, digits, _ . -).
func moduleName(s string) string {
	var b strings.Builder
	for i, r := range s {
		ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') ||
			(i > 0 && (r == '.' || r == '-' || (r >= '0' && r <= '9')))
		if !ok {
			r = '_'
		}
		b.WriteRune(r)
	}
	out := b.String()
	if len(out) > 64 {
		out = out[:64]
	}
	return out
}
