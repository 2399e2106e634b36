package pgtest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

const (
	// DefaultImage is the image used when POSTGRES_IMAGE is unset.
	DefaultImage = "cqrs-postgres:15"

	// DefaultUser, DefaultPassword and DefaultDatabase are the superuser and the
	// database every container starts with.
	DefaultUser     = "postgres"
	DefaultPassword = "postgres"
	DefaultDatabase = "postgres"

	// DefaultStartTimeout bounds how long a container may take to accept
	// connections, on first start (initdb) and after Start.
	DefaultStartTimeout = 2 * time.Minute

	// DefaultStopTimeout is how long Stop lets Postgres shut down before the
	// container is killed.
	DefaultStopTimeout = 10 * time.Second

	// LabelKey labels every container pgtest starts, so leftovers of a killed test
	// binary can be found: docker ps -a --filter label=org.cqrs-spice.pgtest.
	LabelKey = "org.cqrs-spice.pgtest"
)

// serverArgs are the server settings of every container: logical replication
// for the runtime's change streams, and no fsync because test data is disposable.
var serverArgs = []string{
	"-c", "wal_level=logical",
	"-c", "max_replication_slots=20",
	"-c", "max_wal_senders=20",
	"-c", "fsync=off",
}

var containerPort = network.MustParsePort("5432/tcp")

// disableRyuk sets TESTCONTAINERS_RYUK_DISABLED once, before testcontainers reads
// its configuration (which it does once per process).
var disableRyuk sync.Once

// ImageNotFoundError reports that the Postgres image is not in the local Docker
// image store. Nothing is pulled: the build machines reach no registry.
type ImageNotFoundError struct {
	Image string
}

func (e *ImageNotFoundError) Error() string {
	msg := "image " + e.Image + " not found: run `make postgres-image`"
	if e.Image != DefaultImage {
		msg += " (or pull it, or unset POSTGRES_IMAGE)"
	}
	return msg
}

// Image returns the Postgres image to start: POSTGRES_IMAGE, or DefaultImage.
func Image() string {
	if img := os.Getenv("POSTGRES_IMAGE"); img != "" {
		return img
	}
	return DefaultImage
}

// Postgres is a running Postgres container. DSN connects as the superuser to
// Database over TCP, with sslmode=disable. Host and Port do not change across
// Stop and Start.
type Postgres struct {
	DSN      string
	Host     string
	Port     int
	User     string
	Password string
	Database string

	container *testcontainers.DockerContainer
	seq       atomic.Int64 // numbers the databases of NewDatabase
}

// Start starts a fresh Postgres for tb and returns it once it accepts
// connections; the container is terminated when tb's test ends. It fails tb if
// Docker is unreachable or the image is missing, and skips it under -short.
func Start(tb testing.TB) *Postgres {
	tb.Helper()
	return startFor(tb, nil)
}

// TLS is a server certificate for StartTLS: PEM files on the host.
type TLS struct {
	CertFile string // the server's certificate (and any intermediates)
	KeyFile  string // its private key
}

// StartTLS is Start with ssl=on, serving the certificate of t. Plain connections
// stay allowed, so DSN (sslmode=disable) still works; a client asks for TLS with
// its own sslmode (DSNFor's result with sslmode replaced, say).
func StartTLS(tb testing.TB, t TLS) *Postgres {
	tb.Helper()
	return startFor(tb, &t)
}

func startFor(tb testing.TB, t *TLS) *Postgres {
	tb.Helper()
	skipShort(tb)
	ClearLibpqEnv()
	ctx, cancel := context.WithTimeout(context.Background(), DefaultStartTimeout)
	defer cancel()
	p, err := start(ctx, tclog.TestLogger(tb), t)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Terminate(ctx); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return p
}

// StartMain starts one Postgres for a whole test package and returns it with
// the function that terminates it. On error nothing is left running. Shared
// builds on it; call it directly for a lifetime Shared does not fit.
func StartMain() (*Postgres, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultStartTimeout)
	defer cancel()
	p, err := start(ctx, tclog.NewNoopLogger(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("pgtest: %w", err)
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Terminate(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		}
	}
	return p, stop, nil
}

