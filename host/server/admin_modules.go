package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/internal/suggest"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/store/bolt"
)

// validName is what module and app names may be: they appear in URLs,
// definitions and metric labels.
var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,127}$`)

// moduleJSON is a module as the admin API shows it.
type moduleJSON struct {
	Name     string            `json:"name"`
	Digest   string            `json:"digest"`
	Size     int64             `json:"size"`
	Created  time.Time         `json:"created"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Describe *abi.Describe     `json:"describe,omitempty"`
	UsedBy   []string          `json:"usedBy,omitempty"`
	// Newest says this is the version a reference by name resolves to.
	Newest bool `json:"newest,omitempty"`
	// Upload only: Unchanged says the server already had these bytes under
	// this name; Reloaded lists the apps that moved to this version;
	// ReloadErrors the apps that could not, and still serve the old one.
	Unchanged    bool              `json:"unchanged,omitempty"`
	Reloaded     []string          `json:"reloaded,omitempty"`
	ReloadErrors map[string]string `json:"reloadErrors,omitempty"`
}

func toModuleJSON(info bolt.ModuleInfo) moduleJSON {
	return moduleJSON{Name: info.Name, Digest: "sha256:" + info.SHA256, Size: info.Size, Created: info.Created, Metadata: info.Metadata}
}

// putModule validates, compiles and stores a module: PUT
// /admin/v1/modules/{name}, the body being the .wasm. Validation is the
// sandbox's Load (ABI version, imports, exports, describe), which also
// compiles the module into the runtime and its disk cache, so the first
// app that uses it does not pay for the compile.
func (s *Server) putModule(c echo.Context) error {
	name := c.Param("name")
	if !validName.MatchString(name) {
		return errorf(http.StatusBadRequest, "invalid module name "+strconv.Quote(name)+": use letters, digits, '_', '.', '-'")
	}
	if isHexPrefix(name) || isHexDigest(name) {
		// GET and DELETE /modules/{ref} read such a ref as a short digest
		// first: the name would reach another module, or none.
		return errorf(http.StatusBadRequest, "invalid module name "+strconv.Quote(name)+": 8 or more hex digits read as a digest; add a letter other than a-f")
	}
	wasm, err := readBody(c, s.cfg.Limits.ModuleBytes)
	if err != nil {
		return err
	}
	if len(wasm) == 0 {
		return errorf(http.StatusBadRequest, "empty body: send the module's .wasm bytes")
	}
	ctx := c.Request().Context()
	m, err := s.cfg.Runtime.Load(ctx, wasm)
	if err != nil {
		if ctx.Err() != nil {
			return wrapErr(499, "upload canceled", err)
		}
		return &apiError{Status: http.StatusUnprocessableEntity, Msg: "module refused", Err: err,
			Extra: map[string]any{"reason": refusalReason(err)}}
	}
	d := m.Describe()
	meta := map[string]string{
		"module": d.Name, "version": d.Version,
		"transport": m.Transport().String(), "abi": strconv.Itoa(abi.Version),
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	prev, existsErr := s.cfg.Stores.Registry.ModuleInfo(ctx, strings.TrimPrefix(m.Digest(), "sha256:"))
	unchanged := existsErr == nil && prev.Name == name
	info, err := s.cfg.Stores.Registry.PutModule(ctx, wasm, name, meta)
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "storing the module", err)
	}
	out := toModuleJSON(info)
	out.Describe = d
	out.Unchanged = unchanged
	if newest, err := findModule(ctx, s.cfg.Stores.Registry, name, ""); err == nil {
		out.Newest = newest.SHA256 == info.SHA256
	}
	if out.Newest && !unchanged {
		out.Reloaded, out.ReloadErrors = s.followNewest(ctx, name)
	}
	out.UsedBy = s.apps.usersOf(info.SHA256)
	s.log.Info("module stored", "name", name, "digest", m.Digest(), "size", len(wasm), "unchanged", unchanged, "reloaded", out.Reloaded)
	status := http.StatusCreated
	if existsErr == nil {
		status = http.StatusOK
	}
	return c.JSON(status, out)
}

