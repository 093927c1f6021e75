package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host/appdef"
)

// Server serves the admin and run APIs. Make it with New; it is safe for
// concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	echo    *echo.Echo
	apps    *appSet
	reg     *prometheus.Registry
	metrics *metrics
	obs     *observer
	mcp     *mcpApps // nil: no MCP endpoint (no token)
	// mcpStreams is canceled at shutdown: it ends the MCP clients'
	// long-lived GET streams, which would otherwise hold the drain open.
	mcpStreams     context.Context
	stopMCPStreams context.CancelFunc
	// loads numbers loads, for a module owner of each load's own.
	loads atomic.Uint64
	// adminMu serializes admin writes, so that a module in use cannot be
	// deleted while an app that uses it is being registered.
	adminMu sync.Mutex
	// runSlots holds a token per run in flight (Limits.MaxRuns of room).
	runSlots chan struct{}
	// runsRefused counts the runs refused for want of a slot.
	runsRefused prometheus.Counter
	// eventBufs holds writeEvents' buffers (*[]byte): the response
	// writer copies what it is given, so a buffer is free once written.
	eventBufs sync.Pool
}

// New builds a server and loads every app registered in its registry. Apps that
// fail to load are logged and reported by the admin API; they do not fail
// New.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg.Limits = cfg.Limits.withDefaults()
	// Every write of state passes through this one service: runs (the
	// runners get it), PATCH, session creation, MCP tool calls.
	cfg.Stores.Sessions = session.WithDepthLimit(session.WithStateLimit(cfg.Stores.Sessions, cfg.Limits.StateBytes), session.DefaultMaxValueDepth)
	if cfg.Load == nil {
		cfg.Load = appdef.Load
	}
	if cfg.Models == nil {
		cfg.Models = appdef.NewModelRegistryFromEnv(os.Getenv)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if cfg.Memory == nil {
		cfg.Memory = memory.NewInMemoryService()
	}
	s := &Server{cfg: cfg, log: cfg.Logger, apps: newAppSet(), reg: prometheus.NewRegistry(),
		runSlots: make(chan struct{}, cfg.Limits.MaxRuns)}
	var err error
	if s.metrics, err = newMetrics(s.reg, cfg.Runtime); err != nil {
		return nil, err
	}
	s.runsRefused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "adkhost_runs_refused_total", Help: "Runs (and MCP tool calls) refused because Limits.MaxRuns (--max-runs) were in flight.",
	})
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "adkhost_runs_in_flight", Help: "Runs in flight, all apps together, SSE streams for their whole life and MCP tool calls included (at most Limits.MaxRuns).",
		}, func() float64 { return float64(len(s.runSlots)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "adkhost_runs_max", Help: "The bound on runs in flight (Limits.MaxRuns, --max-runs).",
		}, func() float64 { return float64(cap(s.runSlots)) }),
		s.runsRefused,
	} {
		if err := s.reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: registering metrics: %w", err)
		}
	}
	s.obs = newObserver(s.metrics, cfg.Tracer)
	s.apps.gone = s.obs.forgetApp
	s.apps.moduleGone = s.metrics.forgetModule
	if cfg.MCPSessionTimeout <= 0 {
		s.cfg.MCPSessionTimeout = DefaultMCPSessionTimeout
	}
	if cfg.MCPMaxSessions <= 0 {
		s.cfg.MCPMaxSessions = DefaultMCPMaxSessions
	}
	s.mcpStreams, s.stopMCPStreams = context.WithCancel(context.Background())
	if tok := cmp.Or(cfg.MCPToken, cfg.RunToken); tok != "" {
		s.mcp = newMCPApps(s, tok)
		s.apps.changed = s.mcp.changed
		if err := s.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "adkhost_mcp_sessions", Help: "MCP sessions open, all apps together (at most Config.MCPMaxSessions).",
		}, func() float64 { return float64(s.mcp.sessions()) })); err != nil {
			return nil, fmt.Errorf("server: registering metrics: %w", err)
		}
	}
	s.echo = s.routes()
	if err := s.loadRegistered(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.echo }

// Registry returns the server's Prometheus registry (served on /metrics).
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Close retires every app; versions with runs in flight close when those
// finish. Shut the HTTP server down first so that no new run starts.
func (s *Server) Close() {
	s.stopMCPStreams()
	s.apps.closeAll()
}

