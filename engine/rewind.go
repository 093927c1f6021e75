package engine

import (
	"context"
	"fmt"
	"reflect"

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
// is shared or short-lived and is not restored). Unlike google-adk, it does
// not yet restore artifact versions.
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
