// Package webpushtest is a fake push service for tests: a TLS server on
// loopback that takes Web Push requests as a real one does, and a
// browser's subscription keys to decrypt them with (RFC 8291 aes128gcm)
// and check their VAPID signature (RFC 8292).
package webpushtest

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Push is one request the fake push service received.
type Push struct {
	Path   string
	Header http.Header
	Body   []byte
}

// Service is a fake push service. Create it with New; Close it.
type Service struct {
	*httptest.Server
	mu     sync.Mutex
	pushes []Push
	status int // the next answers' status (0: 201 Created)
}

// New starts a fake push service over TLS on 127.0.0.1.
func New() *Service {
	s := &Service{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		s.mu.Lock()
		s.pushes = append(s.pushes, Push{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		status := s.status
		s.mu.Unlock()
		if status == 0 {
			status = http.StatusCreated
		}
		w.WriteHeader(status)
	}))
	return s
}

// Answer makes the service answer every later push with status (a gone
// subscription: 404 or 410).
func (s *Service) Answer(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// Pushes are the pushes received so far.
func (s *Service) Pushes() []Push {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Push(nil), s.pushes...)
}

// Browser is a browser's push subscription: its keys, and its endpoint
// on the service.
type Browser struct {
	Endpoint string
	key      *ecdh.PrivateKey
	auth     []byte
}

// Subscribe makes a subscription on the service, as PushManager.subscribe
// gives a browser one.
func (s *Service) Subscribe(name string) *Browser {
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	return &Browser{Endpoint: s.URL + "/push/" + name, key: key, auth: auth}
}

// JSON is the subscription as the browser's PushSubscription.toJSON()
// gives it.
func (b *Browser) JSON() map[string]any {
	enc := base64.RawURLEncoding.EncodeToString
	return map[string]any{"endpoint": b.Endpoint, "expirationTime": nil,
		"keys": map[string]string{"p256dh": enc(b.key.PublicKey().Bytes()), "auth": enc(b.auth)}}
}

// Decrypt reads a push's aes128gcm body (RFC 8188 and 8291) with the
// browser's keys.
func (b *Browser) Decrypt(p Push) ([]byte, error) {
	if p.Header.Get("Content-Encoding") != "aes128gcm" {
		return nil, fmt.Errorf("the Content-Encoding is %q, want aes128gcm", p.Header.Get("Content-Encoding"))
	}
	body := p.Body
	if len(body) < 21 {
		return nil, errors.New("body shorter than its header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if len(body) < 21+idlen || idlen != 65 {
		return nil, fmt.Errorf("key ID of %d bytes, want the server's 65-byte key", idlen)
	}
	serverKey, err := ecdh.P256().NewPublicKey(body[21 : 21+idlen])
	if err != nil {
		return nil, err
	}
	record := body[21+idlen:]
	if uint32(len(record)) > rs {
		return nil, fmt.Errorf("record of %d bytes over the record size %d", len(record), rs)
	}
	secret, err := b.key.ECDH(serverKey)
	if err != nil {
		return nil, err
	}
	info := append(append([]byte("WebPush: info\x00"), b.key.PublicKey().Bytes()...), serverKey.Bytes()...)
	ikm, err := hkdf.Key(sha256.New, secret, b.auth, string(info), 32)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, record, nil)
	if err != nil {
		return nil, fmt.Errorf("decrypting: %w", err)
	}
	// The last record ends with 0x02, then padding zeros.
	i := bytes.LastIndexByte(plain, 2)
	if i < 0 || len(bytes.Trim(plain[i+1:], "\x00")) != 0 {
		return nil, errors.New("no last-record delimiter")
	}
	return plain[:i], nil
}

// VAPID checks a push's Authorization header (RFC 8292): a JWT signed
// ES256 with the public key it names, which must be publicKey (base64url),
// for the audience aud (the push service's origin), not expired. It
// returns the JWT's claims.
func VAPID(p Push, publicKey, aud string) (map[string]any, error) {
	h := p.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(h, "vapid ")
	if !ok {
		return nil, fmt.Errorf("the Authorization header %q is not vapid", h)
	}
	var t, k string
	for _, part := range strings.Split(rest, ",") {
		part = strings.TrimSpace(part)
		if v, ok := strings.CutPrefix(part, "t="); ok {
			t = v
		} else if v, ok := strings.CutPrefix(part, "k="); ok {
			k = v
		}
	}
	if strings.TrimRight(k, "=") != strings.TrimRight(publicKey, "=") {
		return nil, fmt.Errorf("k=%s is not the server's key %s", k, publicKey)
	}
	pub, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(k, "="))
	if err != nil || len(pub) != 65 {
		return nil, errors.New("k is not a P-256 point")
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 {
		return nil, errors.New("t is not a JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, errors.New("the JWT's signature is not ES256")
	}
	key, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pub)
	if err != nil {
		return nil, fmt.Errorf("k: %w", err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(key, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, errors.New("the JWT's signature does not verify with k")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		return nil, err
	}
	if claims["aud"] != aud {
		return claims, fmt.Errorf("aud %v, want %s", claims["aud"], aud)
	}
	if exp, _ := claims["exp"].(float64); time.Unix(int64(exp), 0).Before(time.Now()) {
		return claims, errors.New("the JWT has expired")
	}
	return claims, nil
}
