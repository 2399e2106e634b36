package flightsrv

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
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
	msgBadCredentials = "invalid credentials: the API key or bearer token is none this runtime accepts " +
		"(the keys are runtime.auth.api-key.keys of its spicepod; a token from another run of the runtime is void: handshake again)"
)

// authenticate checks the credentials of a call when the server has API keys.
// Accepted: authorization: Bearer <the token of a handshake> or <a key>;
// authorization: Basic with a key as password; x-api-key: <a key>.
func (s *Server) authenticate(ctx context.Context) error {
	if s.keys.Empty() {
		return nil
	}
	// ValueFromIncomingContext copies one key's values, not the whole metadata.
	seen := false
	for _, v := range metadata.ValueFromIncomingContext(ctx, metadataAuthorization) {
		seen = true
		scheme, cred, _ := strings.Cut(strings.TrimSpace(v), " ")
		cred = strings.TrimSpace(cred)
		switch {
		case strings.EqualFold(scheme, "Bearer"):
			if s.validToken(cred) || s.keys.Valid(cred) {
				return nil
			}
		case strings.EqualFold(scheme, "Basic"):
			if _, password, ok := decodeBasic(cred); ok && s.keys.Valid(password) {
				return nil
			}
		}
	}
	for _, v := range metadata.ValueFromIncomingContext(ctx, metadataAPIKey) {
		seen = true
		if s.keys.Valid(strings.TrimSpace(v)) {
			return nil
		}
	}
	if !seen {
		return status.Error(codes.Unauthenticated, msgNoCredentials)
	}
	return status.Error(codes.Unauthenticated, msgBadCredentials)
}

// handshakeAuth checks the credentials of a Handshake. Without API keys any
// well-formed Basic credentials pass, as before; with keys the call must carry
// one (see authenticate), which the answer's bearer token then stands for.
func (s *Server) handshakeAuth(ctx context.Context) error {
	if s.keys.Empty() {
		return checkBasic(ctx)
	}
	return s.authenticate(ctx)
}

func (s *Server) validToken(t string) bool {
	return t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
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
// Handshake, which checks its own, and health checks.
func (s *Server) authUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !strings.HasPrefix(info.FullMethod, healthPrefix) {
		if err := s.authenticate(ctx); err != nil {
			return nil, err
		}
	}
	return handler(ctx, req)
}

func (s *Server) authStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if methodName(info.FullMethod) != "Handshake" && !strings.HasPrefix(info.FullMethod, healthPrefix) {
		if err := s.authenticate(ss.Context()); err != nil {
			return err
		}
	}
	return handler(srv, ss)
}
