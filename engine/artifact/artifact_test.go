package artifact_test

import (
	"testing"

	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/artifact/artifacttest"
)

func TestInMemoryServiceConformance(t *testing.T) {
	artifacttest.Run(t, func(*testing.T) artifact.Service { return artifact.NewInMemoryService() })
}
