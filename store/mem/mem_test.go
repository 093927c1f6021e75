package mem_test

import (
	"testing"

	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/artifact/artifacttest"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/memory/memorytest"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/session/sessiontest"
	"github.com/adkhost/adkhost/store/mem"
	"github.com/adkhost/adkhost/store/registry"
	"github.com/adkhost/adkhost/store/registry/registrytest"
)

func TestSessionServiceConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Service { return mem.New().Sessions() })
	sessiontest.RunKeyOrder(t, func(t *testing.T) session.Service { return mem.New().Sessions() })
}

func TestArtifactServiceConformance(t *testing.T) {
	artifacttest.Run(t, func(t *testing.T) artifact.Service { return mem.New().Artifacts() })
}

func TestRegistryConformance(t *testing.T) {
	registrytest.Run(t, func(t *testing.T) registry.Registry { return mem.New().Registry() })
}

func TestMemoryServiceConformance(t *testing.T) {
	memorytest.Run(t, func(*testing.T) memory.Service { return mem.New().Memory() })
}
