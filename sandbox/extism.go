package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/sys"

	"github.com/adkhost/adkhost/abi"
)

// The Extism transport runs a module through github.com/extism/go-sdk. Its
// facts shape this file: an extism.Plugin is not goroutine-safe (the pool
// gives each call its own), it looks exports up on every call (about 73 µs
// for a warm call), it drops an oversized input silently (Pool.Call checks
// MaxInputBytes first), and a timed-out plugin is closed for good (it is
// discarded).

// compileExtism builds the pool's extism.CompiledPlugin: its own wazero
// runtime, sharing the Runtime's compilation cache, with the pool's memory
// limit, config and read-only directories, and no Extism HTTP (modules use
// http_request, which enforces the grant).
func (s *poolSpec) compileExtism(ctx context.Context) error {
	manifest := extism.Manifest{
		Wasm:   []extism.Wasm{extism.WasmData{Data: s.mod.wasm, Name: "main"}},
		Memory: &extism.ManifestMemory{MaxPages: s.limits.MemoryPages, MaxVarBytes: int64(s.limits.MaxInputBytes)},
	}
	if s.caps[abi.CapConfig] {
		manifest.Config = s.grants.Config
	}
	if s.caps[abi.CapFS] {
		manifest.AllowedPaths = map[string]string{}
		for _, d := range s.grants.Dirs {
			manifest.AllowedPaths["ro:"+d.HostPath] = d.GuestPath
		}
	}
	host := extism.NewHostFunctionWithStack(abi.ImportExtismHost, extismHost, []extism.ValueType{extism.ValueTypePTR}, []extism.ValueType{extism.ValueTypePTR})
	host.SetNamespace(abi.ExtismUserModule)
	cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{
		RuntimeConfig: s.r.rcfg.WithMemoryLimitPages(s.limits.MemoryPages),
		EnableWasi:    true,
	}, []extism.HostFunction{host})
	if err != nil {
		return err
	}
	s.extism = cp
	return nil
}

type extismInstance struct {
	plugin *extism.Plugin
	stderr *tail
}

func (s *poolSpec) newExtism(ctx context.Context) (*extismInstance, error) {
	stderr := &tail{}
	// The Extism config (WithStartFunctions, name) is set by go-sdk; WASI
	// grants come from the pool's module config.
	cfg := s.wcfg.WithStderr(stderr)
	ictx, cancel := context.WithTimeout(ctx, s.limits.InitTimeout)
	defer cancel()
	p, err := s.extism.Instance(ictx, extism.PluginInstanceConfig{ModuleConfig: cfg})
	if err != nil {
		if ictx.Err() != nil {
			return nil, fmt.Errorf("%w: instantiation stopped after %s (InitTimeout): %v", ErrTimeout, s.limits.InitTimeout, err)
		}
		return nil, fmt.Errorf("%w: instantiation: %v%s", ErrTrap, err, stderr.suffix())
	}
	logger := s.logger
	p.SetLogger(func(level extism.LogLevel, msg string) {
		logger.Log(context.Background(), extismLevel(level), msg, "source", "guest")
	})
	return &extismInstance{plugin: p, stderr: stderr}, nil
}

func (in *extismInstance) close(ctx context.Context) { in.plugin.Close(ctx) }

func (in *extismInstance) call(ctx context.Context, cs *callState, export string, input []byte) ([]byte, bool, error) {
	in.stderr.reset()
	ctx, cancel := context.WithDeadline(ctx, cs.deadline)
	defer cancel()
	rc, out, err := in.plugin.CallWithContext(ctx, export, input)
	if err != nil {
		if ctx.Err() != nil {
			cs.stopped = true
			return nil, true, err // the pool reports the deadline
		}
		var exit *sys.ExitError
		if !errors.As(err, &exit) && rc != 0 {
			// The guest set an Extism error and returned: the wasm call
			// itself completed, so the instance is sound.
			if msg := in.plugin.GetErrorWithContext(context.Background()); msg != "" && msg == err.Error() {
				return nil, false, fmt.Errorf("%w: %s", ErrGuest, msg)
			}
		}
		if exit != nil {
			return nil, true, fmt.Errorf("%w: %s: guest exited with code %d%s", ErrTrap, export, exit.ExitCode(), in.stderr.suffix())
		}
		return nil, true, fmt.Errorf("%w: %s: %s%s", ErrTrap, export, firstLine(err), in.stderr.suffix())
	}
	if rc != 0 {
		return nil, false, fmt.Errorf("%w: %s returned %d", ErrGuest, export, rc)
	}
	if len(out) > cs.spec.limits.MaxOutputBytes {
		return nil, false, fmt.Errorf("%w: %d bytes, limit %d", ErrOutputTooLarge, len(out), cs.spec.limits.MaxOutputBytes)
	}
	return out, false, nil
}

// extismHost is adkhost_host: it reads a JSON abi.HostCall from Extism
// memory, runs it, and returns the offset of a JSON abi.HostReply.
func extismHost(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
	reply := func(r *abi.HostReply) {
		b, err := abi.Encode(r)
		if err != nil {
			panic(err)
		}
		off, err := p.WriteBytes(b)
		if err != nil {
			panic(fmt.Errorf("%s: writing the reply: %w", abi.ImportExtismHost, err))
		}
		stack[0] = off
	}
	cs, _ := ctx.Value(callKey{}).(*callState)
	if cs == nil {
		reply(&abi.HostReply{Status: abi.StatusUnavailable})
		return
	}
	cs.countHostCall()
	n, err := p.LengthWithContext(ctx, stack[0])
	if err != nil {
		reply(&abi.HostReply{Status: abi.StatusBadPointer})
		return
	}
	if n > uint64(cs.spec.limits.MaxOutputBytes) {
		reply(&abi.HostReply{Status: abi.StatusTooLarge})
		return
	}
	b, err := p.ReadBytes(stack[0])
	if err != nil {
		reply(&abi.HostReply{Status: abi.StatusBadPointer})
		return
	}
	var c abi.HostCall
	if err := abi.Decode(b, &c, cs.spec.limits.MaxOutputBytes); err != nil {
		reply(&abi.HostReply{Status: abi.StatusInvalidArgument})
		return
	}
	reply(cs.dispatch(ctx, &c))
}

func extismLevel(l extism.LogLevel) slog.Level {
	switch l {
	case extism.LogLevelTrace, extism.LogLevelDebug:
		return slog.LevelDebug
	case extism.LogLevelWarn:
		return slog.LevelWarn
	case extism.LogLevelError:
		return slog.LevelError
	}
	return slog.LevelInfo
}
