package main

import "testing"

// TestGCSettings: a flag given wins, then the environment's GOGC and
// GOMEMLIMIT, then the flags' defaults; a limit of 0 sets none.
func TestGCSettings(t *testing.T) {
	env := func(vars ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for _, v := range vars {
				if v == k {
					return "1", true
				}
			}
			return "", false
		}
	}
	for _, c := range []struct {
		name                     string
		limit                    int64
		percentGiven, limitGiven bool
		env                      []string
		wantPercent, wantLimit   bool
	}{
		{"defaults", 1 << 30, false, false, nil, true, true},
		{"env wins over defaults", 1 << 30, false, false, []string{"GOGC", "GOMEMLIMIT"}, false, false},
		{"env GOGC only", 1 << 30, false, false, []string{"GOGC"}, false, true},
		{"flags win over env", 1 << 30, true, true, []string{"GOGC", "GOMEMLIMIT"}, true, true},
		{"no limit", 0, false, true, nil, true, false},
	} {
		p, l := gcSettings(c.limit, c.percentGiven, c.limitGiven, env(c.env...))
		if p != c.wantPercent || l != c.wantLimit {
			t.Errorf("%s: set GOGC %v, limit %v; want %v, %v", c.name, p, l, c.wantPercent, c.wantLimit)
		}
	}
}

func TestMachineMemory(t *testing.T) {
	if m := machineMemory(); m < 64<<20 {
		t.Fatalf("machineMemory() = %d, not a machine's memory", m)
	}
}
