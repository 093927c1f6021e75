package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/session"
)

// InvocationNotFoundError reports a rewind to an invocation the session
// does not hold (google-adk's InvocationNotFoundError).
type InvocationNotFoundError struct{ InvocationID string }

func (e *InvocationNotFoundError) Error() string {
	return "Invocation ID not found: " + e.InvocationID
}

// ErrorCode names google-adk's exception.
func (e *InvocationNotFoundError) ErrorCode() string { return "InvocationNotFoundError" }

// Rewind undoes a session back to before an invocation (google-adk
// Runner.rewind_async): it appends a user event with
// rewind_before_invocation_id, which hides that invocation and everything
// after it from later model requests, and a state delta that restores the
// session-scoped state as it was at that point (app:, user: and temp: state
// is shared or short-lived and is not restored). With an artifact service,
// session artifacts changed since are restored: the version they had is
// saved again as the newest, and those created since get the rewind
// tombstone, which loads as absent; user: artifacts are left alone.
func (r *Runner) Rewind(ctx context.Context, userID, sessionID, invocationID string) error {
	sess, err := r.cfg.Sessions.Get(ctx, &session.GetRequest{AppName: r.cfg.AppName, UserID: userID, SessionID: sessionID})
	if err != nil {
		return fmt.Errorf("rewind: %w", err)
	}
	events := sess.Events()
	at := -1
	for i, ev := range events {
		if ev.InvocationID == invocationID {
			at = i
			break
		}
	}
	if at < 0 {
		return &InvocationNotFoundError{InvocationID: invocationID}
	}
	ev := session.NewEvent(newInvocationID(), "user", "")
	ev.Actions.RewindBeforeInvocationID = invocationID
	ev.Actions.StateDelta = rewindStateDelta(events[:at], sess.State())
	delta, err := r.rewindArtifacts(ctx, sess, events, at)
	if err != nil {
		return fmt.Errorf("rewind: %w", err)
	}
	ev.Actions.ArtifactDelta = delta
	if err := r.cfg.Sessions.AppendEvent(ctx, sess, ev); err != nil {
		return fmt.Errorf("rewind: %w", err)
	}
	return nil
}

// rewindStateDelta returns the changes that turn current back into the
// session-scoped state the events before the rewind point built: keys set
// since are reset (nil for keys that did not exist then).
func rewindStateDelta(before []*session.Event, current map[string]any) map[string]any {
	then := map[string]any{}
	for _, ev := range before {
		for k, v := range ev.Actions.StateDelta {
			switch {
			case session.IsScoped(k):
			case v == nil:
				delete(then, k)
			default:
				then[k] = v
			}
		}
	}
	delta := map[string]any{}
	for k, v := range then {
		if cur, ok := current[k]; !ok || !reflect.DeepEqual(cur, v) {
			delta[k] = v
		}
	}
	for k := range current {
		if _, ok := then[k]; !ok && !session.IsScoped(k) {
			delta[k] = nil
		}
	}
	return delta
}

// rewindArtifacts saves, for each session artifact whose version changed
// after events[at], the version it had then (or the tombstone if it did not
// exist), and returns the new versions (google-adk
// compute_artifact_delta_for_rewind).
func (r *Runner) rewindArtifacts(ctx context.Context, sess *session.Session, events []*session.Event, at int) (map[string]int, error) {
	if r.cfg.Artifacts == nil {
		return nil, nil
	}
	then, now := map[string]int{}, map[string]int{}
	for i, ev := range events {
		for name, v := range ev.Actions.ArtifactDelta {
			if i < at {
				then[name] = v
			}
			now[name] = v
		}
	}
	var delta map[string]int
	for _, name := range slices.Sorted(maps.Keys(now)) {
		if artifact.IsUserScoped(name) {
			continue
		}
		v, existed := then[name]
		if existed && v == now[name] {
			continue
		}
		key := artifact.Key{AppName: r.cfg.AppName, UserID: sess.UserID, SessionID: sess.ID, Name: name}
		part := artifact.RewindTombstone()
		if existed {
			p, err := r.cfg.Artifacts.Load(ctx, key, v)
			switch {
			case err == nil:
				part = p
			case errors.Is(err, artifact.ErrNotFound):
				r.cfg.Logger.Warn("artifact version missing during rewind; saving it as absent", "artifact", name, "version", v, "session", sess.ID)
			default:
				return nil, err
			}
		}
		saved, err := r.cfg.Artifacts.Save(ctx, key, part)
		if err != nil {
			return nil, err
		}
		if delta == nil {
			delta = map[string]int{}
		}
		delta[name] = saved
	}
	return delta, nil
}
