// Package server is adkhost's HTTP server: an admin API (/admin/v1) that
// stores Wasm modules and app definitions in the bbolt registry and swaps
// loaded apps without a restart, and a run API wire-compatible with
// google-adk 2.13's api_server (sessions, /run, /run_sse, artifacts), plus
// Prometheus metrics and OpenTelemetry spans observed from a runner plugin,
// so the engine itself imports neither.
//
// New builds a Server from a Config and loads the registered apps; Serve
// serves it until its context is done, then drains the requests in flight
// and retires the apps. Handler is for callers running their own
// http.Server (tests); they shut it down before calling Close.
package server
