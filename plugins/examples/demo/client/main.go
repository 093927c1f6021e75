// Command client is the demo's user: it talks to a running `adkhost serve`
// over google-adk's run API, as any client of `adk api_server` would, and
// prints each event of the conversation. `make demo` runs it.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8000", "adkhost server URL")
	app := flag.String("app", "weather_assistant", "app name")
	user := flag.String("user", "demo-user", "user id")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *server, *app, *user, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo client:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, server, app, user string, out io.Writer) error {
	c := &client{base: strings.TrimRight(server, "/"), app: app, user: user}
	var sess struct {
		ID string `json:"id"`
	}
	if err := c.post(ctx, fmt.Sprintf("/apps/%s/users/%s/sessions", app, user), map[string]any{}, &sess); err != nil {
		return fmt.Errorf("creating a session: %w", err)
	}
	fmt.Fprintf(out, "session %s of app %s\n", sess.ID, app)

	// Turn 1 over POST /run: the model calls the Wasm weather tool.
	say(out, "What's the weather in Paris?")
	var events []*session.Event
	if err := c.post(ctx, "/run", c.request(sess.ID, "What's the weather in Paris?", false), &events); err != nil {
		return fmt.Errorf("turn 1: %w", err)
	}
	for _, ev := range events {
		show(out, ev)
	}
	// Turn 2 over POST /run_sse: the Wasm guardrail answers instead of the model.
	say(out, "Please BLOCK this request.")
	return c.sse(ctx, c.request(sess.ID, "Please BLOCK this request.", true), func(ev *session.Event) { show(out, ev) })
}

type client struct{ base, app, user string }

func (c *client) request(sessionID, text string, streaming bool) map[string]any {
	return map[string]any{
		"appName": c.app, "userId": c.user, "sessionId": sessionID, "streaming": streaming,
		"newMessage": genai.Content{Role: "user", Parts: []*genai.Part{{Text: text}}},
	}
}

func (c *client) do(ctx context.Context, path string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %s: %s", req.Method, path, resp.Status, bytes.TrimSpace(msg))
	}
	return resp, nil
}

func (c *client) post(ctx context.Context, path string, body, into any) error {
	resp, err := c.do(ctx, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(into)
}

// sse reads the `data: <event JSON>` frames of /run_sse.
func (c *client) sse(ctx context.Context, body any, each func(*session.Event)) error {
	resp, err := c.do(ctx, "/run_sse", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev session.Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return fmt.Errorf("event frame %q: %w", data, err)
		}
		if ev.ErrorMessage != "" && ev.Author == "" {
			return errors.New(ev.ErrorMessage)
		}
		each(&ev)
	}
	return sc.Err()
}

func say(out io.Writer, text string) { fmt.Fprintf(out, "\nuser: %s\n", text) }

// show prints an event as a person reads a conversation.
func show(out io.Writer, ev *session.Event) {
	if ev.Partial {
		return
	}
	if ev.ErrorCode != "" || ev.ErrorMessage != "" {
		fmt.Fprintf(out, "  %s: error %s %s\n", ev.Author, ev.ErrorCode, ev.ErrorMessage)
	}
	if ev.Content == nil {
		return
	}
	for _, p := range ev.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			args, _ := json.Marshal(p.FunctionCall.Args)
			fmt.Fprintf(out, "  %s: calls %s(%s)        [Wasm tool]\n", ev.Author, p.FunctionCall.Name, args)
		case p.FunctionResponse != nil:
			res, _ := json.Marshal(p.FunctionResponse.Response)
			fmt.Fprintf(out, "  %s: %s returned %s\n", ev.Author, p.FunctionResponse.Name, res)
		case p.Text != "" && !p.Thought:
			fmt.Fprintf(out, "  %s: %s\n", ev.Author, strings.TrimSpace(p.Text))
		}
	}
}