// DSNFor returns the DSN of another database in the same server.
func (p *Postgres) DSNFor(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(p.User, p.Password),
		Host:     net.JoinHostPort(p.Host, strconv.Itoa(p.Port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Stop stops the container, as an outage would: clients lose their connections
// and new ones are refused until Start. Data, slots and the port are kept.
func (p *Postgres) Stop(ctx context.Context) error {
	timeout := DefaultStopTimeout
	if err := p.container.Stop(ctx, &timeout); err != nil {
		return fmt.Errorf("stop postgres: %w", err)
	}
	return nil
}

// Start starts the container again after Stop and returns once Postgres accepts
// connections at the same DSN.
func (p *Postgres) Start(ctx context.Context) error {
	if err := p.container.Start(ctx); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	return nil
}

// Terminate removes the container and its data. Start and StartMain arrange for
// it; call it directly only for a Postgres whose end a test must control.
func (p *Postgres) Terminate(ctx context.Context) error {
	if err := p.container.Terminate(ctx); err != nil {
		return fmt.Errorf("terminate postgres: %w", err)
	}
	return nil
}

func start(ctx context.Context, logger tclog.Logger, t *TLS) (*Postgres, error) {
	disableRyuk.Do(func() {
		if _, ok := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !ok {
			// Ryuk's image cannot be pulled offline; we terminate containers ourselves.
			os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
		}
	})
	image := Image()
	bindIP, host, err := checkDocker(ctx, image)
	if err != nil {
		return nil, err
	}
	// A fixed host port, so that the DSN survives Stop and Start (Docker assigns
	// a new random one on every start otherwise). Another process may take the
	// port between our probe and Docker's bind: try again with another.
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		p, err := run(ctx, image, bindIP, host, port, logger, t)
		if err == nil {
			return p, nil
		}
		if attempt == 3 || !isPortConflict(err) {
			return nil, err
		}
	}
}

// checkDocker makes sure the daemon answers and holds image, and tells where the
// container's port is to be published and reached: loopback for a local daemon
// (testcontainers' own guess picks the default gateway when the tests run inside a
// container, where the daemon of this machine is not), the daemon's host for a
// remote one, TESTCONTAINERS_HOST_OVERRIDE when set.
func checkDocker(ctx context.Context, image string) (bindIP netip.Addr, host string, err error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return netip.Addr{}, "", fmt.Errorf("connect to docker (is the daemon running?): %w", err)
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, image); err != nil {
		if errdefs.IsNotFound(err) {
			return netip.Addr{}, "", &ImageNotFoundError{Image: image}
		}
		return netip.Addr{}, "", fmt.Errorf("inspect image %s: %w", image, err)
	}
	host = "127.0.0.1"
	u, err := url.Parse(cli.DaemonHost())
	if err == nil && u.Scheme != "unix" && u.Scheme != "npipe" && u.Hostname() != "" {
		host = u.Hostname()
	}
	if h := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE"); h != "" {
		host = h
	}
	if host == "127.0.0.1" {
		bindIP = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return bindIP, host, nil
}

func run(ctx context.Context, image string, bindIP netip.Addr, host string, port int, logger tclog.Logger, t *TLS) (*Postgres, error) {
	p := &Postgres{
		Host:     host,
		Port:     port,
		User:     DefaultUser,
		Password: DefaultPassword,
		Database: DefaultDatabase,
	}
	p.DSN = p.DSNFor(p.Database)
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image: image,
			Env: map[string]string{
				"POSTGRES_USER":     p.User,
				"POSTGRES_PASSWORD": p.Password,
				"POSTGRES_DB":       p.Database,
			},
			Cmd:          append([]string{"postgres"}, serverArgs...),
			ExposedPorts: []string{containerPort.String()},
			Labels:       map[string]string{LabelKey: "true"},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{
					containerPort: {{HostIP: bindIP, HostPort: strconv.Itoa(port)}},
				}
			},
			WaitingFor: &readyStrategy{postgres: p, timeout: DefaultStartTimeout},
		},
		Started: true,
		Logger:  logger,
	}
	if t != nil {
		withTLS(&req.ContainerRequest, *t)
	}
	c, err := testcontainers.GenericContainer(ctx, req)
	if c != nil {
		p.container, _ = c.(*testcontainers.DockerContainer)
	}
	if err != nil {
		if p.container != nil {
			_ = p.container.Terminate(context.WithoutCancel(ctx))
		}
		return nil, fmt.Errorf("start %s: %w", image, err)
	}
	if p.container == nil {
		_ = c.Terminate(ctx)
		return nil, fmt.Errorf("start %s: unexpected container type %T", image, c)
	}
	return p, nil
}

// tlsDir is where the container gets the certificate; Postgres reads the
// copies in tlsCopyDir, which the entrypoint makes owned by postgres with the
// key at mode 0600, as Postgres requires.
const (
	tlsDir     = "/pgtest-tls"
	tlsCopyDir = "/var/lib/postgresql/tls"
)

func withTLS(req *testcontainers.ContainerRequest, t TLS) {
	req.Files = append(req.Files,
		testcontainers.ContainerFile{HostFilePath: t.CertFile, ContainerFilePath: tlsDir + "/server.crt", FileMode: 0o644},
		testcontainers.ContainerFile{HostFilePath: t.KeyFile, ContainerFilePath: tlsDir + "/server.key", FileMode: 0o644})
	req.Entrypoint = []string{"sh", "-c", "mkdir -p " + tlsCopyDir +
		" && install -o postgres -g postgres -m 0644 " + tlsDir + "/server.crt " + tlsCopyDir + "/server.crt" +
		" && install -o postgres -g postgres -m 0600 " + tlsDir + "/server.key " + tlsCopyDir + "/server.key" +
		` && exec docker-entrypoint.sh "$@"`, "sh"}
	req.Cmd = append(req.Cmd, "-c", "ssl=on",
		"-c", "ssl_cert_file="+tlsCopyDir+"/server.crt", "-c", "ssl_key_file="+tlsCopyDir+"/server.key")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func isPortConflict(err error) bool {
	s := err.Error()
	return strings.Contains(s, "address already in use") || strings.Contains(s, "port is already allocated")
}
