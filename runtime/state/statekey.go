package state

import (
	"fmt"

	"github.com/flowstate/flowstate/sdk"
)

// AppendStateKey appends to dst the backend key of state name for record key key in key
// group group, laid out as a Store writes it: the key group as a big-endian uint16, one
// byte with the length of the state name, the name, then the record key. Tools that
// rewrite checkpoints offline build keys with it.
func AppendStateKey(dst []byte, group int, name string, key []byte) []byte {
	return stateKey(dst, group, name, key)
}

// SplitStateKey splits a backend key a Store wrote into its key group, state name and
// record key (the latter shares k's bytes). A key too short for its own layout is an
// error naming its length.
func SplitStateKey(k []byte) (group int, name string, key []byte, err error) {
	if len(k) < sdk.KeyGroupPrefixLen+1 {
		return 0, "", nil, fmt.Errorf("state key of %d bytes: shorter than a key group and a state name length", len(k))
	}
	n := int(k[sdk.KeyGroupPrefixLen])
	rest := k[sdk.KeyGroupPrefixLen+1:]
	if n == 0 || n > len(rest) {
		return 0, "", nil, fmt.Errorf("state key of %d bytes: state name length %d does not fit", len(k), n)
	}
	return sdk.KeyGroupOf(k), string(rest[:n]), rest[n:], nil
}
