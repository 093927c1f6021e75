package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/adkhost/adkhost/host/appdef"
	"github.com/adkhost/adkhost/store/bolt"
)

// appJSON is an app as the admin API shows it.
type appJSON struct {
	Name      string            `json:"name"`
	Version   int               `json:"version"`
	Created   time.Time         `json:"created"`
	Status    string            `json:"status"` // "serving" or "failed"
	Error     string            `json:"error,omitempty"`
	RootAgent string            `json:"rootAgent,omitempty"`
	Modules   []string          `json:"modules,omitempty"`
	Root      string            `json:"root,omitempty"`
	Files     map[string]string `json:"files,omitempty"`
	Versions  []int             `json:"versions,omitempty"`
	// Pins: the full digest each short digest of the files named when
	// the app was registered, and still names.
	Pins map[string]string `json:"pins,omitempty"`
	// Warnings: what loaded but will not work as written (a model with no
	// backend on this server).
	Warnings []string `json:"warnings,omitempty"`
}

// putApp registers or replaces an app: PUT /admin/v1/apps/{name} with a
// YAML body (the root agent's config) or a multipart bundle of files.
// The definition is loaded before it is stored, so a definition that does
// not load never replaces a working one; once stored, the new version
// serves new runs at once while runs in flight finish on the old one.
func (s *Server) putApp(c echo.Context) error {
	name := c.Param("name")
	if !validName.MatchString(name) {
		return errorf(http.StatusBadRequest, "invalid app name "+strconv.Quote(name)+": use letters, digits, '_', '.', '-'")
	}
	def, err := s.readDefinition(c)
	if err != nil {
		return err
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	ctx := c.Request().Context()
	la, err := s.load(ctx, name, 0, time.Time{}, def)
	if err != nil {
		return loadError(err)
	}
	if len(la.pins) > 0 {
		def.Pins = la.pins
	}
	stored, err := s.cfg.Stores.Registry.PutApp(ctx, name, mustJSON(def))
	if err != nil {
		la.retire()
		return wrapErr(http.StatusInternalServerError, "storing the app", err)
	}
	la.version, la.created = stored.Version, stored.Created
	prev := s.apps.get(name)
	s.apps.swap(la)
	s.log.Info("app registered", "app", name, "version", stored.Version)
	status := http.StatusCreated
	if prev != nil {
		status = http.StatusOK
	}
	return c.JSON(status, s.describeApp(la, false))
}

// loadError maps a failed load to 422 with the definition errors located:
// {"error": ..., "errors": [{file, line, column, field, message}], and the
// first error's file/line/column/field at the top level}.
func loadError(err error) error {
	var list []map[string]any
	for _, e := range flatten(err) {
		var de *appdef.Error
		if errors.As(e, &de) {
			list = append(list, map[string]any{"file": de.File, "line": de.Line, "column": de.Column, "field": de.Field, "message": de.Msg})
		}
	}
	extra := map[string]any{}
	if len(list) > 0 {
		extra["errors"] = list
		for _, k := range []string{"file", "line", "column", "field"} {
			extra[k] = list[0][k]
		}
	}
	if errors.Is(err, bolt.ErrModuleNotFound) {
		extra["reason"] = "module_not_found"
	}
	return &apiError{Status: http.StatusUnprocessableEntity, Msg: "app definition does not load", Err: err, Extra: extra}
}

// flatten returns the leaves of errors.Join trees.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// readDefinition reads a YAML body or a multipart bundle.
func (s *Server) readDefinition(c echo.Context) (definition, error) {
	limit := s.cfg.Limits.DefinitionBytes
	mt, params, err := mime.ParseMediaType(c.Request().Header.Get("Content-Type"))
	if err != nil {
		return definition{}, errorf(http.StatusUnsupportedMediaType, "missing or invalid Content-Type: send application/yaml, text/yaml or multipart/form-data")
	}
	switch mt {
	case "application/yaml", "text/yaml", "application/x-yaml", "text/x-yaml":
		b, err := readBody(c, limit)
		if err != nil {
			return definition{}, err
		}
		if len(b) == 0 {
			return definition{}, errorf(http.StatusBadRequest, "empty body: send the root agent's YAML")
		}
		return definition{Root: defaultRoot, Files: map[string][]byte{defaultRoot: b}}, nil
	case "multipart/form-data":
		return readBundle(c, params["boundary"], limit)
	}
	return definition{}, errorf(http.StatusUnsupportedMediaType, "unsupported Content-Type "+strconv.Quote(mt)+": send application/yaml, text/yaml or multipart/form-data")
}

// readBundle reads a multipart bundle: each part a file, named by its
// filename (or its form field name), a relative path. The root agent's
// config is root_agent.yaml.
func readBundle(c echo.Context, boundary string, limit int64) (definition, error) {
	if boundary == "" {
		return definition{}, errorf(http.StatusBadRequest, "multipart body without a boundary")
	}
	r := c.Request()
	if r.ContentLength > limit {
		return definition{}, &http.MaxBytesError{Limit: limit}
	}
	mr := multipart.NewReader(http.MaxBytesReader(c.Response(), r.Body, limit), boundary)
	def := definition{Root: defaultRoot, Files: map[string][]byte{}}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return def, bundleErr(err)
		}
		name := p.FileName()
		if name == "" {
			name = p.FormName()
		}
		clean := path.Clean(strings.ReplaceAll(name, "\\", "/"))
		if name == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return def, errorf(http.StatusBadRequest, "bundle file name "+strconv.Quote(name)+" must be a relative path inside the bundle")
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return def, bundleErr(err)
		}
		if _, dup := def.Files[clean]; dup {
			return def, errorf(http.StatusBadRequest, "bundle has file "+strconv.Quote(clean)+" twice")
		}
		def.Files[clean] = b
	}
	if _, ok := def.Files[defaultRoot]; !ok {
		return def, errorf(http.StatusBadRequest, "bundle has no "+defaultRoot+" (the root agent's config)")
	}
	return def, nil
}

