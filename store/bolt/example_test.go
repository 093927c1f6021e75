package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/store/bolt"
)

// A session store in a file: create a session, append an event, read the
// newest events back. Appending through a copy read before another append
// fails with session.ErrStale: reload and try again.
func Example() {
	dir, err := os.MkdirTemp("", "adkhost-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := bolt.Open(filepath.Join(dir, "adkhost.db"), bolt.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	sessions := db.Sessions()
	ctx := context.Background()

	s, err := sessions.Create(ctx, &session.CreateRequest{AppName: "weather", UserID: "ana", SessionID: "s1"})
	if err != nil {
		log.Fatal(err)
	}
	old, _ := sessions.Get(ctx, &session.GetRequest{AppName: "weather", UserID: "ana", SessionID: "s1"})

	e := session.NewEvent("inv-1", "user", "")
	e.Actions.StateDelta = map[string]any{"city": "Paris", "user:units": "metric", "temp:draft": true}
	if err := sessions.AppendEvent(ctx, s, e); err != nil { // on disk when it returns
		log.Fatal(err)
	}

	err = sessions.AppendEvent(ctx, old, session.NewEvent("inv-2", "user", ""))
	fmt.Println("stale copy refused:", errors.Is(err, session.ErrStale))

	got, err := sessions.Get(ctx, &session.GetRequest{AppName: "weather", UserID: "ana", SessionID: "s1", NumRecentEvents: 20})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(got.Events()), got.State())
	// Output:
	// stale copy refused: true
	// 1 map[city:Paris user:units:metric]
}
