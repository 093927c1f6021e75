package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Watch tells this process of registry changes committed by any process
// on the database, this one included: app(name) for each app written or
// deleted, in commit order, and resync() each time Watch has (re)connected
// and listens, since notifications sent while it was not listening are
// lost: the caller then re-reads the registry. It holds a connection of
// its own (LISTEN adkhost_registry) and reconnects after losing it, with
// backoff from 100 ms doubling to 5 s. Module changes need no call: apps
// fetch module bytes by digest from the shared table when they load. It
// returns when ctx is done.
func (r *Registry) Watch(ctx context.Context, app func(name string), resync func()) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := r.listen(ctx, app, resync, func() { wait = 100 * time.Millisecond })
		if ctx.Err() != nil {
			return
		}
		r.db.log.Warn("postgres: registry notifications lost, reconnecting", "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// listen runs one connection's LISTEN until it fails.
func (r *Registry) listen(ctx context.Context, app func(string), resync func(), connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, r.db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		return err
	}
	connected()
	resync()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if name, ok := strings.CutPrefix(n.Payload, "app:"); ok {
			app(name)
		}
	}
}
