package instruction

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/session"
)

type fakeReadonly struct {
	context.Context
	sess *session.Session
}

func (f *fakeReadonly) InvocationID() string        { return "inv" }
func (f *fakeReadonly) AgentName() string           { return "helper" }
func (f *fakeReadonly) Branch() string              { return "helper" }
func (f *fakeReadonly) UserContent() *genai.Content { return nil }
func (f *fakeReadonly) Session() *session.Session   { return f.sess }
func (f *fakeReadonly) AppName() string             { return f.sess.AppName }
func (f *fakeReadonly) UserID() string              { return f.sess.UserID }

func TestNewSource(t *testing.T) {
	ctx := context.Background()
	sess := session.New("app", "u", "s1", map[string]any{"topic": "go", "user:n": 3}, nil, time.Now(), 0)
	rc := &fakeReadonly{Context: ctx, sess: sess}
	arts := artifact.NewInMemoryService()
	if _, err := arts.Save(ctx, artifact.Key{AppName: "app", UserID: "u", SessionID: "s1", Name: "notes"}, genai.NewPartFromText("v1")); err != nil {
		t.Fatal(err)
	}
	if _, err := arts.Save(ctx, artifact.Key{AppName: "app", UserID: "u", SessionID: "s1", Name: "notes"}, genai.NewPartFromText("v2")); err != nil {
		t.Fatal(err)
	}
	if _, err := arts.Save(ctx, artifact.Key{AppName: "app", UserID: "u", SessionID: "other", Name: "elsewhere"}, genai.NewPartFromText("x")); err != nil {
		t.Fatal(err)
	}

	got, err := Inject(ctx, "{topic} {user:n} {artifact.notes} [{artifact.elsewhere?}]", NewSource(rc, arts))
	if err != nil || got != "go 3 v2 []" {
		t.Errorf("Inject = %q, %v", got, err)
	}
	_, err = Inject(ctx, "{artifact.elsewhere}", NewSource(rc, arts))
	var me *MissingArtifactError
	if !errors.As(err, &me) || me.Name != "elsewhere" || me.Agent != "helper" {
		t.Errorf("missing artifact error = %v", err)
	}
	_, err = Inject(ctx, "{topic} {artifact.notes?}", NewSource(rc, nil))
	if !errors.Is(err, ErrNoArtifactService) {
		t.Errorf("no artifact service error = %v", err)
	}
	_, err = Inject(ctx, "{nope}", NewSource(rc, nil))
	var mk *MissingKeyError
	if !errors.As(err, &mk) || mk.Key != "nope" || mk.Agent != "helper" {
		t.Errorf("missing key error = %v", err)
	}
}
