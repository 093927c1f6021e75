package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/adkhost/adkhost/store/registry"
)

// Registry is a registry.Registry in adkhost's tables (adkhost_apps,
// adkhost_app_sequences, adkhost_modules: module bytes included). Every
// write notifies the channel adkhost_registry in its transaction (see
// Watch), so other replicas learn of it when it commits. Get it from
// DB.Registry. It is safe for concurrent use by many processes.
type Registry struct {
	db *DB
}

var _ registry.Registry = (*Registry)(nil)

// NotifyChannel is the channel registry writes notify; the payload is
// "app:NAME" or "module:SHA256".
const NotifyChannel = "adkhost_registry"

func notify(ctx context.Context, tx pgx.Tx, payload string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, payload)
	return err
}

// PutApp implements registry.Registry.
func (r *Registry) PutApp(ctx context.Context, name string, definition []byte) (registry.App, error) {
	if name == "" {
		return registry.App{}, errors.New("registry: an app name is required")
	}
	created := time.Now().UTC().Truncate(time.Microsecond)
	var version int
	err := r.db.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO adkhost_app_sequences (name, last_version) VALUES ($1, 1)
ON CONFLICT (name) DO UPDATE SET last_version = adkhost_app_sequences.last_version + 1
RETURNING last_version`, name).Scan(&version)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO adkhost_apps (name, version, created, definition) VALUES ($1, $2, $3, $4)`, name, version, created, definition); err != nil {
			return err
		}
		return notify(ctx, tx, "app:"+name)
	})
	if err != nil {
		return registry.App{}, fmt.Errorf("registry: put app %q: %w", name, err)
	}
	return registry.App{Name: name, Version: version, Definition: bytes.Clone(definition), Created: created}, nil
}

// App implements registry.Registry.
func (r *Registry) App(ctx context.Context, name string, version int) (registry.App, error) {
	if version < 0 {
		return registry.App{}, fmt.Errorf("registry: app %q version %d: %w", name, version, registry.ErrAppNotFound)
	}
	a := registry.App{Name: name}
	var err error
	if version == registry.LatestVersion {
		err = r.db.pool.QueryRow(ctx, `SELECT version, created, definition FROM adkhost_apps WHERE name = $1 ORDER BY version DESC LIMIT 1`, name).
			Scan(&a.Version, &a.Created, &a.Definition)
	} else {
		err = r.db.pool.QueryRow(ctx, `SELECT version, created, definition FROM adkhost_apps WHERE name = $1 AND version = $2`, name, version).
			Scan(&a.Version, &a.Created, &a.Definition)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		err = registry.ErrAppNotFound
	}
	if err != nil {
		return registry.App{}, fmt.Errorf("registry: app %q version %d: %w", name, version, err)
	}
	return a, nil
}

// AppVersions implements registry.Registry.
func (r *Registry) AppVersions(ctx context.Context, name string) ([]int, error) {
	rows, err := r.db.pool.Query(ctx, `SELECT version FROM adkhost_apps WHERE name = $1 ORDER BY version`, name)
	if err != nil {
		return nil, fmt.Errorf("registry: app %q: %w", name, err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err == nil && len(vs) == 0 {
		err = registry.ErrAppNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("registry: app %q: %w", name, err)
	}
	return vs, nil
}

// Apps implements registry.Registry.
func (r *Registry) Apps(ctx context.Context) ([]registry.App, error) {
	rows, err := r.db.pool.Query(ctx, `SELECT DISTINCT ON (name) name, version, created, definition FROM adkhost_apps ORDER BY name, version DESC`)
	if err != nil {
		return nil, fmt.Errorf("registry: list apps: %w", err)
	}
	apps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (registry.App, error) {
		var a registry.App
		err := row.Scan(&a.Name, &a.Version, &a.Created, &a.Definition)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("registry: list apps: %w", err)
	}
	// Byte order, whatever the database's collation.
	slices.SortFunc(apps, func(a, b registry.App) int { return strings.Compare(a.Name, b.Name) })
	return apps, nil
}

// DeleteApp implements registry.Registry; the app's version numbers start
// again at 1.
func (r *Registry) DeleteApp(ctx context.Context, name string) error {
	err := r.db.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM adkhost_apps WHERE name = $1`, name)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM adkhost_app_sequences WHERE name = $1`, name); err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		return notify(ctx, tx, "app:"+name)
	})
	if err != nil {
		return fmt.Errorf("registry: delete app %q: %w", name, err)
	}
	return nil
}

