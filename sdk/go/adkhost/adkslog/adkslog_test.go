//go:build !wasip1

package adkslog_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/sdk/go/adkhost"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkhosttest"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkslog"
)

func TestLogger(t *testing.T) {
	h := &adkhosttest.Host{}
	defer adkhost.UseHost(h)()
	l := adkslog.Logger().With("a", 1).WithGroup("g")
	l.Info("hello world", "b", "two words", "c", "")
	l.Debug("dbg", "nested", []any{"x"})
	adkslog.Logger().Error("bad", slog.Group("grp", "x", 1))
	want := []string{
		`INFO hello world a=1 g.b="two words" g.c=""`,
		`DEBUG dbg a=1 g.nested=[x]`,
		`ERROR bad grp.x=1`,
	}
	if got := h.LogLines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log lines:\n got %q\nwant %q", got, want)
	}
}
