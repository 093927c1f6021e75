// Package adkslog gives a Go guest a *slog.Logger whose lines go to the
// host's log through adkhost.Log, with attributes written as key=value
// after the message. It is a package of its own because log/slog brings
// log and time's formatting with it, about 190 KB of code that every cold
// start of a module compiles: a guest pays for it only if it logs this way.
package adkslog

import (
	"context"
	"log/slog"
	"strconv"
	"strings"

	"github.com/adkhost/adkhost/sdk/go/adkhost"
)

// Logger returns a *slog.Logger whose lines go to the host's log.
func Logger() *slog.Logger { return slog.New(&handler{}) }

type handler struct {
	prefix string // formatted attributes of WithAttrs
	group  string // dotted group path of WithGroup, with a trailing dot
}

func (h *handler) Enabled(context.Context, slog.Level) bool { return true }

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.group, a)
		return true
	})
	adkhost.Log(r.Level, b.String())
	return nil
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range as {
		appendAttr(&b, h.group, a)
	}
	return &handler{prefix: b.String(), group: h.group}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{prefix: h.prefix, group: h.group + name + "."}
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
