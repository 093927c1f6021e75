package sandbox

// Rewrites returns how many modules r validated and rewrote.
func Rewrites(r *Runtime) int64 { return r.rewrites.Load() }