func parseDigest(digest string) ([]byte, error) {
	b, err := hex.DecodeString(digest)
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("registry: %q is not a hex SHA-256: %w", digest, registry.ErrModuleNotFound)
	}
	return b, nil
}

// PutModule implements registry.Registry.
func (r *Registry) PutModule(ctx context.Context, wasm []byte, name string, metadata map[string]string) (registry.ModuleInfo, error) {
	sum := sha256.Sum256(wasm)
	info := registry.ModuleInfo{
		SHA256:   hex.EncodeToString(sum[:]),
		Size:     int64(len(wasm)),
		Name:     name,
		Metadata: maps.Clone(metadata),
		Created:  time.Now().UTC().Truncate(time.Microsecond),
	}
	data, err := json.Marshal(info)
	if err != nil {
		return registry.ModuleInfo{}, err
	}
	var stored []byte
	err = r.db.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		// Bytes already there keep their creation time.
		err := tx.QueryRow(ctx, `INSERT INTO adkhost_modules (sha256, info, wasm) VALUES ($1, $2, $3)
ON CONFLICT (sha256) DO UPDATE SET info = jsonb_set(EXCLUDED.info, '{created}', adkhost_modules.info->'created')
RETURNING info`, sum[:], string(data), wasm).Scan(&stored)
		if err != nil {
			return err
		}
		return notify(ctx, tx, "module:"+info.SHA256)
	})
	if err != nil {
		return registry.ModuleInfo{}, fmt.Errorf("registry: put module %s: %w", info.SHA256, err)
	}
	var out registry.ModuleInfo
	if err := json.Unmarshal(stored, &out); err != nil {
		return registry.ModuleInfo{}, fmt.Errorf("registry: module %s: stored info: %w", info.SHA256, err)
	}
	return out, nil
}

// Module implements registry.Registry; the bytes are checked against
// their digest.
func (r *Registry) Module(ctx context.Context, digest string) ([]byte, registry.ModuleInfo, error) {
	return r.module(ctx, digest, true)
}

// ModuleInfo implements registry.Registry.
func (r *Registry) ModuleInfo(ctx context.Context, digest string) (registry.ModuleInfo, error) {
	_, info, err := r.module(ctx, digest, false)
	return info, err
}

func (r *Registry) module(ctx context.Context, digest string, withBytes bool) ([]byte, registry.ModuleInfo, error) {
	sum, err := parseDigest(digest)
	if err != nil {
		return nil, registry.ModuleInfo{}, err
	}
	var data, wasm []byte
	if withBytes {
		err = r.db.pool.QueryRow(ctx, `SELECT info, wasm FROM adkhost_modules WHERE sha256 = $1`, sum).Scan(&data, &wasm)
	} else {
		err = r.db.pool.QueryRow(ctx, `SELECT info FROM adkhost_modules WHERE sha256 = $1`, sum).Scan(&data)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		err = registry.ErrModuleNotFound
	}
	if err != nil {
		return nil, registry.ModuleInfo{}, fmt.Errorf("registry: module %s: %w", digest, err)
	}
	var info registry.ModuleInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, registry.ModuleInfo{}, fmt.Errorf("registry: module %s: stored info: %w", digest, err)
	}
	if withBytes {
		if got := sha256.Sum256(wasm); !bytes.Equal(got[:], sum) {
			return nil, registry.ModuleInfo{}, fmt.Errorf("registry: module %s: stored bytes hash to %x", digest, got)
		}
	}
	return wasm, info, nil
}

// Modules implements registry.Registry.
func (r *Registry) Modules(ctx context.Context) ([]registry.ModuleInfo, error) {
	rows, err := r.db.pool.Query(ctx, `SELECT info FROM adkhost_modules ORDER BY sha256`)
	if err != nil {
		return nil, fmt.Errorf("registry: list modules: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (registry.ModuleInfo, error) {
		var b []byte
		var info registry.ModuleInfo
		if err := row.Scan(&b); err != nil {
			return info, err
		}
		return info, json.Unmarshal(b, &info)
	})
	if err != nil {
		return nil, fmt.Errorf("registry: list modules: %w", err)
	}
	return out, nil
}

// DeleteModule implements registry.Registry.
func (r *Registry) DeleteModule(ctx context.Context, digest string) error {
	sum, err := parseDigest(digest)
	if err != nil {
		return err
	}
	err = r.db.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM adkhost_modules WHERE sha256 = $1`, sum)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		return notify(ctx, tx, "module:"+digest)
	})
	if err != nil {
		return fmt.Errorf("registry: delete module %s: %w", digest, err)
	}
	return nil
}
