package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/labstack/echo/v4"
)

// bearer requires "Authorization: Bearer <token>". The comparison is
// constant-time so response timing does not leak the token.
func bearer(token, realm string) echo.MiddlewareFunc {
	want := []byte(token)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get("Authorization")
			got, ok := strings.CutPrefix(h, "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="`+realm+`"`)
				if !ok {
					return errorf(http.StatusUnauthorized, "missing bearer token: send Authorization: Bearer <"+realm+" token>")
				}
				return errorf(http.StatusUnauthorized, "invalid "+realm+" token")
			}
			return next(c)
		}
	}
}

// TokenFileName is the admin token file the server writes into its data
// directory when no token is configured.
const TokenFileName = "admin-token"

// LoadOrCreateToken returns the token in path, or, when path does not
// exist, generates a random one and writes it there with 0600 permissions.
// created reports whether it did.
func LoadOrCreateToken(path string) (token string, created bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		t := strings.TrimSpace(string(b))
		if t == "" {
			return "", false, fmt.Errorf("token file %s is empty: delete it to have a new token generated", path)
		}
		return t, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", false, fmt.Errorf("reading token file: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", false, fmt.Errorf("generating a token: %w", err)
	}
	token = hex.EncodeToString(raw[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("creating the token's directory: %w", err)
	}
	// O_EXCL: never overwrite a token another process just wrote.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("writing token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return "", false, fmt.Errorf("writing token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", false, fmt.Errorf("writing token file: %w", err)
	}
	return token, true, nil
}

// ReadToken returns the token stored in path.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading token file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return t, nil
}
