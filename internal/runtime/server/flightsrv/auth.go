package flightsrv

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
)

// Metadata keys that carry credentials.
const (
	metadataAuthorization = "authorization"
	metadataAPIKey        = "x-api-key"
)

const (
	msgNoCredentials = "this runtime requires an API key: handshake with Basic credentials whose password is the key " +
		"and send the returned authorization: Bearer <token> on every call, or send authorization: Bearer <key> " +
		"or x-api-key: <key> (the keys are runtime.auth.api-key.keys of its spicepod)"
	msgReadOnly = "this API key is read-only: the call would change the runtime's state and needs a read-write key; " +
		"list one in runtime.auth.api-key.keys of the runtime's spicepod with the :rw suffix (e.g. ${env:ADMIN_KEY}:rw), " +
		"and handshake with it or send it"
	msgBadCredentials = "invalid credentials: the API key or bearer token is none this runtime accepts " +
		"(the keys are runtime.auth.api-key.keys of its spicepod; a token from another run of the runtime is void: handshake again)"
)

// throttlePort names the Flight port in the wrong-key log.
const throttlePort = "flight"

// tap authenticates a call from its headers when a stream opens, before any
// of its messages is read: a call without a valid key costs the server its
// headers only, whatever it sends after them. Health checks pass without a
// key. A source that has sent too many wrong keys is refused before its
// credentials are checked (apikey.Throttle). A call that authenticates lifts
// its connection's pre-authentication budget (conns.go).
func (s *Server) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if strings.HasPrefix(info.FullMethodName, healthPrefix) {
		return ctx, nil
	}
	if s.keys.Empty() {
		return withAccess(ctx, apikey.ReadWrite), nil
	}
	addr := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		addr = p.Addr.String()
	}
	now := time.Now()
	if hasCredentials(info.Header) {
		if wait, ok := s.Throttle.Allow(addr, throttlePort, now); !ok {
			return nil, status.Error(codes.ResourceExhausted, throttledMessage(wait))
		}
	}
	a, err := s.authenticate(ctx)
	if err != nil {
		if hasCredentials(info.Header) {
			s.Throttle.Failed(addr, throttlePort, now)
		}
		return nil, err
	}
	s.conns.trust(addr)
	return withAccess(ctx, a), nil
}

// throttledMessage tells a source over its wrong-key budget when to retry.
func throttledMessage(wait time.Duration) string {
	return fmt.Sprintf("too many wrong API keys from this address: try again in %d s "+
		"(after a burst of wrong keys an address gets one attempt a second; check the key the client sends)",
		int(math.Ceil(wait.Seconds())))
}

// hasCredentials reports whether a call's headers carry any credentials.
func hasCredentials(md metadata.MD) bool {
	return len(md.Get(metadataAuthorization)) > 0 || len(md.Get(metadataAPIKey)) > 0
}

// authenticate checks the credentials of a call when the server has API keys
// and returns the access they grant; without keys every call has read-write
// access. Accepted: authorization: Bearer <the token of a handshake> or <a
// key>; authorization: Basic with a key as password; x-api-key: <a key>. When
// a call carries several, the highest access wins.
func (s *Server) authenticate(ctx context.Context) (apikey.Access, error) {
	if s.keys.Empty() {
		return apikey.ReadWrite, nil
	}
	// ValueFromIncomingContext copies one key's values, not the whole metadata.
	seen := false
	got := apikey.None
	for _, v := range metadata.ValueFromIncomingContext(ctx, metadataAuthorization) {
		seen = true
		scheme, cred, _ := strings.Cut(strings.TrimSpace(v), " ")
		cred = strings.TrimSpace(cred)
		switch {
		case strings.EqualFold(scheme, "Bearer"):
			got = max(got, s.tokenAccess(cred), s.keys.Access(cred))
		case strings.EqualFold(scheme, "Basic"):
			if _, password, ok := decodeBasic(cred); ok {
				got = max(got, s.keys.Access(password))
			}
		}
	}
	for _, v := range metadata.ValueFromIncomingContext(ctx, metadataAPIKey) {
		seen = true
		got = max(got, s.keys.Access(strings.TrimSpace(v)))
	}
	switch {
	case got != apikey.None:
		return got, nil
	case !seen:
		return apikey.None, status.Error(codes.Unauthenticated, msgNoCredentials)
	}
	return apikey.None, status.Error(codes.Unauthenticated, msgBadCredentials)
}

