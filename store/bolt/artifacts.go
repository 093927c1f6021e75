package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	bbolt "go.etcd.io/bbolt"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/artifact"
)

// ArtifactService is an artifact.Service in the store file. Get it from
// DB.Artifacts. Each version is stored as the part's JSON; Save and Delete
// commit one transaction each (grouped with concurrent writes), Load, List
// and Versions run one read transaction. It is safe for concurrent use.
type ArtifactService struct {
	db *DB
}

var _ artifact.Service = (*ArtifactService)(nil)

// Scope bytes in artifact keys: the user's own names, or a session's.
const (
	scopeUser    = 'u'
	scopeSession = 's'
)

// artifactPrefix is the key prefix of the artifacts one scope holds: the
// user's (user: names) or one session's.
func artifactPrefix(app, user string, userScoped bool, sessionID string) []byte {
	k := userKey(app, user)
	if userScoped {
		return append(k, scopeUser)
	}
	return appendPart(append(k, scopeSession), sessionID)
}

func artifactKey(k artifact.Key) []byte {
	scoped := artifact.IsUserScoped(k.Name)
	return appendPart(artifactPrefix(k.AppName, k.UserID, scoped, k.SessionID), k.Name)
}

func notFound(k artifact.Key, version int) error {
	if version == artifact.Latest {
		return fmt.Errorf("artifact %q: %w", k.Name, artifact.ErrNotFound)
	}
	return fmt.Errorf("artifact %q version %d: %w", k.Name, version, artifact.ErrNotFound)
}

// Save implements artifact.Service.
func (a *ArtifactService) Save(ctx context.Context, k artifact.Key, part *genai.Part) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if part == nil {
		return 0, fmt.Errorf("artifact %q: nil part", k.Name)
	}
	data, err := json.Marshal(part)
	if err != nil {
		return 0, fmt.Errorf("artifact %q: encode part: %w", k.Name, err)
	}
	key := artifactKey(k)
	var version uint64
	err = a.db.commit.do(func(tx *bbolt.Tx) error {
		b, err := tx.Bucket(bucketArtifacts).CreateBucketIfNotExists(key)
		if err != nil {
			return err
		}
		b.FillPercent = 0.95
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		version = seq - 1
		return b.Put(u64(version), data)
	})
	if err != nil {
		return 0, fmt.Errorf("artifact %q: save: %w", k.Name, err)
	}
	return int(version), nil
}

// Load implements artifact.Service.
func (a *ArtifactService) Load(ctx context.Context, k artifact.Key, version int) (*genai.Part, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if version < 0 && version != artifact.Latest {
		return nil, notFound(k, version)
	}
	key := artifactKey(k)
	var part *genai.Part
	err := a.db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketArtifacts).Bucket(key)
		if b == nil {
			return notFound(k, version)
		}
		var v []byte
		if version == artifact.Latest {
			_, v = b.Cursor().Last()
		} else {
			v = b.Get(u64(uint64(version)))
		}
		if v == nil {
			return notFound(k, version)
		}
		part = new(genai.Part)
		if err := json.Unmarshal(v, part); err != nil {
			return a.db.corrupt("artifact %q: %v", k.Name, err)
		}
		if artifact.IsAbsent(part) {
			return notFound(k, version)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return part, nil
}

// List implements artifact.Service.
func (a *ArtifactService) List(ctx context.Context, appName, userID, sessionID string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var names []string
	err := a.db.view(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketArtifacts).Cursor()
		for _, prefix := range [][]byte{
			artifactPrefix(appName, userID, false, sessionID),
			artifactPrefix(appName, userID, true, ""),
		} {
			for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
				name, rest, err := readPart(k[len(prefix):])
				if err != nil || len(rest) > 0 {
					return a.db.corrupt("artifact key %q", k)
				}
				names = append(names, name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// Versions implements artifact.Service.
func (a *ArtifactService) Versions(ctx context.Context, k artifact.Key) ([]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	key := artifactKey(k)
	out := []int{}
	err := a.db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketArtifacts).Bucket(key)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for v, _ := c.First(); v != nil; v, _ = c.Next() {
			if len(v) != 8 {
				return a.db.corrupt("artifact %q: version key %q", k.Name, v)
			}
			out = append(out, int(binary.BigEndian.Uint64(v)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete implements artifact.Service.
func (a *ArtifactService) Delete(ctx context.Context, k artifact.Key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := artifactKey(k)
	err := a.db.commit.do(func(tx *bbolt.Tx) error {
		err := tx.Bucket(bucketArtifacts).DeleteBucket(key)
		if errors.Is(err, bbolt.ErrBucketNotFound) {
			return refuse(errAbsent)
		}
		return err
	})
	if err != nil && !errors.Is(err, errAbsent) {
		return fmt.Errorf("artifact %q: delete: %w", k.Name, err)
	}
	return nil
}
