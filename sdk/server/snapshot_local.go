package server

import (
	"bufio"
	"context"
	"fmt"
	"hash"
	"os"

	"github.com/flowstate/flowstate/sdk"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// localWriteBuffer collects a snapshot's small writes before they reach its local file.
const localWriteBuffer = 1 << 20

// localOutStream is a state stream of the host whose bytes the plugin writes to a local
// file itself (see LocalStateFactory), counting their size and CRC-32C, which it hands to
// the host when it closes the stream.
type localOutStream struct {
	h      *hostStreams
	id     uint64
	f      *os.File
	w      *bufio.Writer
	crc    hash.Hash32
	n      int64
	err    error // the first write failure; the stream is dead after it
	closed bool
}

func newLocalOutStream(h *hostStreams, id uint64, f *os.File) *localOutStream {
	return &localOutStream{h: h, id: id, f: f, w: bufio.NewWriterSize(f, localWriteBuffer), crc: wire.NewChecksum()}
}

func (s *localOutStream) Write(p []byte) (int, error) {
	if s.closed {
		return 0, fmt.Errorf("state stream %d is closed", s.id)
	}
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.crc.Write(p[:n])
	s.n += int64(n)
	if err != nil {
		s.err = fmt.Errorf("write state file: %w", err) // err names the file
		return n, s.err
	}
	return n, nil
}

// CloseAndGetHandle flushes and closes the file, then has the host publish it.
func (s *localOutStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	if s.closed {
		return sdk.StreamStateHandle{}, fmt.Errorf("state stream %d is closed", s.id)
	}
	err := s.err
	if err == nil {
		if err = s.w.Flush(); err != nil {
			err = fmt.Errorf("write state file: %w", err)
		}
	}
	if cerr := s.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close state file: %w", cerr)
	}
	s.closed = true
	if err != nil {
		s.discard()
		return sdk.StreamStateHandle{}, err
	}
	return s.h.closeStream(ctx, &pb.CloseStream{StreamId: s.id, Keep: true, Size: s.n, Checksum: s.crc.Sum32()})
}

// Close closes the file and has the host delete it; after CloseAndGetHandle it does
// nothing.
func (s *localOutStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	_ = s.f.Close()
	s.discard()
	return nil
}

// discard has the host delete the file; it does not answer.
func (s *localOutStream) discard() {
	_ = s.h.send(&pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Close{Close: &pb.CloseStream{StreamId: s.id}}})
}
