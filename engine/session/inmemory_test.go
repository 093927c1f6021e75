package session_test

import (
	"testing"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/session/sessiontest"
)

func TestInMemoryServiceConformance(t *testing.T) {
	sessiontest.Run(t, func(*testing.T) session.Service { return session.NewInMemoryService() })
	sessiontest.RunKeyOrder(t, func(*testing.T) session.Service { return session.NewInMemoryService() })
}
