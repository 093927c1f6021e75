package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/artifact"
)

// ArtifactService is an artifact.Service in the table adkhost_artifacts:
// one row per version, the part's JSON as bytes. Get it from
// DB.Artifacts. It is safe for concurrent use by many processes.
type ArtifactService struct {
	db *DB
}

var _ artifact.Service = (*ArtifactService)(nil)

// scope is the session_id column of k: "" for a user: name.
func scope(k artifact.Key) string {
	if artifact.IsUserScoped(k.Name) {
		return ""
	}
	return k.SessionID
}

func notFound(k artifact.Key, version int) error {
	if version == artifact.Latest {
		return fmt.Errorf("artifact %q: %w", k.Name, artifact.ErrNotFound)
	}
	return fmt.Errorf("artifact %q version %d: %w", k.Name, version, artifact.ErrNotFound)
}

// saveRetries bounds the retries of a Save that lost the race for a
// version number to a concurrent Save of the same artifact.
const saveRetries = 32

// Save implements artifact.Service: the next version is one past the
// newest stored (0 for none), taken in the insert itself; a concurrent
// Save that took the same number first makes this one retry.
func (a *ArtifactService) Save(ctx context.Context, k artifact.Key, part *genai.Part) (int, error) {
	if part == nil {
		return 0, fmt.Errorf("artifact %q: nil part", k.Name)
	}
	data, err := json.Marshal(part)
	if err != nil {
		return 0, fmt.Errorf("artifact %q: encode part: %w", k.Name, err)
	}
	for try := 0; ; try++ {
		var version int
		err := a.db.pool.QueryRow(ctx, `
INSERT INTO adkhost_artifacts (app_name, user_id, session_id, name, version, part)
SELECT $1, $2, $3, $4, coalesce(max(version) + 1, 0), $5 FROM adkhost_artifacts
WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND name = $4
RETURNING version`, k.AppName, k.UserID, scope(k), k.Name, data).Scan(&version)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && try < saveRetries {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("artifact %q: save: %w", k.Name, err)
		}
		return version, nil
	}
}

// Load implements artifact.Service.
func (a *ArtifactService) Load(ctx context.Context, k artifact.Key, version int) (*genai.Part, error) {
	if version < 0 && version != artifact.Latest {
		return nil, notFound(k, version)
	}
	var data []byte
	var err error
	if version == artifact.Latest {
		err = a.db.pool.QueryRow(ctx, `SELECT part FROM adkhost_artifacts WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND name = $4 ORDER BY version DESC LIMIT 1`,
			k.AppName, k.UserID, scope(k), k.Name).Scan(&data)
	} else {
		err = a.db.pool.QueryRow(ctx, `SELECT part FROM adkhost_artifacts WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND name = $4 AND version = $5`,
			k.AppName, k.UserID, scope(k), k.Name, version).Scan(&data)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(k, version)
	}
	if err != nil {
		return nil, fmt.Errorf("artifact %q: load: %w", k.Name, err)
	}
	part := new(genai.Part)
	if err := json.Unmarshal(data, part); err != nil {
		return nil, fmt.Errorf("artifact %q: stored part: %w", k.Name, err)
	}
	if artifact.IsAbsent(part) {
		return nil, notFound(k, version)
	}
	return part, nil
}

// List implements artifact.Service.
func (a *ArtifactService) List(ctx context.Context, appName, userID, sessionID string) ([]string, error) {
	rows, err := a.db.pool.Query(ctx, `SELECT DISTINCT name FROM adkhost_artifacts
WHERE app_name = $1 AND user_id = $2 AND (session_id = $3 AND name NOT LIKE 'user:%' OR session_id = '' AND name LIKE 'user:%')
`, appName, userID, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	// Byte order, whatever the database's collation.
	slices.Sort(names)
	return names, nil
}

// Versions implements artifact.Service.
func (a *ArtifactService) Versions(ctx context.Context, k artifact.Key) ([]int, error) {
	rows, err := a.db.pool.Query(ctx, `SELECT version FROM adkhost_artifacts WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND name = $4 ORDER BY version`,
		k.AppName, k.UserID, scope(k), k.Name)
	if err != nil {
		return nil, fmt.Errorf("artifact %q: versions: %w", k.Name, err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("artifact %q: versions: %w", k.Name, err)
	}
	if vs == nil {
		vs = []int{}
	}
	return vs, nil
}

// Delete implements artifact.Service.
func (a *ArtifactService) Delete(ctx context.Context, k artifact.Key) error {
	_, err := a.db.pool.Exec(ctx, `DELETE FROM adkhost_artifacts WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND name = $4`,
		k.AppName, k.UserID, scope(k), k.Name)
	if err != nil {
		return fmt.Errorf("artifact %q: delete: %w", k.Name, err)
	}
	return nil
}
