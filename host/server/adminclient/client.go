// Package adminclient talks to a running adkhost server's admin API
// (/admin/v1): the CLI's `app` and `module` commands use it.
package adminclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client is an admin API client. The zero HTTP uses http.DefaultClient.
type Client struct {
	// Base is the server's URL, e.g. "http://localhost:8000".
	Base  string
	Token string
	HTTP  *http.Client
}

// Module is a stored module as the admin API describes it.
type Module struct {
	Name     string            `json:"name"`
	Digest   string            `json:"digest"`
	Size     int64             `json:"size"`
	Created  time.Time         `json:"created"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Describe json.RawMessage   `json:"describe,omitempty"`
	UsedBy   []string          `json:"usedBy,omitempty"`
	// Newest: a reference by name resolves to this version.
	Newest bool `json:"newest,omitempty"`
	// Upload answers only: the bytes were already stored under this name;
	// the apps that moved to this version; those that could not.
	Unchanged    bool              `json:"unchanged,omitempty"`
	Reloaded     []string          `json:"reloaded,omitempty"`
	ReloadErrors map[string]string `json:"reloadErrors,omitempty"`
}

// App is a registered app as the admin API describes it.
type App struct {
	Name      string            `json:"name"`
	Version   int               `json:"version"`
	Created   time.Time         `json:"created"`
	Status    string            `json:"status"`
	Error     string            `json:"error,omitempty"`
	RootAgent string            `json:"rootAgent,omitempty"`
	Modules   []string          `json:"modules,omitempty"`
	Root      string            `json:"root,omitempty"`
	Files     map[string]string `json:"files,omitempty"`
	Versions  []int             `json:"versions,omitempty"`
	Warnings  []string          `json:"warnings,omitempty"`
}

// Error is an error answer of the server: its status and JSON body.
type Error struct {
	Status int
	Msg    string
	Body   map[string]any
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("server answered %d: %s", e.Status, e.Msg)
	if errs, ok := e.Body["errors"].([]any); ok && len(errs) > 0 {
		// The message already joins the errors listed: print them once,
		// located, under the message's head ("app definition does not load").
		head, _, _ := strings.Cut(e.Msg, ": ")
		msg = fmt.Sprintf("server answered %d: %s:", e.Status, head)
		for _, x := range errs {
			if m, ok := x.(map[string]any); ok {
				msg += "\n  " + located(m)
			}
		}
	}
	if e.Status == http.StatusUnauthorized {
		msg += " (check --token, ADKHOST_ADMIN_TOKEN or the server's admin-token file)"
	}
	return msg
}

// located writes a definition error as file:line:column: field: message,
// leaving out what the server did not give (a syntax error has no field).
func located(m map[string]any) string {
	var sb strings.Builder
	if f, _ := m["file"].(string); f != "" {
		sb.WriteString(f)
		if l, _ := m["line"].(float64); l > 0 {
			fmt.Fprintf(&sb, ":%v", l)
			if c, _ := m["column"].(float64); c > 0 {
				fmt.Fprintf(&sb, ":%v", c)
			}
		}
		sb.WriteString(": ")
	}
	if f, _ := m["field"].(string); f != "" {
		sb.WriteString(f + ": ")
	}
	fmt.Fprint(&sb, m["message"])
	return sb.String()
}

// do sends a request and decodes a JSON answer into out (if not nil).
func (c *Client) do(ctx context.Context, method, path, ctype string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.Base, "/")+"/admin/v1"+path, body)
	if err != nil {
		return fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w (is the server running? see --server)", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		e := &Error{Status: resp.StatusCode, Msg: strings.TrimSpace(string(b))}
		if json.Unmarshal(b, &e.Body) == nil {
			if m, ok := e.Body["error"].(string); ok {
				e.Msg = m
			}
		}
		return e
	}
	if out == nil || len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// UploadModule stores a module under name.
func (c *Client) UploadModule(ctx context.Context, name string, wasm []byte) (Module, error) {
	var m Module
	err := c.do(ctx, http.MethodPut, "/modules/"+url.PathEscape(name), "application/wasm", bytes.NewReader(wasm), &m)
	return m, err
}

// Modules lists stored modules.
func (c *Client) Modules(ctx context.Context) ([]Module, error) {
	var ms []Module
	err := c.do(ctx, http.MethodGet, "/modules", "", nil, &ms)
	return ms, err
}

// Module describes a module by digest or name.
func (c *Client) Module(ctx context.Context, ref string) (Module, error) {
	var m Module
	err := c.do(ctx, http.MethodGet, "/modules/"+url.PathEscape(ref), "", nil, &m)
	return m, err
}

// DeleteModule deletes a module by digest, or every module of a name.
func (c *Client) DeleteModule(ctx context.Context, ref string) error {
	return c.do(ctx, http.MethodDelete, "/modules/"+url.PathEscape(ref), "", nil, nil)
}

// RegisterApp registers or replaces app name. files are the definition's
// files by relative path, root_agent.yaml among them; a definition of that
// one file goes as a YAML body, others as a multipart bundle.
func (c *Client) RegisterApp(ctx context.Context, name string, files map[string][]byte) (App, error) {
	var a App
	root, ok := files["root_agent.yaml"]
	if !ok {
		return a, errors.New("the definition has no root_agent.yaml")
	}
	if len(files) == 1 {
		err := c.do(ctx, http.MethodPut, "/apps/"+url.PathEscape(name), "application/yaml", bytes.NewReader(root), &a)
		return a, err
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for p, b := range files {
		w, err := mw.CreateFormFile(p, p)
		if err != nil {
			return a, fmt.Errorf("building the bundle: %w", err)
		}
		if _, err := w.Write(b); err != nil {
			return a, fmt.Errorf("building the bundle: %w", err)
		}
	}
	if err := mw.Close(); err != nil {
		return a, fmt.Errorf("building the bundle: %w", err)
	}
	err := c.do(ctx, http.MethodPut, "/apps/"+url.PathEscape(name), mw.FormDataContentType(), &buf, &a)
	return a, err
}

// Apps lists registered apps.
func (c *Client) Apps(ctx context.Context) ([]App, error) {
	var as []App
	err := c.do(ctx, http.MethodGet, "/apps", "", nil, &as)
	return as, err
}

// App returns an app's definition and versions.
func (c *Client) App(ctx context.Context, name string) (App, error) {
	var a App
	err := c.do(ctx, http.MethodGet, "/apps/"+url.PathEscape(name), "", nil, &a)
	return a, err
}

// DeleteApp deletes an app.
func (c *Client) DeleteApp(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/apps/"+url.PathEscape(name), "", nil, nil)
}
