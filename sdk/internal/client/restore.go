package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// restoreOnPlugin runs Restore of keyed backend id in the plugin, answering its reads from
// state: each request gets the next chunk of at most 1 MiB.
func restoreOnPlugin(ctx context.Context, c pb.StateBackendClient, id uint64, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.Restore(ctx)
	if err != nil {
		return convert.Errors.FromStatus(err)
	}
	// Send errors show up as the error of the next Recv.
	_ = st.Send(&pb.RestoreHostMessage{Msg: &pb.RestoreHostMessage_Start{Start: &pb.RestoreStart{BackendId: id, Handles: convert.KeyedHandlesToProto(handles)}}})
	readers := map[uint64]*aheadReader{}
	defer func() {
		for _, r := range readers {
			r.close()
		}
	}()
	reply := func(m *pb.RestoreHostMessage) { _ = st.Send(m) }
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return errors.New("restore: the plugin ended it without a result")
		}
		if err != nil {
			return convert.Errors.FromStatus(err)
		}
		switch x := m.Msg.(type) {
		case *pb.RestorePluginMessage_Open:
			rid := x.Open.ReadId
			h := convert.StreamHandleFromProto(x.Open.Handle)
			if path := localPath(ctx, state, h, x.Open.LocalOk); path != "" {
				reply(&pb.RestoreHostMessage{Msg: &pb.RestoreHostMessage_Opened{Opened: &pb.ReadOpened{ReadId: rid, LocalPath: path}}})
				continue
			}
			var rc io.ReadCloser
			if state == nil {
				err = fmt.Errorf("restore: no state reader given: %w", sdk.ErrInvalidArgument)
			} else {
				rc, err = state.Open(ctx, h)
			}
			if err == nil {
				readers[rid] = readAhead(ctx, rc)
			}
			reply(&pb.RestoreHostMessage{Msg: &pb.RestoreHostMessage_Opened{Opened: &pb.ReadOpened{ReadId: rid, Error: convert.Errors.ToProto(err)}}})
		case *pb.RestorePluginMessage_Next:
			rid := x.Next.ReadId
			d := &pb.ReadData{ReadId: rid}
			if r := readers[rid]; r == nil {
				d.Error = convert.Errors.ToProto(fmt.Errorf("state read %d is not open: %w", rid, sdk.ErrInvalidArgument))
			} else if c, ok := <-r.chunks; !ok {
				d.Eof = true
			} else {
				d.Data, d.Eof, d.Error = c.data, c.eof, convert.Errors.ToProto(c.err)
			}
			reply(&pb.RestoreHostMessage{Msg: &pb.RestoreHostMessage_Data{Data: d}})
		case *pb.RestorePluginMessage_Close:
			if r := readers[x.Close.ReadId]; r != nil {
				delete(readers, x.Close.ReadId)
				r.close()
			}
		case *pb.RestorePluginMessage_Done:
			_ = st.CloseSend()
			for {
				if _, err := st.Recv(); err != nil {
					break
				}
			}
			return convert.Errors.FromProto(x.Done.Error)
		}
	}
}

// localPath returns the local file the plugin may read h from itself, or "" when it is to
// pull the bytes through the host: the plugin cannot read files (localOK unset), state
// locates no local files, or h is not one. A locator that fails is not an error here: the bytes can still
// come through the host, which reports the failure if they cannot.
func localPath(ctx context.Context, state sdk.StateReader, h sdk.StreamStateHandle, localOK bool) string {
	l, ok := state.(sdk.LocalStateLocator)
	if !ok || !localOK || h.Ref == "" {
		return ""
	}
	p, err := l.LocalStatePath(ctx, h)
	if err != nil {
		return ""
	}
	return p
}

// readAheadChunks is how many chunks a restore reads ahead of the plugin per handle, so
// reading from the storage overlaps sending to the plugin and the plugin's own work.
const readAheadChunks = 4

// readChunk is one chunk read ahead.
type readChunk struct {
	data []byte
	eof  bool
	err  error
}

// aheadReader is a handle being read ahead for the plugin.
type aheadReader struct {
	rc     io.ReadCloser
	chunks <-chan readChunk
	stop   context.CancelFunc
}

// readAhead reads rc in chunks of wire.ChunkSize into a channel, readAheadChunks deep,
// until the end, an error, or ctx is done; it closes the channel when it stops.
func readAhead(ctx context.Context, rc io.ReadCloser) *aheadReader {
	ctx, stop := context.WithCancel(ctx)
	ch := make(chan readChunk, readAheadChunks)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, wire.ChunkSize)
			n, err := io.ReadFull(rc, buf)
			c := readChunk{data: buf[:n], err: err}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				c.eof, c.err = true, nil
			}
			select {
			case ch <- c:
			case <-ctx.Done():
				return
			}
			if c.eof || c.err != nil {
				return
			}
		}
	}()
	return &aheadReader{rc: rc, chunks: ch, stop: stop}
}

// close stops reading ahead, waits for the reading goroutine, and closes the reader.
func (r *aheadReader) close() {
	r.stop()
	for range r.chunks {
	}
	_ = r.rc.Close()
}
