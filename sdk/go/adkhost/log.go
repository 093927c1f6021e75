package adkhost

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
)

// Log sends a line to the host's log at a log/slog level (slog.LevelDebug,
// LevelInfo, LevelWarn, LevelError). It needs no capability; a line the
// host cannot take is dropped. A guest's stdout and stderr are not a log:
// the host keeps stderr only to explain a trap.
func Log(level slog.Level, msg string) { rawLog(int32(level), validUTF8(msg)) }

// Logger returns a *slog.Logger whose lines go to the host's log, with
// attributes written as key=value after the message.
func Logger() *slog.Logger { return slog.New(&hostHandler{}) }

type hostHandler struct {
	prefix string // formatted attributes of WithAttrs
	group  string // dotted group path of WithGroup, with a trailing dot
}

func (h *hostHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *hostHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.group, a)
		return true
	})
	Log(r.Level, b.String())
	return nil
}

func (h *hostHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range as {
		appendAttr(&b, h.group, a)
	}
	return &hostHandler{prefix: b.String(), group: h.group}
}

func (h *hostHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &hostHandler{prefix: h.prefix, group: h.group + name + "."}
}

func appendAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			appendAttr(b, g, ga)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(group)
	b.WriteString(a.Key)
	b.WriteByte('=')
	v := a.Value.String()
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = strconv.Quote(v)
	}
	b.WriteString(v)
}