func bundleErr(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	var ae *apiError // the body timeout's 408 (clientTimeouts)
	if errors.As(err, &ae) {
		return ae
	}
	return wrapErr(http.StatusBadRequest, "reading the multipart bundle", err)
}

func (s *Server) describeApp(la *loadedApp, withFiles bool) appJSON {
	out := appJSON{Name: la.name, Version: la.version, Created: la.created, Status: "serving", RootAgent: la.app.Root.Info().Name,
		Warnings: la.app.Warnings}
	for d := range la.app.Modules {
		out.Modules = append(out.Modules, d)
	}
	return out
}

func (s *Server) listApps(c echo.Context) error {
	stored, err := s.cfg.Stores.Registry.Apps(c.Request().Context())
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "listing apps", err)
	}
	out := make([]appJSON, 0, len(stored))
	for _, a := range stored {
		out = append(out, s.appStatus(a))
	}
	return c.JSON(http.StatusOK, out)
}

// appStatus describes a stored app version with what the server does
// with it.
func (s *Server) appStatus(a bolt.App) appJSON {
	out := appJSON{Name: a.Name, Version: a.Version, Created: a.Created, Status: "failed"}
	if la := s.apps.get(a.Name); la != nil {
		j := s.describeApp(la, false)
		j.Version, j.Created = a.Version, a.Created
		if la.version != a.Version {
			j.Error = fmt.Sprintf("serving version %d", la.version)
		}
		return j
	}
	if err := s.apps.loadError(a.Name); err != nil {
		out.Error = err.Error()
	}
	return out
}

// getApp returns an app's newest definition (files as text) and versions.
func (s *Server) getApp(c echo.Context) error {
	ctx := c.Request().Context()
	name := c.Param("name")
	a, err := s.cfg.Stores.Registry.App(ctx, name, bolt.LatestVersion)
	if errors.Is(err, bolt.ErrAppNotFound) {
		return errorf(http.StatusNotFound, "app "+strconv.Quote(name)+" not found")
	}
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "reading app", err)
	}
	def, err := decodeDefinition(a.Definition)
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "reading app", err)
	}
	out := s.appStatus(a)
	out.Root = def.Root
	out.Pins = def.Pins
	out.Files = map[string]string{}
	for p, b := range def.Files {
		if utf8.Valid(b) {
			out.Files[p] = string(b)
		}
	}
	if out.Versions, err = s.cfg.Stores.Registry.AppVersions(ctx, name); err != nil {
		return wrapErr(http.StatusInternalServerError, "reading app versions", err)
	}
	return c.JSON(http.StatusOK, out)
}

// deleteApp stops serving an app and removes its definitions. Its sessions
// stay in the store, as google-adk keeps sessions of agents it unloads.
func (s *Server) deleteApp(c echo.Context) error {
	name := c.Param("name")
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	ctx := c.Request().Context()
	_, err := s.cfg.Stores.Registry.AppVersions(ctx, name)
	if errors.Is(err, bolt.ErrAppNotFound) {
		return errorf(http.StatusNotFound, "app "+strconv.Quote(name)+" not found")
	}
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "reading app", err)
	}
	if err := s.cfg.Stores.Registry.DeleteApp(ctx, name); err != nil {
		return wrapErr(http.StatusInternalServerError, "deleting app", err)
	}
	s.apps.remove(name)
	s.log.Info("app deleted", "app", name)
	return c.NoContent(http.StatusNoContent)
}