func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(s.log)
	e.Use(recoverJSON(s.log), accessLog(s.log), clientTimeouts(s.cfg.Limits), decodeParams)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg})))

	admin := e.Group("/admin/v1", bearer(s.cfg.AdminToken, "admin"))
	admin.PUT("/modules/:name", s.putModule)
	admin.GET("/modules", s.listModules)
	admin.GET("/modules/:ref", s.getModule)
	admin.DELETE("/modules/:ref", s.deleteModule)
	admin.PUT("/apps/:name", s.putApp)
	admin.GET("/apps", s.listApps)
	admin.GET("/apps/:name", s.getApp)
	admin.DELETE("/apps/:name", s.deleteApp)

	e.GET("/health", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	var runMW []echo.MiddlewareFunc
	if s.cfg.RunToken != "" {
		runMW = append(runMW, bearer(s.cfg.RunToken, "run"))
	}
	run := e.Group("", runMW...)
	run.GET("/version", s.version)
	run.GET("/list-apps", s.listAppNames)
	run.POST("/run", s.run, s.runSlot)
	run.POST("/run_sse", s.runSSE, s.runSlot)
	sess := run.Group("/apps/:app/users/:user/sessions", checkPathIDs)
	sess.POST("", s.createSession)
	sess.GET("", s.listSessions)
	sess.POST("/:session", s.createSessionWithID)
	sess.GET("/:session", s.getSession)
	sess.DELETE("/:session", s.deleteSession)
	sess.PATCH("/:session", s.patchSession)
	sess.GET("/:session/artifacts", s.listArtifacts)
	sess.GET("/:session/artifacts/*", s.getArtifact)
	sess.DELETE("/:session/artifacts/*", s.deleteArtifact)
	run.PATCH("/apps/:app/users/:user/memory", s.patchMemory, checkPathIDs)
	if s.mcp != nil {
		// The MCP transport uses POST (messages), GET (the server's
		// stream) and DELETE (end of session) on one path.
		tok := cmp.Or(s.cfg.MCPToken, s.cfg.RunToken)
		e.Match([]string{http.MethodPost, http.MethodGet, http.MethodDelete}, "/mcp/:app", s.serveMCP, bearer(tok, "mcp"))
	}
	if s.cfg.DevUIDir != "" {
		s.devUIRoutes(e, run)
	}
	return e
}

// Serve serves on ln until ctx is done, then stops accepting, lets the
// requests in flight (runs included) finish for up to drain, and retires
// every app. The caller closes the store and the runtime afterwards.
func (s *Server) Serve(ctx context.Context, ln net.Listener, drain time.Duration) error {
	hs := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       s.cfg.Limits.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		s.log.Info("shutting down: draining requests in flight", "timeout", drain.String())
		s.stopMCPStreams()
		sctx, cancel := context.WithTimeout(context.Background(), drain)
		err = hs.Shutdown(sctx)
		cancel()
		if err != nil {
			err = fmt.Errorf("server: draining requests: %w", err)
			_ = hs.Close()
		}
		<-errc
	}
	s.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// runSlot is the middleware of the routes that start a run: it takes one
// of Limits.MaxRuns slots for the handler's whole life (an SSE stream's
// included), or refuses the request with 503 before anything reads its
// body. The refusal closes the connection without reading the body
// (deadlineBody.abandon): a server that is full does not take in bodies
// it will not use.
func (s *Server) runSlot(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		release, ok := s.takeRunSlot()
		if !ok {
			n := cap(s.runSlots)
			h := c.Response().Header()
			h.Set("Retry-After", "1")
			h.Set("Connection", "close")
			if b, ok := c.Request().Body.(*deadlineBody); ok {
				b.abandon()
			}
			// Answered here rather than returned: the error handler logs
			// every 5xx as an error, and a burst shed is not one (the
			// refusals are counted in /metrics).
			status, body := errorBody(&apiError{Status: http.StatusServiceUnavailable,
				Msg:   s.tooManyRuns(),
				Extra: map[string]any{"limit": "max_runs", "max_runs": n}})
			return c.JSON(status, body)
		}
		defer release()
		return next(c)
	}
}

// takeRunSlot takes one of Limits.MaxRuns slots without waiting, for a
// /run, a /run_sse stream or an MCP tool call; ok false (counted in
// adkhost_runs_refused_total) when all are taken.
func (s *Server) takeRunSlot() (release func(), ok bool) {
	select {
	case s.runSlots <- struct{}{}:
		return func() { <-s.runSlots }, true
	default:
		s.runsRefused.Inc()
		return nil, false
	}
}

// tooManyRuns is the refusal's message.
func (s *Server) tooManyRuns() string {
	return fmt.Sprintf("too many runs in flight: the server runs at most %d at once (--max-runs, server.Config.Limits.MaxRuns); retry after a second, or raise the bound", cap(s.runSlots))
}
