package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/adkhost/adkhost/internal/pgtest"
)

// TestWatch: app writes and deletes through one DB reach another's Watch,
// and after the server restarts Watch reconnects and asks for a resync.
func TestWatch(t *testing.T) {
	url := pgtest.Database(t)
	writer, watcher := openURL(t, url), openURL(t, url)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	apps, resyncs := make(chan string, 16), make(chan struct{}, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		watcher.Registry().Watch(ctx, func(name string) { apps <- name }, func() { resyncs <- struct{}{} })
	}()
	wait := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s", what)
		}
	}
	wantApp := func(name string) {
		t.Helper()
		select {
		case got := <-apps:
			if got != name {
				t.Fatalf("notified of %q, want %q", got, name)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no notification of %q", name)
		}
	}
	wait("resync after connecting", resyncs)
	if _, err := writer.Registry().PutApp(ctx, "chat", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	wantApp("chat")
	if err := writer.Registry().DeleteApp(ctx, "chat"); err != nil {
		t.Fatal(err)
	}
	wantApp("chat")

	if err := pgtest.Get(t).Restart(); err != nil {
		t.Fatal(err)
	}
	wait("resync after the server restarted", resyncs)
	// The writer's pool reconnects too.
	var err error
	for range 50 {
		if _, err = writer.Registry().PutApp(ctx, "billing", []byte("v1")); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	wantApp("billing")
	cancel()
	<-done
}
