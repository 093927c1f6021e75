package bolt_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/store/bolt"
	"github.com/adkhost/adkhost/store/registry"
	"github.com/adkhost/adkhost/store/registry/registrytest"
)

func TestRegistryApps(t *testing.T) {
	ctx := context.Background()
	reg := open(t).Registry()
	if _, err := reg.App(ctx, "weather", bolt.LatestVersion); !errors.Is(err, bolt.ErrAppNotFound) {
		t.Fatalf("App of an empty registry: %v", err)
	}
	for i, def := range []string{"v1 definition", "v2 definition"} {
		a, err := reg.PutApp(ctx, "weather", []byte(def))
		if err != nil {
			t.Fatal(err)
		}
		if a.Version != i+1 || string(a.Definition) != def || a.Created.IsZero() {
			t.Errorf("PutApp %d = %+v", i, a)
		}
	}
	if _, err := reg.PutApp(ctx, "billing", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.PutApp(ctx, "", []byte("x")); err == nil {
		t.Errorf("PutApp with no name succeeded")
	}
	latest, err := reg.App(ctx, "weather", bolt.LatestVersion)
	if err != nil || latest.Version != 2 || string(latest.Definition) != "v2 definition" {
		t.Errorf("latest = %+v, %v", latest, err)
	}
	v1, err := reg.App(ctx, "weather", 1)
	if err != nil || string(v1.Definition) != "v1 definition" {
		t.Errorf("v1 = %+v, %v", v1, err)
	}
	for _, v := range []int{3, -1} {
		if _, err := reg.App(ctx, "weather", v); !errors.Is(err, bolt.ErrAppNotFound) {
			t.Errorf("App version %d: err = %v", v, err)
		}
	}
	if vs, err := reg.AppVersions(ctx, "weather"); err != nil || !slices.Equal(vs, []int{1, 2}) {
		t.Errorf("AppVersions = %v, %v", vs, err)
	}
	apps, err := reg.Apps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range apps {
		names = append(names, a.Name)
	}
	if !slices.Equal(names, []string{"billing", "weather"}) || apps[1].Version != 2 {
		t.Errorf("Apps = %+v", apps)
	}
	if err := reg.DeleteApp(ctx, "weather"); err != nil {
		t.Fatal(err)
	}
	if err := reg.DeleteApp(ctx, "weather"); err != nil {
		t.Errorf("second DeleteApp: %v", err)
	}
	if _, err := reg.AppVersions(ctx, "weather"); !errors.Is(err, bolt.ErrAppNotFound) {
		t.Errorf("AppVersions after delete: %v", err)
	}
	// Versions start again at 1.
	if a, err := reg.PutApp(ctx, "weather", []byte("again")); err != nil || a.Version != 1 {
		t.Errorf("PutApp after delete = %+v, %v", a, err)
	}
}

func TestRegistryModules(t *testing.T) {
	ctx := context.Background()
	reg := open(t).Registry()
	wasm := []byte("\x00asm\x01\x00\x00\x00 pretend module")
	sum := sha256.Sum256(wasm)
	digest := hex.EncodeToString(sum[:])
	info, err := reg.PutModule(ctx, wasm, "weather-tools", map[string]string{"abi": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if info.SHA256 != digest || info.Size != int64(len(wasm)) || info.Name != "weather-tools" || info.Metadata["abi"] != "1" || info.Created.IsZero() {
		t.Errorf("PutModule = %+v", info)
	}
	got, gotInfo, err := reg.Module(ctx, digest)
	if err != nil || string(got) != string(wasm) || gotInfo.SHA256 != digest {
		t.Fatalf("Module = %q, %+v, %v", got, gotInfo, err)
	}
	got[0] = 'X' // the caller's copy
	if again, _, _ := reg.Module(ctx, digest); again[0] != 0 {
		t.Errorf("changing a returned module changed the stored one")
	}
	// The same bytes again: one module, original creation time, new labels.
	info2, err := reg.PutModule(ctx, wasm, "renamed", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !info2.Created.Equal(info.Created) || info2.Name != "renamed" || info2.Metadata != nil {
		t.Errorf("PutModule of the same bytes = %+v, first was %+v", info2, info)
	}
	other, err := reg.PutModule(ctx, []byte("other"), "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := reg.Modules(ctx)
	if err != nil || len(mods) != 2 {
		t.Fatalf("Modules = %+v, %v", mods, err)
	}
	if !slices.IsSortedFunc(mods, func(a, b bolt.ModuleInfo) int { return strings.Compare(a.SHA256, b.SHA256) }) {
		t.Errorf("Modules not sorted by digest")
	}
	if err := reg.DeleteModule(ctx, digest); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.Module(ctx, digest); !errors.Is(err, bolt.ErrModuleNotFound) {
		t.Errorf("Module after delete: %v", err)
	}
	if _, err := reg.ModuleInfo(ctx, other.SHA256); err != nil {
		t.Errorf("the other module after delete: %v", err)
	}
	if err := reg.DeleteModule(ctx, digest); err != nil {
		t.Errorf("second DeleteModule: %v", err)
	}
	for _, bad := range []string{"", "xyz", digest[:10]} {
		if _, err := reg.ModuleInfo(ctx, bad); !errors.Is(err, bolt.ErrModuleNotFound) {
			t.Errorf("ModuleInfo(%q): %v", bad, err)
		}
	}
}

func TestRegistryConformance(t *testing.T) {
	registrytest.Run(t, func(t *testing.T) registry.Registry { return open(t).Registry() })
}
