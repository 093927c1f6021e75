package bolt_test

import (
	"testing"

	"github.com/adkhost/adkhost/store/registry"
	"github.com/adkhost/adkhost/store/registry/registrytest"
)

// The registry's behaviour is the shared suite's; bolt adds nothing of its own.
func TestRegistryConformance(t *testing.T) {
	registrytest.Run(t, func(t *testing.T) registry.Registry { return open(t).Registry() })
}
