package redlock

import (
	"crypto/rand"
	"encoding/base64"
)

// tokenBytes is 192 bits of CSPRNG output; the contract asks for at least 128.
const tokenBytes = 24

// newToken makes a lease token on the client side: 32 characters of base64url, no padding.
// A client that chooses its token before the first Acquire can retry that Acquire after a lost
// answer without leaking a lock or blocking on itself: the server refreshes the lease it holds.
func newToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
