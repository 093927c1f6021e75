package sandbox

import (
	"net/netip"
	"testing"
)

// TestPublicAddr: addresses a module's HTTP request may not reach without
// AllowPrivate, IPv6 forms that embed a private IPv4 address among them.
func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8":              true,
		"2606:4700::1111":      true,
		"::ffff:8.8.8.8":       true,
		"10.0.0.1":             false,
		"127.0.0.1":            false,
		"169.254.169.254":      false,
		"100.64.0.1":           false,
		"198.18.0.1":           false,
		"240.0.0.1":            false,
		"255.255.255.255":      false,
		"::ffff:10.0.0.1":      false,
		"::10.0.0.1":           false, // IPv4-compatible
		"64:ff9b::a00:1":       false, // NAT64 of 10.0.0.1
		"64:ff9b:1::a00:1":     false, // local-use NAT64
		"2002:a00:1::1":        false, // 6to4 of 10.0.0.1
		"2001:0:4136:e378::1":  false, // Teredo
		"100::1":               false,
		"2001:db8::1":          false,
		"fd00::1":              false,
		"fe80::1":              false,
		"::1":                  false,
		"::":                   false,
		"ff02::1":              false,
		"2001:4860:4860::8888": true,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}
