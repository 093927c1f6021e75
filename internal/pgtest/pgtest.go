// Package pgtest runs a throwaway PostgreSQL cluster for tests: initdb into
// a temporary directory, a postgres server on a socket in it and on a free
// loopback port, a fresh database per test, everything removed at the end.
//
// A package shares one cluster across its tests through TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and each test asks for a database with pgtest.Database(t). Without
// PostgreSQL's binaries the tests skip with the reason, or fail under
// CI=true (CI's .ci/run installs Debian's postgresql).
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	// Dir holds the data directory and the socket.
	Dir string
	// Port is the loopback TCP port (the socket's name uses it too).
	Port    int
	bin     string
	durable bool
	cred    *syscall.Credential
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  <-chan struct{}
	log     *os.File
	dbs     atomic.Int64
}

var (
	shared     *Cluster
	sharedErr  error
	sharedOnce sync.Once
)

// Main starts the package's cluster, runs m and stops the cluster. A
// cluster that cannot start is reported by every Database call.
func Main(m *testing.M) int {
	// Started lazily by the first Database call, so a package whose tests
	// are filtered out by -run starts nothing.
	code := m.Run()
	Shutdown()
	return code
}

// Shutdown stops the package's cluster, if one was started; for a
// TestMain of its own.
func Shutdown() {
	if shared != nil {
		shared.Stop()
	}
}

// Get returns the package's cluster, starting it on first use, or skips t
// (fails it under CI=true) when PostgreSQL is not installed.
func Get(t testing.TB) *Cluster {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = Start() })
	if sharedErr != nil {
		if errors.Is(sharedErr, ErrNotInstalled) && os.Getenv("CI") != "true" {
			t.Skipf("%v (apt-get install postgresql; CI's .ci/run installs it)", sharedErr)
		}
		t.Fatalf("pgtest: %v", sharedErr)
	}
	return shared
}

// Database creates an empty database in the package's cluster for t and
// returns its URL; it is dropped at t's cleanup.
func Database(t testing.TB) string {
	t.Helper()
	c := Get(t)
	url, drop, err := c.CreateDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return url
}

// ErrNotInstalled is wrapped by Start's error when no PostgreSQL binaries
// are found.
var ErrNotInstalled = errors.New("PostgreSQL is not installed (no initdb and postgres on PATH or in /usr/lib/postgresql/*/bin)")

// FindBin returns the directory holding initdb and postgres: PATH first,
// then Debian's /usr/lib/postgresql/<version>/bin, newest version first.
func FindBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNotInstalled
}

// Options configure StartWith.
type Options struct {
	// Durable keeps PostgreSQL's defaults (fsync, full page writes), for
	// benchmarks; tests run without fsync.
	Durable bool
}

// Start initializes and starts a new cluster in a temporary directory.
// Running as root, it runs initdb and postgres as the user "postgres" (or
// "nobody"), which PostgreSQL requires.
func Start() (*Cluster, error) { return StartWith(Options{}) }

// StartWith is Start with options.
func StartWith(opts Options) (*Cluster, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin, durable: opts.Durable}
	if os.Geteuid() == 0 {
		for _, name := range []string{"postgres", "nobody"} {
			u, err := user.Lookup(name)
			if err != nil {
				continue
			}
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
			break
		}
		if c.cred == nil {
			os.RemoveAll(dir)
			return nil, errors.New("running as root and neither user postgres nor nobody exists to run PostgreSQL as")
		}
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", c.dataDir(), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := c.start(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) dataDir() string { return filepath.Join(c.Dir, "data") }

// start runs the server and waits until it accepts connections. A server
// that exits at once (the shared memory of a killed one still attached by
// its dying children) is started again.
func (c *Cluster) start() error {
	if c.Port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		c.Port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		exited, err := c.spawn()
		if err != nil {
			return err
		}
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn, err := pgx.Connect(ctx, c.URL("postgres"))
			cancel()
			if err == nil {
				conn.Close(context.Background())
				return nil
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(c.Dir, "postgres.log"))
				return fmt.Errorf("postgres did not accept connections within 30s: %v\n%s", err, tail(log))
			}
			select {
			case <-exited:
			case <-time.After(50 * time.Millisecond):
				continue
			}
			break
		}
		c.mu.Lock()
		c.log.Close()
		c.cmd = nil
		c.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
}

// spawn starts the postgres process; the channel closes when it exits.
func (c *Cluster) spawn() (<-chan struct{}, error) {
	logf, err := os.OpenFile(filepath.Join(c.Dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	args := []string{"-D", c.dataDir(), "-k", c.Dir, "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port),
		"-c", "max_connections=200", "-c", "shared_buffers=32MB"}
	if !c.durable {
		// fsync off: a killed server (Kill, Restart) keeps what it
		// committed, the machine's page cache holds it; only a machine
		// crash would lose it, which tests do not do.
		args = append(args, "-c", "fsync=off", "-c", "full_page_writes=off")
	}
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	c.mu.Lock()
	c.cmd, c.log, c.exited = cmd, logf, exited
	c.mu.Unlock()
	return exited, nil
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return bytes.TrimSpace(b)
}

// Pid is the postmaster's process id, also the process group of every
// server process (0 when stopped).
func (c *Cluster) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// URL returns a connection URL for database db over the loopback port.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

// CreateDatabase creates a new empty database and returns its URL and a
// function that drops it.
func (c *Cluster) CreateDatabase(ctx context.Context) (string, func(), error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), c.dbs.Add(1))
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("pgtest: create database: %w", err)
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	return c.URL(name), drop, nil
}

// Kill stops the server at once with SIGKILL, as a crash would.
func (c *Cluster) Kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return
	}
	syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.exited
	c.log.Close()
	c.cmd = nil
}

// Restart kills the server and starts it again on the same port and data.
func (c *Cluster) Restart() error {
	c.Kill()
	// The killed postmaster's children may hold the shared memory briefly.
	os.Remove(filepath.Join(c.dataDir(), "postmaster.pid"))
	return c.start()
}

// Stop stops the server and removes its directory.
func (c *Cluster) Stop() {
	c.mu.Lock()
	cmd, done := c.cmd, c.exited
	c.mu.Unlock()
	if cmd != nil {
		// SIGQUIT: immediate shutdown; the data is thrown away anyway.
		syscall.Kill(cmd.Process.Pid, syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		c.mu.Lock()
		c.log.Close()
		c.cmd = nil
		c.mu.Unlock()
	}
	os.RemoveAll(c.Dir)
}
