package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/labstack/echo/v4"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// TestWriteEventsAsCJSON: writeEvents writes the bytes c.JSON wrote before
// it (content type, status, body), for google-adk's event shapes and for
// text that encoding/json HTML-escapes, empty text parts and args kept in
// their key order; ?pretty still indents.
func TestWriteEventsAsCJSON(t *testing.T) {
	files, err := filepath.Glob("../../engine/session/testdata/adk_events/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no event fixtures: %v", err)
	}
	var events []*session.Event
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var ev session.Event
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		events = append(events, &ev)
	}
	var ordered session.Event
	if err := json.Unmarshal([]byte(`{"id":"e1","author":"a <b> & c","timestamp":1.5,"content":{"role":"model","parts":[`+
		`{"text":""},{"text":"<script>\u2028&amp;</script>"},`+
		`{"functionCall":{"id":"c1","name":"f","args":{"z":"<1>","a":{"y":1,"b":[2,"&"]}}}}]}}`), &ordered); err != nil {
		t.Fatal(err)
	}
	fresh := session.NewEvent("inv", "agent", "")
	fresh.Content = &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "x>y"}}}
	events = append(events, &ordered, fresh)
	for _, list := range [][]*session.Event{events, {}, events[:1]} {
		for _, query := range []string{"", "?pretty"} {
			e := echo.New()
			want := httptest.NewRecorder()
			if err := e.NewContext(httptest.NewRequest("POST", "/run"+query, nil), want).JSON(http.StatusOK, list); err != nil {
				t.Fatal(err)
			}
			got := httptest.NewRecorder()
			if err := new(Server).writeEvents(e.NewContext(httptest.NewRequest("POST", "/run"+query, nil), got), list); err != nil {
				t.Fatal(err)
			}
			if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
				t.Errorf("%d events%s: status %d %q, c.JSON's %d %q", len(list), query, got.Code, got.Header().Get("Content-Type"), want.Code, want.Header().Get("Content-Type"))
			}
			if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
				t.Errorf("%d events%s:\n got %s\nwant %s", len(list), query, got.Body, want.Body)
			}
		}
	}
}
