package server

// Dev UI support (Config.DevUIDir, `adkhost serve --dev-ui DIR`): serves the
// static Angular build of google-adk's dev UI (google/adk/cli/browser in the
// google-adk wheel; adkhost never ships it) at /dev-ui/ as `adk web` does,
// and answers the few development endpoints the UI calls beyond the run API
// with what google-adk answers for an app with no evals, tests, traces or
// builder files. None of this is mounted without DevUIDir.

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/adkhost/adkhost/engine"
)

// devUIPrefix is where google-adk mounts the UI; its bundle's <base href="./">
// makes every asset URL relative to it.
const devUIPrefix = "/dev-ui/"

// CheckDevUIDir reports whether dir holds a dev UI build (an index.html), so
// that a wrong --dev-ui fails at startup instead of at the first page load.
func CheckDevUIDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("dev UI directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("dev UI directory %s: not a directory", dir)
	}
	if _, err := os.Stat(path.Join(dir, "index.html")); err != nil {
		return fmt.Errorf("dev UI directory %s has no index.html (want google-adk's google/adk/cli/browser): %w", dir, err)
	}
	return nil
}

// devUIRoutes mounts the UI's files on e (open, like google-adk's: a browser
// cannot attach a bearer token to a page load) and its development
// endpoints on run, behind the run token if one is set.
func (s *Server) devUIRoutes(e *echo.Echo, run *echo.Group) {
	// 307 as Starlette's RedirectResponse.
	toUI := func(c echo.Context) error { return c.Redirect(http.StatusTemporaryRedirect, devUIPrefix) }
	e.GET("/", toUI)
	e.GET("/dev-ui", toUI)
	// google-adk generates this file per request instead of reading the one
	// in the build. An empty backendUrl makes the UI call this origin.
	// telemetry false: adkhost collects none, and an unset consent (null)
	// would open google-adk's consent dialog over the chat.
	e.GET(devUIPrefix+"assets/config/runtime-config.json", func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, map[string]any{"backendUrl": "", "telemetry": false})
	})
	e.GET(devUIPrefix+"config", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"logo_text": nil, "logo_image_url": nil})
	})
	e.GET(devUIPrefix+"*", s.devUIFile(os.DirFS(s.cfg.DevUIDir)))

	run.GET("/config/telemetry", telemetryOff)
	run.POST("/config/telemetry", func(c echo.Context) error {
		// google-adk's CSRF guard on this route.
		if c.Request().Header.Get("x-adk-telemetry-request") != "true" {
			return errorf(http.StatusBadRequest, "Forbidden: missing required security header")
		}
		// Nothing to record: adkhost has no telemetry to turn on.
		return telemetryOff(c)
	})

	dev := run.Group("/dev/apps/:app")
	empty := func(c echo.Context) error { return c.JSON(http.StatusOK, []any{}) }
	emptyObject := func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]any{}) }
	dev.GET("/build_graph", s.devBuildGraph)
	// google-adk draws a Graphviz graph of the agent tree here; with no
	// entries the UI shows no graph.
	dev.GET("/build_graph_image", emptyObject)
	dev.GET("/users/:user/sessions/:session/events/:event/graph", emptyObject)
	// The agent builder edits YAML files in `adk web`'s agents directory;
	// adkhost's apps are changed over the admin API, so there is no file ("").
	dev.GET("/builder", func(c echo.Context) error { return c.String(http.StatusOK, "") })
	dev.GET("/eval_sets", empty)
	dev.GET("/eval_results", empty)
	dev.GET("/eval-sets", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"evalSetIds": []string{}})
	})
	dev.GET("/eval-results", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"evalResultIds": []string{}})
	})
	dev.GET("/tests", empty)
	// Spans are exported over OTLP (--otel-endpoint), not kept for the UI.
	dev.GET("/debug/trace/session/:session", empty)
	dev.GET("/debug/trace/:event", func(echo.Context) error {
		return errorf(http.StatusNotFound, "Trace not found")
	})
}

func telemetryOff(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]any{"telemetry": false})
}

// devBuildGraph is google-adk's serialized app info, reduced to the agent
// tree's names and descriptions: what adkhost's engine agents expose.
func (s *Server) devBuildGraph(c echo.Context) error {
	name := c.Param("app")
	la := s.apps.get(name)
	if la == nil {
		return errorf(http.StatusNotFound, "App not found: "+name)
	}
	return c.JSON(http.StatusOK, map[string]any{"name": name, "root_agent": agentTree(la.app.Root, 0)})
}

// agentTree serializes an agent and its sub-agents; depth guards against a
// cyclic tree, which the loader should never build.
func agentTree(a engine.Agent, depth int) map[string]any {
	info := a.Info()
	subs := []map[string]any{}
	if depth < 32 {
		for _, sa := range info.SubAgents {
			subs = append(subs, agentTree(sa, depth+1))
		}
	}
	return map[string]any{"name": info.Name, "description": info.Description, "sub_agents": subs}
}

// devUIFile serves the UI's files from fsys as Starlette's
// StaticFiles(html=True) does: a directory serves its index.html, and a
// missing file is a 404 (google-adk has no single-page-app fallback: the
// UI keeps its state in the query string, so /dev-ui/ is its only page).
func (s *Server) devUIFile(fsys fs.FS) echo.HandlerFunc {
	return func(c echo.Context) error {
		name := strings.TrimPrefix(path.Clean("/"+c.Param("*")), "/")
		if name == "" {
			name = "."
		}
		if !fs.ValidPath(name) {
			return errorf(http.StatusNotFound, "Not Found")
		}
		st, err := fs.Stat(fsys, name)
		if err == nil && st.IsDir() {
			name = path.Join(name, "index.html")
			st, err = fs.Stat(fsys, name)
		}
		if errors.Is(err, fs.ErrNotExist) || (err == nil && st.IsDir()) {
			return errorf(http.StatusNotFound, "Not Found")
		}
		if err != nil {
			return wrapErr(http.StatusInternalServerError, "reading the dev UI", err)
		}
		f, err := fsys.Open(name)
		if err != nil {
			return wrapErr(http.StatusInternalServerError, "reading the dev UI", err)
		}
		defer f.Close()
		rs, ok := f.(interface {
			Read([]byte) (int, error)
			Seek(int64, int) (int64, error)
		})
		if !ok {
			return errorf(http.StatusInternalServerError, "reading the dev UI: file is not seekable")
		}
		// ServeContent sets the type from the extension (.js as JavaScript,
		// which module scripts require), Last-Modified and ranges.
		http.ServeContent(c.Response(), c.Request(), path.Base(name), st.ModTime(), rs)
		return nil
	}
}
