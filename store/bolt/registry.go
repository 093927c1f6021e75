package bolt

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/adkhost/adkhost/store/registry"
)

// Registry holds what a server runs: apps, each a definition with
// numbered versions, and modules, each the bytes of a Wasm module stored
// by their SHA-256 with a little metadata. It keeps to its own buckets
// (registry_*). Get it from DB.Registry. It is safe for concurrent use;
// writes commit one transaction each, grouped with concurrent writes.
type Registry struct {
	db *DB
}

// The registry's errors and types are package registry's (every store
// shares them); these names keep bolt's API.
var (
	// ErrAppNotFound is wrapped by errors for a missing app or version.
	ErrAppNotFound = registry.ErrAppNotFound
	// ErrModuleNotFound is wrapped by errors for a missing module.
	ErrModuleNotFound = registry.ErrModuleNotFound
)

// LatestVersion asks App for an app's newest version.
const LatestVersion = registry.LatestVersion

var _ registry.Registry = (*Registry)(nil)

// App is one version of an app definition.
type App = registry.App

// PutApp stores definition as the next version of the app name (1 for a
// new app) and returns it.
func (r *Registry) PutApp(ctx context.Context, name string, definition []byte) (App, error) {
	if err := ctx.Err(); err != nil {
		return App{}, err
	}
	if name == "" {
		return App{}, errors.New("registry: an app name is required")
	}
	created := time.Now().Truncate(time.Microsecond)
	value := binary.BigEndian.AppendUint64(nil, uint64(created.UnixMicro()))
	value = append(value, definition...)
	var version uint64
	err := r.db.commit.do(func(tx *bbolt.Tx) error {
		b, err := tx.Bucket(bucketRegistryApps).CreateBucketIfNotExists([]byte(name))
		if err != nil {
			return err
		}
		if version, err = b.NextSequence(); err != nil {
			return err
		}
		return b.Put(u64(version), value)
	})
	if err != nil {
		return App{}, fmt.Errorf("registry: put app %q: %w", name, err)
	}
	return App{Name: name, Version: int(version), Definition: bytes.Clone(definition), Created: created}, nil
}

func decodeApp(name string, k, v []byte) (App, error) {
	if len(k) != 8 || len(v) < 8 {
		return App{}, fmt.Errorf("app %q: malformed version record", name)
	}
	return App{
		Name:       name,
		Version:    int(binary.BigEndian.Uint64(k)),
		Definition: bytes.Clone(v[8:]),
		Created:    time.UnixMicro(int64(binary.BigEndian.Uint64(v))),
	}, nil
}

// App returns one version of an app (LatestVersion for the newest), or an
// error wrapping ErrAppNotFound.
func (r *Registry) App(ctx context.Context, name string, version int) (App, error) {
	if err := ctx.Err(); err != nil {
		return App{}, err
	}
	var app App
	err := r.db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketRegistryApps).Bucket([]byte(name))
		if b == nil || version < 0 {
			return ErrAppNotFound
		}
		var k, v []byte
		if version == LatestVersion {
			k, v = b.Cursor().Last()
		} else {
			k = u64(uint64(version))
			v = b.Get(k)
		}
		if v == nil {
			return ErrAppNotFound
		}
		var err error
		if app, err = decodeApp(name, k, v); err != nil {
			return r.db.corrupt("%v", err)
		}
		return nil
	})
	if err != nil {
		return App{}, fmt.Errorf("registry: app %q version %d: %w", name, version, err)
	}
	return app, nil
}

// AppVersions returns an app's versions in ascending order, or an error
// wrapping ErrAppNotFound.
func (r *Registry) AppVersions(ctx context.Context, name string) ([]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []int
	err := r.db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketRegistryApps).Bucket([]byte(name))
		if b == nil {
			return ErrAppNotFound
		}
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			out = append(out, int(binary.BigEndian.Uint64(k)))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("registry: app %q: %w", name, err)
	}
	return out, nil
}

// Apps returns the newest version of every app, by name.
func (r *Registry) Apps(ctx context.Context) ([]App, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []App
	err := r.db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketRegistryApps).ForEachBucket(func(name []byte) error {
			k, v := tx.Bucket(bucketRegistryApps).Bucket(name).Cursor().Last()
			if k == nil {
				return nil // every version deleted: not possible through this API
			}
			app, err := decodeApp(string(name), k, v)
			if err != nil {
				return r.db.corrupt("%v", err)
			}
			out = append(out, app)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("registry: list apps: %w", err)
	}
	return out, nil
}

// DeleteApp removes an app and all its versions. Deleting a missing app is
// not an error.
func (r *Registry) DeleteApp(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := r.db.commit.do(func(tx *bbolt.Tx) error {
		err := tx.Bucket(bucketRegistryApps).DeleteBucket([]byte(name))
		if errors.Is(err, bbolt.ErrBucketNotFound) {
			return refuse(errAbsent)
		}
		return err
	})
	if err != nil && !errors.Is(err, errAbsent) {
		return fmt.Errorf("registry: delete app %q: %w", name, err)
	}
	return nil
}

