package postgres_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/pgtest"
	"github.com/adkhost/adkhost/store/postgres"
)

// TestEventDataIsGoogleADKs checks what an append stores: google-adk's
// model_dump of the event (snake_case field names, URL-safe base64),
// with the keys of free-form values untouched, and the columns google-adk
// reads.
func TestEventDataIsGoogleADKs(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	svc := db.Sessions()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	e := &session.Event{
		Response: model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{
			{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "f", Args: map[string]any{"camelArg": 1, "snake_arg": 2}}},
			{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{0xfb, 0xff, 0xfe}}},
		}}, TurnComplete: true, CustomMetadata: map[string]any{"someKey": map[string]any{"innerKey": 1}}},
		ID: "e1", InvocationID: "inv-1", Author: "agent", Timestamp: ts,
		Actions:            session.EventActions{StateDelta: map[string]any{"camelKey": 1, "app:appKey": map[string]any{"nestedKey": 2}}},
		LongRunningToolIDs: []string{"c1"},
	}
	if err := svc.AppendEvent(ctx, s, e); err != nil {
		t.Fatal(err)
	}
	var data []byte
	var inv string
	var colTS, updated time.Time
	err = db.Pool().QueryRow(ctx, `SELECT e.event_data, e.invocation_id, e.timestamp, s.update_time FROM events e JOIN sessions s ON s.app_name = e.app_name AND s.user_id = e.user_id AND s.id = e.session_id WHERE e.id = 'e1'`).Scan(&data, &inv, &colTS, &updated)
	if err != nil {
		t.Fatal(err)
	}
	if inv != "inv-1" || !colTS.Equal(ts) || !updated.Equal(ts) {
		t.Errorf("columns: invocation_id %q, timestamp %v, update_time %v; want inv-1 and %v", inv, colTS, updated, ts)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"invocation_id", "long_running_tool_ids", "turn_complete", "custom_metadata", "timestamp", "id", "author"} {
		if _, ok := m[k]; !ok {
			t.Errorf("event_data lacks %q: %s", k, data)
		}
	}
	for _, k := range []string{"invocationId", "longRunningToolIds", "turnComplete"} {
		if _, ok := m[k]; ok {
			t.Errorf("event_data has camelCase %q: %s", k, data)
		}
	}
	actions := m["actions"].(map[string]any)
	delta := actions["state_delta"].(map[string]any)
	if _, ok := delta["camelKey"]; !ok {
		t.Errorf("state delta keys were renamed: %v", delta)
	}
	if nested := delta["app:appKey"].(map[string]any); nested["nestedKey"] == nil {
		t.Errorf("nested state keys were renamed: %v", nested)
	}
	if cm := m["custom_metadata"].(map[string]any); cm["someKey"] == nil {
		t.Errorf("custom metadata keys were renamed: %v", cm)
	}
	parts := m["content"].(map[string]any)["parts"].([]any)
	args := parts[0].(map[string]any)["function_call"].(map[string]any)["args"].(map[string]any)
	if args["camelArg"] == nil || args["snake_arg"] == nil {
		t.Errorf("function args renamed: %v", args)
	}
	blob := parts[1].(map[string]any)["inline_data"].(map[string]any)
	if blob["mime_type"] != "image/png" || blob["data"] != "-__-" {
		t.Errorf("inline_data = %v, want mime_type image/png and URL-safe base64 -__-", blob)
	}
	if ts := m["timestamp"].(float64); ts != session.TimeToFloat(e.Timestamp) {
		t.Errorf("timestamp %v", ts)
	}
	g, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Events()[0]; string(got.Content.Parts[1].InlineData.Data) != string([]byte{0xfb, 0xff, 0xfe}) || got.Actions.StateDelta["camelKey"] == nil {
		t.Errorf("event did not come back: %+v", got)
	}
}

// TestMetadataAndMigrations checks the schema version rows and that Open
// twice (a second replica) migrates nothing again.
func TestMetadataAndMigrations(t *testing.T) {
	url := pgtest.Database(t)
	db := openURL(t, url)
	openURL(t, url)
	var v string
	if err := db.Pool().QueryRow(t.Context(), `SELECT value FROM adk_internal_metadata WHERE key = 'schema_version'`).Scan(&v); err != nil || v != "1" {
		t.Errorf("schema_version = %q, %v; want \"1\"", v, err)
	}
	var n, max int
	if err := db.Pool().QueryRow(t.Context(), `SELECT count(*), max(version) FROM adkhost_migrations`).Scan(&n, &max); err != nil || n != postgres.SchemaVersion || max != postgres.SchemaVersion {
		t.Errorf("adkhost_migrations: %d rows, max %d, %v; want %d", n, max, err, postgres.SchemaVersion)
	}
	// A database from a newer adkhost is refused.
	if _, err := db.Pool().Exec(t.Context(), `INSERT INTO adkhost_migrations (version, description) VALUES (1000, 'future')`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(t.Context(), url, postgres.Config{Logger: quiet}); err == nil || !strings.Contains(err.Error(), "schema version 1000") {
		t.Errorf("Open of a newer schema: %v", err)
	}
}

// TestRefusesSchemaV0 checks that google-adk's legacy schema is refused
// with the way out, not written over.
func TestRefusesSchemaV0(t *testing.T) {
	url := pgtest.Database(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), `CREATE TABLE events (id VARCHAR(128) PRIMARY KEY, author VARCHAR(256), actions BYTEA)`); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(t.Context(), url, postgres.Config{Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "schema v0") {
		t.Errorf("Open of a v0 database: %v", err)
	}
}

// TestUnreachable checks the error for a database that is not there
// after the retries.
func TestUnreachable(t *testing.T) {
	start := time.Now()
	_, err := postgres.Open(t.Context(), "postgres://u:secret@127.0.0.1:1/db?sslmode=disable", postgres.Config{ConnectTimeout: 700 * time.Millisecond, Logger: quiet})
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	if !strings.Contains(err.Error(), "cannot reach the database") || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "attempt") {
		t.Errorf("error = %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("gave up after %v, without retrying", d)
	}
}
