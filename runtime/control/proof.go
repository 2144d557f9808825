package control

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/flowstate/flowstate/sdk/layout"
)

// proofPrefix starts the name of the file by which a savepoint request proves that its
// sender can write to its target directory as the runner's user (SavepointRequest.Proof).
const proofPrefix = ".flowstate-savepoint-request-"

// proofLen is the length of a proof: 32 hex digits.
const proofLen = 32

// ProveTarget writes, in the deepest existing directory of the local path dir (dir itself
// when it exists, else the ancestor below which the runner would create it), a proof file
// readable by its owner only, that only someone who can write there could have made. It
// returns the proof to send as SavepointRequest.Proof and a function that removes the file
// once the request is answered. It creates nothing else.
func ProveTarget(dir string) (proof string, remove func(), err error) {
	b := make([]byte, proofLen/2)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("savepoint target '%s': %w", dir, err)
	}
	proof = hex.EncodeToString(b)
	at, err := proofDir(dir)
	if err != nil {
		return "", nil, err
	}
	p := filepath.Join(at, proofPrefix+proof)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("savepoint target '%s': write the file that proves the request's right to it: %w", dir, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(p)
		return "", nil, fmt.Errorf("savepoint target '%s': %w", dir, err)
	}
	return proof, func() { os.Remove(p) }, nil
}

// CheckProof returns nil when the deepest existing directory of the local path dir (see
// ProveTarget) holds the file of proof as a regular file owned by this process's user,
// and an error saying what is missing otherwise.
func CheckProof(dir, proof string) error {
	if _, err := hex.DecodeString(proof); err != nil || len(proof) != proofLen {
		return errors.New("its proof is not one runner savepoint makes")
	}
	at, err := proofDir(dir)
	if err != nil {
		return err
	}
	p := filepath.Join(at, proofPrefix+proof)
	fi, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("no proof file '%s' is there", p)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("its proof file '%s' is not a regular file of the runner's user", p)
	}
	return nil
}

// proofDir is where the proof of a request for the local directory dir lies: the deepest
// existing directory of dir's real path.
func proofDir(dir string) (string, error) {
	real, err := layout.RealPath(dir)
	if err != nil {
		return "", fmt.Errorf("savepoint target '%s': %w", dir, err)
	}
	for d := real; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			if !fi.IsDir() {
				return "", fmt.Errorf("savepoint target '%s': '%s' is not a directory", dir, d)
			}
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("savepoint target '%s': no directory of it exists", dir)
		}
	}
}