// followNewest reloads the served apps that use an older module uploaded
// under name, so that a reference by name keeps meaning the newest upload
// (as it does when the server starts). A reference pinned by digest or by
// describe version resolves as before, and such an app is left alone. Runs
// in flight finish on the version they started with; an app that fails to
// reload keeps serving its current version. The caller holds adminMu.
func (s *Server) followNewest(ctx context.Context, name string) (reloaded []string, failed map[string]string) {
	all, err := s.cfg.Stores.Registry.Modules(ctx)
	if err != nil {
		return nil, map[string]string{"*": "listing modules: " + err.Error()}
	}
	ofName := map[string]bool{}
	for _, m := range all {
		if m.Name == name {
			ofName[m.SHA256] = true
		}
	}
	for _, appName := range s.apps.names() {
		la := s.apps.get(appName)
		if la == nil || !usesAny(la, ofName) {
			continue
		}
		stored, err := s.cfg.Stores.Registry.App(ctx, appName, la.version)
		var def definition
		if err == nil {
			def, err = decodeDefinition(stored.Definition)
		}
		var next *loadedApp
		if err == nil {
			next, err = s.load(ctx, appName, la.version, la.created, def)
		}
		if err != nil {
			if failed == nil {
				failed = map[string]string{}
			}
			failed[appName] = err.Error()
			s.log.Warn("app keeps its module version: reload failed", "app", appName, "module", name, "err", err)
			continue
		}
		if sameModules(la, next) {
			next.retire() // pinned: nothing moves
			continue
		}
		s.apps.swap(next)
		reloaded = append(reloaded, appName)
		s.log.Info("app moved to the newest module", "app", appName, "module", name)
	}
	return reloaded, failed
}

func usesAny(la *loadedApp, digests map[string]bool) bool {
	for d := range la.app.Modules {
		if digests[strings.TrimPrefix(d, "sha256:")] {
			return true
		}
	}
	return false
}

func sameModules(a, b *loadedApp) bool {
	if len(a.app.Modules) != len(b.app.Modules) {
		return false
	}
	for d := range a.app.Modules {
		if _, ok := b.app.Modules[d]; !ok {
			return false
		}
	}
	return true
}

// refusalReason names the sandbox check a module failed, for scripts.
func refusalReason(err error) string {
	for _, r := range []struct {
		err  error
		name string
	}{
		{sandbox.ErrCompile, "compile"}, {sandbox.ErrNoABIVersion, "no_abi_version"},
		{sandbox.ErrUnknownABIVersion, "unknown_abi_version"}, {sandbox.ErrImport, "import"},
		{sandbox.ErrMissingExport, "missing_export"}, {sandbox.ErrExportSignature, "export_signature"},
		{sandbox.ErrDescribe, "describe"}, {sandbox.ErrTooComplex, "too_complex"},
	} {
		if errors.Is(err, r.err) {
			return r.name
		}
	}
	return "invalid"
}

func (s *Server) listModules(c echo.Context) error {
	all, err := s.cfg.Stores.Registry.Modules(c.Request().Context())
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "listing modules", err)
	}
	newest := map[string]bolt.ModuleInfo{}
	for _, m := range all {
		if n, ok := newest[m.Name]; !ok || m.Created.After(n.Created) {
			newest[m.Name] = m
		}
	}
	out := make([]moduleJSON, 0, len(all))
	for _, m := range all {
		j := toModuleJSON(m)
		j.UsedBy = s.apps.usersOf(m.SHA256)
		j.Newest = newest[m.Name].SHA256 == m.SHA256
		out = append(out, j)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Created.Before(out[j].Created)
	})
	return c.JSON(http.StatusOK, out)
}

