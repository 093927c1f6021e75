package adkhost

// Levels of Log, the values of log/slog's.
const (
	LevelDebug = -4
	LevelInfo  = 0
	LevelWarn  = 4
	LevelError = 8
)

// Log sends a line to the host's log at a level: a log/slog level
// (slog.LevelInfo) or one of the constants above. It needs no capability;
// a line the host cannot take is dropped. A guest's stdout and stderr are
// not a log: the host keeps stderr only to explain a trap. For a
// *slog.Logger whose lines go to the host, see package adkslog.
//
// The level is any integer type so that this package need not import
// log/slog: a guest that imports it links slog, log and time's formatting,
// about 190 KB of code that every cold start of the module compiles.
func Log[L ~int](level L, msg string) { rawLog(int32(level), validUTF8(msg)) }