// ModuleInfo describes a stored module.
type ModuleInfo = registry.ModuleInfo

// PutModule stores a module's bytes under their SHA-256 with name and
// metadata, and returns its info. Storing bytes already there keeps them
// and their creation time, and replaces name and metadata.
func (r *Registry) PutModule(ctx context.Context, wasm []byte, name string, metadata map[string]string) (ModuleInfo, error) {
	if err := ctx.Err(); err != nil {
		return ModuleInfo{}, err
	}
	sum := sha256.Sum256(wasm)
	info := ModuleInfo{
		SHA256:   hex.EncodeToString(sum[:]),
		Size:     int64(len(wasm)),
		Name:     name,
		Metadata: maps.Clone(metadata),
		Created:  time.Now().UTC().Truncate(time.Microsecond),
	}
	err := r.db.commit.do(func(tx *bbolt.Tx) error {
		info := info // this function may run again: leave the outer one as built
		mods, infos := tx.Bucket(bucketRegistryMods), tx.Bucket(bucketRegistryInfos)
		if old := infos.Get(sum[:]); old != nil && mods.Get(sum[:]) != nil {
			var prev ModuleInfo
			if err := json.Unmarshal(old, &prev); err != nil {
				return r.db.corrupt("module %s: %v", info.SHA256, err)
			}
			info.Created = prev.Created
		} else if err := mods.Put(sum[:], wasm); err != nil {
			return err
		}
		v, err := json.Marshal(info)
		if err != nil {
			return err
		}
		return infos.Put(sum[:], v)
	})
	if err != nil {
		return ModuleInfo{}, fmt.Errorf("registry: put module %s: %w", info.SHA256, err)
	}
	return r.ModuleInfo(ctx, info.SHA256)
}

func parseDigest(digest string) ([]byte, error) {
	b, err := hex.DecodeString(digest)
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("registry: %q is not a hex SHA-256: %w", digest, ErrModuleNotFound)
	}
	return b, nil
}

// Module returns a module's bytes and info, or an error wrapping
// ErrModuleNotFound. The bytes are a copy the caller owns.
func (r *Registry) Module(ctx context.Context, digest string) ([]byte, ModuleInfo, error) {
	return r.module(ctx, digest, true)
}

// ModuleInfo returns a module's info without reading its bytes, or an
// error wrapping ErrModuleNotFound.
func (r *Registry) ModuleInfo(ctx context.Context, digest string) (ModuleInfo, error) {
	_, info, err := r.module(ctx, digest, false)
	return info, err
}

func (r *Registry) module(ctx context.Context, digest string, withBytes bool) ([]byte, ModuleInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, ModuleInfo{}, err
	}
	sum, err := parseDigest(digest)
	if err != nil {
		return nil, ModuleInfo{}, err
	}
	var wasm []byte
	var info ModuleInfo
	err = r.db.view(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketRegistryInfos).Get(sum)
		if v == nil {
			return ErrModuleNotFound
		}
		if err := json.Unmarshal(v, &info); err != nil {
			return r.db.corrupt("module %s: %v", digest, err)
		}
		if withBytes {
			b := tx.Bucket(bucketRegistryMods).Get(sum)
			if b == nil {
				return r.db.corrupt("module %s has info but no bytes", digest)
			}
			if got := sha256.Sum256(b); !bytes.Equal(got[:], sum) {
				return r.db.corrupt("module %s: stored bytes hash to %x", digest, got)
			}
			wasm = bytes.Clone(b)
		}
		return nil
	})
	if err != nil {
		return nil, ModuleInfo{}, fmt.Errorf("registry: module %s: %w", digest, err)
	}
	return wasm, info, nil
}

// Modules returns the info of every module, by digest.
func (r *Registry) Modules(ctx context.Context) ([]ModuleInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []ModuleInfo
	err := r.db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketRegistryInfos).ForEach(func(k, v []byte) error {
			var info ModuleInfo
			if err := json.Unmarshal(v, &info); err != nil {
				return r.db.corrupt("module %x: %v", k, err)
			}
			out = append(out, info)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("registry: list modules: %w", err)
	}
	slices.SortFunc(out, func(a, b ModuleInfo) int { return bytes.Compare([]byte(a.SHA256), []byte(b.SHA256)) })
	return out, nil
}

// DeleteModule removes a module's bytes and info. Deleting a missing
// module is not an error.
func (r *Registry) DeleteModule(ctx context.Context, digest string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sum, err := parseDigest(digest)
	if err != nil {
		return err
	}
	err = r.db.commit.do(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketRegistryInfos).Get(sum) == nil && tx.Bucket(bucketRegistryMods).Get(sum) == nil {
			return refuse(errAbsent)
		}
		if err := tx.Bucket(bucketRegistryInfos).Delete(sum); err != nil {
			return err
		}
		return tx.Bucket(bucketRegistryMods).Delete(sum)
	})
	if err != nil && !errors.Is(err, errAbsent) {
		return fmt.Errorf("registry: delete module %s: %w", digest, err)
	}
	return nil
}