// moduleRefs returns the modules a path reference names: a digest
// ("sha256:<hex>" or the bare hex), or every module uploaded under a name.
func (s *Server) moduleRefs(c echo.Context, ref string) ([]bolt.ModuleInfo, error) {
	ctx := c.Request().Context()
	reg := s.cfg.Stores.Registry
	hex := strings.TrimPrefix(ref, "sha256:")
	if isHexDigest(hex) {
		info, err := reg.ModuleInfo(ctx, hex)
		if errors.Is(err, bolt.ErrModuleNotFound) {
			return nil, errorf(http.StatusNotFound, "module "+ref+" not found")
		}
		if err != nil {
			return nil, wrapErr(http.StatusInternalServerError, "reading module", err)
		}
		return []bolt.ModuleInfo{info}, nil
	}
	all, err := reg.Modules(ctx)
	if err != nil {
		return nil, wrapErr(http.StatusInternalServerError, "listing modules", err)
	}
	var out []bolt.ModuleInfo
	// A short digest, as `module list` prints it: a unique prefix of at
	// least 8 hex digits, with or without "sha256:".
	if isHexPrefix(hex) {
		for _, m := range all {
			if strings.HasPrefix(m.SHA256, hex) {
				out = append(out, m)
			}
		}
		if len(out) > 1 {
			return nil, errorf(http.StatusConflict, fmt.Sprintf("digest prefix %s matches %d modules: give more digits", ref, len(out)))
		}
		if len(out) == 1 {
			return out, nil
		}
		if strings.HasPrefix(ref, "sha256:") {
			return nil, errorf(http.StatusNotFound, "no module has a digest starting with "+ref)
		}
	}
	for _, m := range all {
		if m.Name == ref {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		msg := "module " + strconv.Quote(ref) + " not found"
		msg += suggest.DidYouMean(ref, moduleNames(all))
		return nil, errorf(http.StatusNotFound, msg)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, nil
}

// isHexPrefix reports whether s could be a short digest: 8 to 63 lowercase
// hex digits.
func isHexPrefix(s string) bool {
	return len(s) >= 8 && len(s) < 64 && strings.Trim(s, "0123456789abcdef") == ""
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// getModule describes a module (the newest one, for a name): its describe
// message, digest, size and the apps using it.
func (s *Server) getModule(c echo.Context) error {
	infos, err := s.moduleRefs(c, c.Param("ref"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	wasm, info, err := s.cfg.Stores.Registry.Module(ctx, infos[0].SHA256)
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "reading module", err)
	}
	// The runtime keeps loaded modules by digest, and the disk cache keeps
	// their machine code, so describing a stored module is cheap.
	m, err := s.cfg.Runtime.Load(ctx, wasm)
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "loading stored module", err)
	}
	out := toModuleJSON(info)
	out.Describe = m.Describe()
	out.UsedBy = s.apps.usersOf(info.SHA256)
	return c.JSON(http.StatusOK, out)
}

// deleteModule deletes a module, or all modules of a name; 409 while a
// served app uses one of them.
func (s *Server) deleteModule(c echo.Context) error {
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	infos, err := s.moduleRefs(c, c.Param("ref"))
	if err != nil {
		return err
	}
	for _, info := range infos {
		if users := s.apps.usersOf(info.SHA256); len(users) > 0 {
			return &apiError{Status: http.StatusConflict,
				Msg:   fmt.Sprintf("module sha256:%s is used by app(s) %s: replace or delete them first", info.SHA256, strings.Join(users, ", ")),
				Extra: map[string]any{"apps": users, "digest": "sha256:" + info.SHA256}}
		}
	}
	for _, info := range infos {
		if err := s.cfg.Stores.Registry.DeleteModule(c.Request().Context(), info.SHA256); err != nil {
			return wrapErr(http.StatusInternalServerError, "deleting module", err)
		}
		s.log.Info("module deleted", "name", info.Name, "digest", "sha256:"+info.SHA256)
	}
	return c.NoContent(http.StatusNoContent)
}