// handshakeAuth checks the credentials of a Handshake. Without API keys any
// well-formed Basic credentials pass, as before; with keys the call must carry
// one (see authenticate), whose access the answer's bearer token then carries.
func (s *Server) handshakeAuth(ctx context.Context) (apikey.Access, error) {
	if s.keys.Empty() {
		return apikey.ReadWrite, checkBasic(ctx)
	}
	if a, ok := accessOf(ctx); ok {
		return a, nil
	}
	return s.authenticate(ctx)
}

// tokenAccess returns the access a handshake's bearer token stands for: each
// level has its own random token per run of the server.
func (s *Server) tokenAccess(t string) apikey.Access {
	if t == "" {
		return apikey.None
	}
	ro := subtle.ConstantTimeCompare([]byte(t), []byte(s.tokens[apikey.ReadOnly]))
	rw := subtle.ConstantTimeCompare([]byte(t), []byte(s.tokens[apikey.ReadWrite]))
	return apikey.Access(subtle.ConstantTimeSelect(rw, int(apikey.ReadWrite), subtle.ConstantTimeSelect(ro, int(apikey.ReadOnly), int(apikey.None))))
}

// accessKey is the call context's key for the caller's apikey.Access.
type accessKey struct{}

func withAccess(ctx context.Context, a apikey.Access) context.Context {
	return context.WithValue(ctx, accessKey{}, a)
}

// accessOf returns the access tap recorded for the call.
func accessOf(ctx context.Context) (apikey.Access, bool) {
	a, ok := ctx.Value(accessKey{}).(apikey.Access)
	return a, ok
}

// requireWrite refuses with PermissionDenied a call whose credentials are
// read-only: it guards the calls that would change the runtime's state.
func requireWrite(ctx context.Context) error {
	if a, _ := ctx.Value(accessKey{}).(apikey.Access); a.CanWrite() {
		return nil
	}
	return status.Error(codes.PermissionDenied, msgReadOnly)
}

// decodeBasic reads base64 of user:password.
func decodeBasic(cred string) (user, password string, ok bool) {
	b, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(cred)
	}
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(b), ":")
}

// healthPrefix is gRPC health checking's service: open without credentials, as
// /health and /v1/ready are on HTTP, so probes and the api's balancer need no key.
// It tells only whether the runtime serves.
const healthPrefix = "/grpc.health.v1.Health/"

// authUnary and authStream refuse calls without valid credentials, except
// Handshake, which checks its own, and health checks. tap has checked them
// already and recorded their access; these check again any call it did not.
// Both record the access of the credentials in the call's context for
// requireWrite.
func (s *Server) authUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if _, ok := accessOf(ctx); !ok && !strings.HasPrefix(info.FullMethod, healthPrefix) {
		a, err := s.authenticate(ctx)
		if err != nil {
			return nil, err
		}
		ctx = withAccess(ctx, a)
	}
	return handler(ctx, req)
}

func (s *Server) authStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if _, ok := accessOf(ss.Context()); !ok && methodName(info.FullMethod) != "Handshake" && !strings.HasPrefix(info.FullMethod, healthPrefix) {
		a, err := s.authenticate(ss.Context())
		if err != nil {
			return err
		}
		ss = accessStream{ServerStream: ss, ctx: withAccess(ss.Context(), a)}
	}
	return handler(srv, ss)
}

// accessStream is a stream whose context carries the caller's access.
type accessStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (a accessStream) Context() context.Context { return a.ctx }
